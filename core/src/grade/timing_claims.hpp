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

#include <string>
#include <vector>

namespace kreg {

// The harness work inside a window at a shape, from a trusted kernel's checked run (kCalibrationCalls
// timed calls): of the gaps window - measured of its timed calls, kAllowanceMedianFactor x the median plus
// twice its distance above the smallest, plus kAllowanceClockError_ms (two clocks read in two processes,
// and the submission's own harness share varying from the calibration's). Infinite (no bound: every
// claim that fits its window is believed) when the run has no timed call.
// The window holds only the seed's round trip, the inputs drawn from it, the call and C's hand-over
// (pipeline/pipeline.cpp does the rest before the seed or after the hand-over), so this is small next to
// a call, and a plugin that skips harness work to shrink its windows gains at most this much.
constexpr int kCalibrationCalls = 20;
constexpr double kAllowanceMedianFactor = 1.25;
constexpr double kAllowanceClockError_ms = 0.02;
double harness_allowance_ms(const std::vector<CheckedCall>& trusted_calls);

struct TimingVerdict {
    std::string violation;      // the claims contradict what the grader saw: the row is a protocol violation
    double claimed_median_ms = 0;
    double bound_median_ms = 0;  // the smallest (window - allowance) over the timed calls; >= 0 (the field
                                 // keeps its name, grader_bound_median_ms: it bounds the median from below)
    bool believed = true;        // claimed_median_ms >= bound_median_ms
    double allowance_ms = 0;     // infinite: uncalibrated, no lower bound
    TimingClaims evidence() const;  // the row's extra.timing_claims
};

// Checks r (the worker's row of a checked job) against calls (what the grader collected for it):
//   - one handed-over call per call the row implies (1 + warm-ups + timed samples), in order;
//   - a measured time on exactly the timed calls, equal to the row's samples, in order;
//   - no timed call claimed to take longer than its window (2 % + 0.05 ms of clock slack);
// then compares the claimed median with the grader's lower bound (the smallest call's window less the
// allowance: windows only grow by what the scheduler adds).
TimingVerdict judge_timing_claims(const Job& job, const Record& r, const std::vector<CheckedCall>& calls, double allowance_ms);

}  // namespace kreg
