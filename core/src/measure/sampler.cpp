#include "measure/sampler.hpp"

#include "common/elapsed.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

namespace kreg {
namespace {
using Clock = std::chrono::steady_clock;

long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

std::string CallSite::label() const {
    switch (role) {
        case Role::checked:
            return index == 0 ? "first call" : "checked call " + std::to_string(index + 1);
        case Role::warmup:
            return "warm-up call " + std::to_string(index + 1);
        case Role::timed:
            return "timed call " + std::to_string(index + 1);
    }
    return "call";
}

void HostTimer::start() { start_ns_ = now_ns(); }
double HostTimer::stop_ms() { return double(now_ns() - start_ns_) * 1e-6; }

StoppingRule StoppingRule::from(const RunSettings& settings) {
    StoppingRule rule;
    rule.min_samples = std::max(1, settings.repeats);
    rule.max_samples = rule.min_samples;
    rule.time_cap_s = settings.time_budget_s;
    if (settings.noise_target && *settings.noise_target > 0 && !settings.strict && !settings.checked_outside &&
        !settings.profile) {
        rule.noise_target = *settings.noise_target;
        rule.max_samples = std::max(rule.min_samples, kMaxSamples);
        if (!rule.time_cap_s) rule.time_cap_s = kDefaultNoiseTimeCapS;
        rule.min_span_s = std::min(kNoiseMinSpanS, *rule.time_cap_s / 4);
    }
    return rule;
}

std::vector<double> sample(const RunSettings& settings, Timer& timer, const std::function<void()>& call,
                           const SampleHooks& hooks, const ClockSettle& settle, SamplingOutcome* outcome) {
    SamplingOutcome local;
    SamplingOutcome& out = outcome != nullptr ? *outcome : local;
    out = SamplingOutcome{};
    for (int i = 0; i < settings.warmup; ++i) {
        const CallSite site{CallSite::Role::warmup, i};
        if (hooks.before_each) hooks.before_each();
        if (hooks.before_call) hooks.before_call(site);
        call();
        if (hooks.after_call) hooks.after_call(site, 0.0);
    }
    if (settle.enabled) {
        const Clock::time_point begin = Clock::now();
        std::vector<double> seen;
        const size_t window = size_t(std::max(1, settle.window));
        for (;;) {
            const CallSite site{CallSite::Role::warmup, settings.warmup + int(seen.size())};
            if (hooks.before_each) hooks.before_each();
            if (hooks.before_call) hooks.before_call(site);
            timer.start();
            call();
            seen.push_back(timer.stop_ms());
            if (hooks.after_call) hooks.after_call(site, 0.0);
            const double elapsed = seconds_since(begin);
            if (seen.size() >= 2 * window && elapsed >= settle.min_s) {
                const double last = median_of({seen.end() - long(window), seen.end()});
                const double before = median_of({seen.end() - long(2 * window), seen.end() - long(window)});
                if (last > 0 && std::abs(last - before) <= settle.agreement * last) {
                    out.settled = true;
                    break;
                }
            }
            if (elapsed >= settle.max_s) break;
        }
        out.settle_calls = int(seen.size());
        out.settle_s = seconds_since(begin);
    }

    StoppingRule rule = StoppingRule::from(settings);
    if (!timer.host_clock()) rule.min_span_s = 0;
    out.min_span_s = rule.min_span_s;
    std::vector<double> samples;
    // A modest reservation: --stress asks for a billion samples it never takes.
    samples.reserve(size_t(std::min<int64_t>({int64_t(rule.max_samples), 4 * int64_t(rule.min_samples), 4096})));
    const int floor = std::min(3, rule.min_samples);
    // The cap counts the samples themselves, not the harness's work between them (poison, flush, checks;
    // a strict run's full verification of every call): the budget is of measurement, as it always was.
    double spent_s = 0;
    const Clock::time_point first = Clock::now();
    for (;;) {
        const CallSite site{CallSite::Role::timed, int(samples.size())};
        if (hooks.before_each) hooks.before_each();
        if (hooks.before_call) hooks.before_call(site);
        timer.start();
        call();
        const double ms = timer.stop_ms();
        if (hooks.after_call) hooks.after_call(site, ms);
        samples.push_back(ms);
        spent_s += ms * 1e-3;

        const int n = int(samples.size());
        if (n >= rule.max_samples) {
            out.stop = n > rule.min_samples ? "max_samples" : "repeats";
            break;
        }
        if (rule.time_cap_s && n >= floor && spent_s >= *rule.time_cap_s) {
            out.stop = "time_cap";
            break;
        }
        if (n >= rule.min_samples) {
            if (rule.noise_target <= 0) {
                out.stop = "repeats";
                break;
            }
            if (spent_s < rule.min_span_s) continue;
            const MedianInterval ci = median_interval(samples);
            if (relative_half_width(ci, median_of(samples)) <= rule.noise_target) {
                out.stop = "noise_target";
                break;
            }
        }
    }
    out.interval = median_interval(samples);
    out.span_s = seconds_since(first);
    out.relative_half_width = relative_half_width(out.interval, median_of(samples));
    return samples;
}

}  // namespace kreg
