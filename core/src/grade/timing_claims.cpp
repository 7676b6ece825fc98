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

HarnessAllowance no_bound(std::string why) {
    HarnessAllowance none;
    none.no_bound = std::move(why);
    return none;
}

HarnessAllowance harness_allowance(const std::vector<CheckedCall>& trusted_calls, AllowanceRule rule) {
    std::vector<double> gaps;
    for (const CheckedCall& c : trusted_calls)
        if (c.measured_ms) gaps.push_back(std::max(0.0, c.window_ms - *c.measured_ms));
    if (gaps.empty()) return no_bound("the trusted kernel's calibration made no timed call");
    std::sort(gaps.begin(), gaps.end());
    HarnessAllowance a;
    if (rule == AllowanceRule::same_round) {
        // Measured under the round's own load: no margin for a load that changed since. The upper quartile,
        // not the median: a row is bounded by its quietest call, which must have a share at most the
        // allowance for the bound to stay below an honest kernel's time.
        a.allowance_ms = gaps[3 * gaps.size() / 4] + kAllowanceClockError_ms;
    } else {
        // The median, not the largest: on a loaded 2-core machine a third of the calls had the scheduler take
        // the core for 2-6 ms during the harness's part of their window (256^3: median 0.92 ms, smallest 0.84,
        // largest 6.1). Those delays belong to no call's work; one of them must not cancel every call's bound.
        // The margin is for a submission's calls whose harness share runs higher than the calibration's (another
        // kernel leaves the caches otherwise, the load changed since): honest transposes at 128^3 showed median
        // shares up to 1.25 x the calibration's median plus its spread.
        const double middle = gaps[gaps.size() / 2];
        a.allowance_ms = kAllowanceMedianFactor * middle + 2 * (middle - gaps.front()) + kAllowanceClockError_ms;
    }
    a.error_ms = a.allowance_ms - gaps.front();

    std::vector<double> cpu_gaps;
    for (const CheckedCall& c : trusted_calls)
        if (c.measured_ms && c.cpu_ms && c.call_cpu_ms) cpu_gaps.push_back(std::max(0.0, *c.cpu_ms - *c.call_cpu_ms));
    if (cpu_gaps.size() != gaps.size()) {
        a.no_cpu_bound = "the calibration's calls carry no CPU time of the worker";
    } else {
        std::sort(cpu_gaps.begin(), cpu_gaps.end());
        a.cpu_allowance_ms = cpu_gaps[3 * cpu_gaps.size() / 4] + kAllowanceClockError_ms;
    }
    return a;
}

TimingClaims TimingVerdict::evidence() const {
    TimingClaims e{claimed_median_ms, bound_median_ms, believed, allowance.allowance_ms, {}, {}, {}, {}, {}, {}, {}};
    e.claimed_cpu_median_ms = claimed_cpu_median_ms;
    if (allowance.bounds()) {
        e.harness_allowance_error_ms = allowance.error_ms;
        if (!allowance.calibration.empty()) e.calibration = allowance.calibration;
        e.bound_from = from_cpu_time ? "cpu_time" : "window";
        if (std::isfinite(allowance.cpu_allowance_ms)) e.harness_cpu_allowance_ms = allowance.cpu_allowance_ms;
        if (!no_cpu_bound.empty()) e.no_cpu_bound = no_cpu_bound;
    } else {
        e.no_bound = allowance.no_bound;
    }
    return e;
}

TimingVerdict judge_timing_claims(const Job& job, const Record& r, const std::vector<CheckedCall>& calls,
                                  const HarnessAllowance& allowance) {
    TimingVerdict v;
    v.allowance = allowance;
    const size_t untimed = 1 + size_t(std::max(0, job.settings.warmup));
    const size_t expected = untimed + r.samples_ms.size();
    if (calls.size() != expected) {
        v.violation = "its row reports " + std::to_string(r.samples_ms.size()) + " timed calls after " +
                      std::to_string(untimed) + " untimed ones, but it handed over " + std::to_string(calls.size()) +
                      " outputs";
        return v;
    }
    std::vector<double> claimed, bounds, claimed_cpu;
    // CPU time bounds the calls only when every timed one carries it: the worker ran on one CPU throughout.
    bool every_call_has_cpu = true;
    for (size_t i = untimed; i < calls.size(); ++i) every_call_has_cpu = every_call_has_cpu && calls[i].cpu_ms;
    if (!std::isfinite(allowance.cpu_allowance_ms))
        v.no_cpu_bound = allowance.no_cpu_bound.empty() ? "no CPU allowance was measured" : allowance.no_cpu_bound;
    else if (!every_call_has_cpu)
        v.no_cpu_bound = "the submission's calls carry no CPU time of its worker";
    const bool use_cpu = v.no_cpu_bound.empty();
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
            v.violation = "claimed " + ms(sample) + " for call " + std::to_string(i) +
                          ", which the grader saw start and end within " + ms(c.window_ms);
            return v;
        }
        claimed.push_back(sample);
        if (c.call_cpu_ms) claimed_cpu.push_back(*c.call_cpu_ms);
        // With the CPU time, the window is not used at all: on a loaded machine its allowance (the harness's share
        // of a window, waits included) is as noisy as the waits, and an allowance below a call's own waits puts the
        // window's bound above an honest kernel's time, which the CPU time's cannot be.
        bounds.push_back(use_cpu ? std::max(0.0, *c.cpu_ms - allowance.cpu_allowance_ms)
                                 : std::max(0.0, c.window_ms - allowance.allowance_ms));
    }
    v.claimed_median_ms = median(claimed);
    if (!claimed_cpu.empty() && claimed_cpu.size() == claimed.size()) v.claimed_cpu_median_ms = median(claimed_cpu);
    // The smallest call's bound, not their median: the scheduler only lengthens windows, so the quietest
    // call is the one whose bound is nearest its own time, and with three timed calls on a loaded machine
    // two delayed ones put the median bound above an honest kernel's time (a 0.04 ms transpose bounded at
    // 2.1 ms). A kernel whose timer lies is bounded by its quietest call all the same.
    if (!bounds.empty()) {
        v.bound_median_ms = *std::min_element(bounds.begin(), bounds.end());
        v.from_cpu_time = use_cpu;
    }
    v.believed = v.claimed_median_ms >= v.bound_median_ms;
    return v;
}

}  // namespace kreg
