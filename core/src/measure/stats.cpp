#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kreg {
namespace {

// P(Bin(n, 1/2) = r), in log space so that n in the thousands does not underflow 2^-n.
double binomial_half_pmf(int n, int r) {
    return std::exp(std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(double(n - r) + 1.0) +
                    double(n) * std::log(0.5));
}

}  // namespace

MedianInterval median_interval(std::vector<double> samples, double confidence) {
    MedianInterval ci;
    const int n = int(samples.size());
    if (n == 0) return ci;
    std::sort(samples.begin(), samples.end());
    // Coverage of [x(j), x(n+1-j)] (1-based) is 1 - 2 P(B <= j - 1); j = 1 is the whole range. The
    // cdf is summed term by term while j walks up: O(n) per interval.
    const double tail = (1.0 - confidence) / 2.0;
    int j = 1;
    double below = binomial_half_pmf(n, 0);  // P(B <= j - 1)
    if (below > tail) {                      // even the whole range does not reach the confidence
        ci.low = samples.front();
        ci.high = samples.back();
        ci.coverage = 1.0 - 2.0 * below;
        return ci;
    }
    while (j + 1 <= n / 2) {
        const double next_below = below + binomial_half_pmf(n, j);  // P(B <= j), for interval j + 1
        if (next_below > tail) break;
        ++j;
        below = next_below;
    }
    ci.exists = true;
    ci.low = samples[size_t(j - 1)];
    ci.high = samples[size_t(n - j)];
    ci.coverage = 1.0 - 2.0 * below;
    return ci;
}

double relative_half_width(const MedianInterval& interval, double median) {
    if (!interval.exists || !(median > 0)) return std::numeric_limits<double>::infinity();
    return 0.5 * (interval.high - interval.low) / median;
}

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
    const MedianInterval ci = median_interval(sorted);
    if (ci.exists) {
        s.median_ci_low_ms = ci.low;
        s.median_ci_high_ms = ci.high;
    }
    return s;
}

}  // namespace kreg
