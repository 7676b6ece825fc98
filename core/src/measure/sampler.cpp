#include "measure/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <string>

namespace kreg {
namespace {
long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

std::string CallSite::label() const {
    switch (role) {
        case Role::checked: return index == 0 ? "first call" : "checked call " + std::to_string(index + 1);
        case Role::warmup: return "warm-up call " + std::to_string(index + 1);
        case Role::timed: return "timed call " + std::to_string(index + 1);
    }
    return "call";
}

void HostTimer::start() { start_ns_ = now_ns(); }
double HostTimer::stop_ms() { return double(now_ns() - start_ns_) * 1e-6; }

std::vector<double> sample(const RunSettings& settings, Timer& timer, const std::function<void()>& call,
                           const SampleHooks& hooks) {
    for (int i = 0; i < settings.warmup; ++i) {
        const CallSite site{CallSite::Role::warmup, i};
        if (hooks.before_each) hooks.before_each();
        if (hooks.before_call) hooks.before_call(site);
        call();
        if (hooks.after_call) hooks.after_call(site, 0.0);
    }
    const int repeats = std::max(1, settings.repeats);
    const int minimum = std::min(3, repeats);
    std::vector<double> samples;
    samples.reserve(size_t(repeats));
    double spent_ms = 0;
    while (int(samples.size()) < repeats) {
        if (settings.time_budget_s && int(samples.size()) >= minimum && spent_ms >= *settings.time_budget_s * 1e3) break;
        const CallSite site{CallSite::Role::timed, int(samples.size())};
        if (hooks.before_each) hooks.before_each();
        if (hooks.before_call) hooks.before_call(site);
        timer.start();
        call();
        const double ms = timer.stop_ms();
        if (hooks.after_call) hooks.after_call(site, ms);
        samples.push_back(ms);
        spent_ms += ms;
    }
    return samples;
}

}  // namespace kreg
