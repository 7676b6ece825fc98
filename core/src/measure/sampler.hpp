// The measurement loop shared by every backend: warm-up calls, then timed calls until the repeat
// count or the time budget is reached. The timer decides what "time" means (host clock, CUDA events).
#pragma once

#include "common/job.hpp"

#include <functional>
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
};

// Wall-clock timer for host code (steady_clock).
class HostTimer final : public Timer {
public:
    void start() override;
    double stop_ms() override;
    std::string name() const override { return "host"; }

private:
    long long start_ns_ = 0;
};

// Hooks run around each timed call but outside the timed region (e.g. flush L2, re-poison output).
struct SampleHooks {
    std::function<void()> before_each;  // may be empty
};

// Runs settings.warmup untimed calls, then timed calls: settings.repeats of them, or fewer if
// settings.time_budget_s is set and spent (never fewer than min(3, repeats)). Returns the samples.
// call() throws to abort; the exception propagates.
std::vector<double> sample(const RunSettings& settings, Timer& timer, const std::function<void()>& call,
                           const SampleHooks& hooks = {});

}  // namespace kreg
