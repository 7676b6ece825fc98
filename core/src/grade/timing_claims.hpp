// The submission's timings are claims of the process it controls; what the grader saw itself is the
// window of each call on its own clock (sweep/checked_calls.hpp): from the moment it sent the call's
// seed (before which the inputs could not be known) to the moment it held the call's sealed output
// (after which the output could not change). A call cannot have taken longer than its window, and it
// took at least its window less the harness's own work around the call, which the grader measures with
// a trusted kernel at the same shape (the allowance).
#pragma once

#include "common/job.hpp"
#include "sweep/checked_calls.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kreg {

// The harness work inside a window at a shape, from a trusted kernel's checked run (kCalibrationCalls
// timed calls), as the gaps window - measured of its timed calls. Two rules, by when it was measured:
//   - same_round (CPU rows): the trusted kernel's calls are checked outside right before each of the
//     submission's rounds, in a worker kept warm through the shape's rounds, so both see the same load:
//     the allowance is the upper quartile of the gaps plus kAllowanceClockError_ms. A row is bounded by
//     its quietest call, so an honest kernel is bounded above its time only when every one of its calls
//     had a larger share than three quarters of the calibration's.
//   - once_per_shape (CUDA rows): one calibration per shape, minutes away from some rounds:
//     kAllowanceMedianFactor x the median plus twice its distance above the smallest, plus the clock error.
// error_ms is the allowance less the smallest gap: how far below a call's true time its bound may lie on
// account of the allowance (a call's own harness share is at least about the smallest seen).
// No timed call: no allowance (infinite), and no_bound says why.
// The window holds only the seed's round trip, the inputs drawn from it, the call and C's hand-over
// (pipeline/pipeline.cpp does the rest before the seed or after the hand-over), so this is small next to
// a call, and a plugin that skips harness work to shrink its windows gains at most this much.
constexpr int kCalibrationCalls = 20;
constexpr double kAllowanceMedianFactor = 1.25;
constexpr double kAllowanceClockError_ms = 0.02;
enum class AllowanceRule { same_round, once_per_shape };
//
// A CPU worker runs on one CPU it cannot leave (worker/cpu_time.hpp), so the CPU time its process used inside a
// window (CheckedCall::cpu_ms) is at most the window's elapsed time, and, less the harness's CPU work, at most
// the call's. Unlike the window it does not grow while the worker waits for the CPU, which on a loaded machine
// is most of a window. cpu_allowance_ms is that harness CPU work, from the same calibration: the upper quartile
// of cpu_ms - call_cpu_ms (the trusted worker's own CPU time of the call, which a trusted kernel's worker has
// no reason to misstate; the measured time would not do: under load it includes waiting) plus
// kAllowanceClockError_ms. Infinite when the calibration's calls carry no CPU time.
struct HarnessAllowance {
    double allowance_ms = std::numeric_limits<double>::infinity();
    double error_ms = 0;
    double cpu_allowance_ms = std::numeric_limits<double>::infinity();
    std::string no_cpu_bound;  // why cpu_allowance_ms is infinite
    std::string calibration;   // what measured it, and when
    std::string no_bound;      // infinite allowance: why, and what it means for the grade
    bool bounds() const { return std::isfinite(allowance_ms); }
};
HarnessAllowance harness_allowance(const std::vector<CheckedCall>& trusted_calls, AllowanceRule rule);
// No bound, for the reason given.
HarnessAllowance no_bound(std::string why);

struct TimingVerdict {
    std::string violation;  // the claims contradict what the grader saw: the row is a protocol violation
    double claimed_median_ms = 0;
    double bound_median_ms = 0;  // the smallest per-call bound over the timed calls; >= 0 (the field
                                 // keeps its name, grader_bound_median_ms: it bounds the median from below)
    bool believed = true;        // claimed_median_ms >= bound_median_ms
    std::optional<double> claimed_cpu_median_ms;  // the worker's word (CheckedCall::call_cpu_ms), shown only
    bool from_cpu_time = false;                   // the bound is the worker's CPU time's (else the windows')
    std::string no_cpu_bound;                     // why the CPU time bounded nothing, when it did not
    HarnessAllowance allowance;                   // infinite: no lower bound (allowance.no_bound says why)
    TimingClaims evidence() const;                // the row's extra.timing_claims
};

// Checks r (the worker's row of a checked job) against calls (what the grader collected for it):
//   - one handed-over call per call the row implies (1 + warm-ups + timed samples), in order;
//   - a measured time on exactly the timed calls, equal to the row's samples, in order;
//   - no timed call claimed to take longer than its window (2 % + 0.05 ms of clock slack);
// then compares the claimed median with the grader's lower bound: the smallest over the timed calls of the
// call's bound, its CPU time less the CPU allowance where every timed call has a CPU time and the allowance
// one (a worker on one CPU: CPU time does not grow with waiting), else its window less the allowance (windows
// only grow by what the scheduler adds).
TimingVerdict judge_timing_claims(const Job& job, const Record& r, const std::vector<CheckedCall>& calls,
                                  const HarnessAllowance& allowance);

}  // namespace kreg
