#include "grade/timing_claims.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace kreg {
namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t mid = v.size() / 2;
    return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

std::string ms(double v) {
    std::ostringstream s;
    s.precision(4);
    s << v << " ms";
    return s.str();
}

}  // namespace

double harness_allowance_ms(const std::vector<CheckedCall>& trusted_calls) {
    double largest = -1;
    for (const CheckedCall& c : trusted_calls)
        if (c.measured_ms) largest = std::max(largest, c.window_ms - *c.measured_ms);
    return largest < 0 ? std::numeric_limits<double>::infinity() : 1.5 * largest + 0.05;
}

TimingClaims TimingVerdict::evidence() const {
    return {claimed_median_ms, bound_median_ms, believed, allowance_ms};  // infinite allowance: "uncalibrated"
}

TimingVerdict judge_timing_claims(const Job& job, const Record& r, const std::vector<CheckedCall>& calls, double allowance_ms) {
    TimingVerdict v;
    v.allowance_ms = allowance_ms;
    const size_t untimed = 1 + size_t(std::max(0, job.settings.warmup));
    const size_t expected = untimed + r.samples_ms.size();
    if (calls.size() != expected) {
        v.violation = "its row reports " + std::to_string(r.samples_ms.size()) + " timed calls after " + std::to_string(untimed) +
                      " untimed ones, but it handed over " + std::to_string(calls.size()) + " outputs";
        return v;
    }
    std::vector<double> claimed, bounds;
    for (size_t i = 0; i < calls.size(); ++i) {
        const CheckedCall& c = calls[i];
        if (c.call != i) {
            v.violation = "handed over call " + std::to_string(c.call) + " in place of call " + std::to_string(i);
            return v;
        }
        if (i < untimed) {
            if (c.measured_ms) {
                v.violation = "claimed a time for untimed call " + std::to_string(i);
                return v;
            }
            continue;
        }
        const double sample = r.samples_ms[i - untimed];
        if (!c.measured_ms || std::fabs(*c.measured_ms - sample) > 1e-9 * std::max(1.0, std::fabs(sample))) {
            v.violation = "its row's timed sample " + std::to_string(i - untimed) + " (" + ms(sample) +
                          ") is not the time it handed over with that call";
            return v;
        }
        if (sample > c.window_ms * 1.02 + 0.05) {
            v.violation = "claimed " + ms(sample) + " for call " + std::to_string(i) + ", which the grader saw start and end within " +
                          ms(c.window_ms);
            return v;
        }
        claimed.push_back(sample);
        bounds.push_back(std::max(0.0, c.window_ms - allowance_ms));
    }
    v.claimed_median_ms = median(claimed);
    v.bound_median_ms = median(bounds);
    v.believed = v.claimed_median_ms >= v.bound_median_ms;
    return v;
}

}  // namespace kreg
