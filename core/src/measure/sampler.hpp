// The measurement loop shared by every backend: warm-up calls, optionally calls until the clocks have
// settled, then timed calls until the stopping rule is met. The timer decides what "time" means (host
// clock, CUDA events).
#pragma once

#include "common/job.hpp"
#include "measure/stats.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// Times one call. start() is called right before the call, stop_ms() right after it and returns the
// call's duration in milliseconds (synchronizing whatever it must).
class Timer {
public:
    virtual ~Timer() = default;
    virtual void start() = 0;
    virtual double stop_ms() = 0;
    virtual std::string name() const = 0;  // "host", "cuda_event"
    // Whether a sample is the host's wall time, which a shared machine's other work lengthens (the least
    // span of StoppingRule is for those); a device clock's samples are the device's work alone.
    virtual bool host_clock() const { return false; }
};

// Wall-clock timer for host code (steady_clock).
class HostTimer final : public Timer {
public:
    void start() override;
    double stop_ms() override;
    std::string name() const override { return "host"; }
    bool host_clock() const override { return true; }

private:
    long long start_ns_ = 0;
};

// Which call of a job a hook is about. The checked call is made by the runner itself, before sample();
// it has a CallSite too, so every call of a job can be named the same way in a row's reason.
struct CallSite {
    enum class Role { checked, warmup, timed };
    Role role = Role::timed;
    int index = 0;  // 0-based within its role

    // "first call", "warm-up call 2", "timed call 4" (1-based, for people).
    std::string label() const;
};

// Hooks run around each sampled call (warm-up and timed) but outside the timed region. Every hook may
// be empty; a hook that throws aborts sampling and the exception propagates.
struct SampleHooks {
    std::function<void()> before_each;  // e.g. flush L2, re-poison output
    // After before_each, right before the call (and before timer.start() on a timed call).
    std::function<void(const CallSite&)> before_call;
    // Right after the call: on a timed call after timer.stop_ms() (whose result is ms), on a warm-up
    // call immediately (ms = 0). Grading inspects every output here.
    std::function<void(const CallSite&, double ms)> after_call;
};

// The time cap of the stopping rule when a noise target is set and time_budget_s is not.
inline constexpr double kDefaultNoiseTimeCapS = 1.0;
// The most samples one job takes, whatever the rule says (bounds a report's size): max(repeats, this).
inline constexpr int kMaxSamples = 1000;
// A noise target is not met before host-clock samples add up to this much time (or a quarter of the time cap,
// if less). Ten calls of 16 us meet a 0.5 % target in under a millisecond, and a millisecond sees one state of
// the machine: on the 2-vCPU VM a row's fastest call sat 20-30 % above its usual value in about one window in
// four (docs/results/compare-noise.md, 2026-12-03 afternoon); 400 calls of the same row found the usual value
// in 39 of 40. The interval of the median says nothing about what it did not sample. Spread over 50 ms of wall
// clock instead (fewer calls where the harness's work between them is long) was not enough: 16 of 17 runs of
// the compare e2e test's data against 13 of 13. Rows timed by a device clock have no least span: their samples
// are the device's work, and 50 ms of 20 us kernels is the whole 1,000-sample cap (seconds a row where every
// call's inputs are compared).
inline constexpr double kNoiseMinSpanS = 0.05;

// How sample() decides it has enough timed calls. Checked after every timed call, in this order:
//   - max_samples reached                                         -> "max_samples"
//   - the time cap spent (the sum of the samples so far),
//     and at least min(3, min_samples) samples                    -> "time_cap"
//   - at least min_samples, and either no noise target, or the
//     median's 95 % interval within +-noise_target of the median,
//     and (a host clock's samples) adding up to min_span_s        -> "repeats" / "noise_target"
// With no noise target this is the fixed count of old: repeats samples, fewer if time_budget_s runs out.
struct StoppingRule {
    int min_samples = 10;
    int max_samples = 10;
    double noise_target = 0;           // relative half-width of the median's interval; 0: fixed count
    std::optional<double> time_cap_s;  // none: no cap
    double min_span_s = 0;             // with a noise target: the least time host-clock samples add up to

    // From settings: min = repeats; a noise target (not in strict runs, whose calls are counted, nor in
    // --profile runs, which run a fixed number of calls for the profiler) makes
    // max = max(repeats, kMaxSamples), the cap time_budget_s or kDefaultNoiseTimeCapS, and min_span_s
    // kNoiseMinSpanS or a quarter of the cap.
    static StoppingRule from(const RunSettings& settings);
};

// Warm-up that waits for the clocks: timed (but discarded) calls until the medians of the last two
// windows of `window` calls agree within `agreement` and min_s has passed, or max_s has passed. A GPU
// that idled between sweeps starts at low clocks; the first job of a process would otherwise be timed
// while they ramp (samples spread 3x at 512^3 on the H200).
struct ClockSettle {
    bool enabled = false;
    double min_s = 0.2, max_s = 2.0;
    int window = 5;
    double agreement = 0.01;
};

// What sample() did besides the samples, for the record.
struct SamplingOutcome {
    std::string stop;         // "repeats", "noise_target", "time_cap", "max_samples"
    MedianInterval interval;  // of the samples it stopped with
    double relative_half_width = 0;
    double span_s = 0;      // wall seconds from the first timed call's start to the last one's end
    double min_span_s = 0;  // the least span the rule held this timer's samples to (0: none)
    int settle_calls = 0;   // ClockSettle calls made (0 when disabled)
    double settle_s = 0;
    bool settled = false;  // the windows agreed (false: max_s ran out, or disabled)
};

// Runs settings.warmup untimed calls, then (settle.enabled) the settling calls, then timed calls until
// StoppingRule::from(settings) says stop. Returns the samples; outcome, when given, says why it stopped.
// call() throws to abort; the exception propagates. Settling calls are warm-up calls to the hooks
// (indices after settings.warmup's), timed with the timer.
std::vector<double> sample(const RunSettings& settings, Timer& timer, const std::function<void()>& call,
                           const SampleHooks& hooks = {}, const ClockSettle& settle = {},
                           SamplingOutcome* outcome = nullptr);

}  // namespace kreg
