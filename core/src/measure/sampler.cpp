#include "measure/sampler.hpp"

#include <algorithm>
#include <chrono>

namespace kreg {
namespace {
long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

void HostTimer::start() { start_ns_ = now_ns(); }
double HostTimer::stop_ms() { return double(now_ns() - start_ns_) * 1e-6; }

std::vector<double> sample(const RunSettings& settings, Timer& timer, const std::function<void()>& call,
                           const SampleHooks& hooks) {
    for (int i = 0; i < settings.warmup; ++i) {
        if (hooks.before_each) hooks.before_each();
        call();
    }
    const int repeats = std::max(1, settings.repeats);
    const int minimum = std::min(3, repeats);
    std::vector<double> samples;
    samples.reserve(size_t(repeats));
    double spent_ms = 0;
    while (int(samples.size()) < repeats) {
        if (settings.time_budget_s && int(samples.size()) >= minimum && spent_ms >= *settings.time_budget_s * 1e3) break;
        if (hooks.before_each) hooks.before_each();
        timer.start();
        call();
        const double ms = timer.stop_ms();
        samples.push_back(ms);
        spent_ms += ms;
    }
    return samples;
}

}  // namespace kreg
