#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kreg {

TimingStats compute_stats(const std::vector<double>& samples_ms) {
    TimingStats s;
    s.count = static_cast<int>(samples_ms.size());
    if (samples_ms.empty()) return s;
    std::vector<double> sorted = samples_ms;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    s.median_ms = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    s.min_ms = sorted.front();
    s.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(n);
    if (n > 1) {
        double sq = 0;
        for (double x : sorted) sq += (x - s.mean_ms) * (x - s.mean_ms);
        s.stddev_ms = std::sqrt(sq / double(n - 1));
    }
    s.cv = s.mean_ms > 0 ? s.stddev_ms / s.mean_ms : 0.0;
    return s;
}

}  // namespace kreg
