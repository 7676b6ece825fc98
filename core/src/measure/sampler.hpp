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

// Runs settings.warmup untimed calls, then timed calls: settings.repeats of them, or fewer if
// settings.time_budget_s is set and spent (never fewer than min(3, repeats)). Returns the samples.
// call() throws to abort; the exception propagates.
std::vector<double> sample(const RunSettings& settings, Timer& timer, const std::function<void()>& call,
                           const SampleHooks& hooks = {});

}  // namespace kreg
