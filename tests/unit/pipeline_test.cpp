// The measurement pipeline (pipeline/pipeline.hpp): every call's C is checked, not only the first and
// the last; and the stopping rule (measure/sampler.hpp) with the median's confidence interval it reads
// (measure/stats.hpp), and where its settings come from (the sweep config).
#include "fake_kernel.hpp"
#include "record_json.hpp"
#include "config/sweep_config.hpp"
#include "measure/sampler.hpp"
#include "measure/stats.hpp"
#include "pipeline/job_runner.hpp"
#include "verify/random_fill.hpp"
#include "worker/session.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace kreg {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// ---- The median's confidence interval ----------------------------------------------------------------

std::vector<double> one_to(int n) {
    std::vector<double> v;
    for (int i = n; i >= 1; --i) v.push_back(double(i));  // unsorted on purpose
    return v;
}

TEST(MedianInterval, TooFewSamplesHaveNoNinetyFivePercentInterval) {
    // With 5 samples even [min, max] misses the median with probability 2/32 > 5 %.
    const MedianInterval ci = median_interval(one_to(5));
    EXPECT_FALSE(ci.exists);
    EXPECT_EQ(ci.low, 1.0);
    EXPECT_EQ(ci.high, 5.0);
    EXPECT_NEAR(ci.coverage, 1.0 - 2.0 / 32.0, 1e-12);
    EXPECT_EQ(relative_half_width(ci, 3.0), std::numeric_limits<double>::infinity());
}

TEST(MedianInterval, OrderStatisticsOfTheExactBinomial) {
    // n = 6: only [x(1), x(6)], coverage 1 - 2/64.
    MedianInterval ci = median_interval(one_to(6));
    ASSERT_TRUE(ci.exists);
    EXPECT_EQ(ci.low, 1.0);
    EXPECT_EQ(ci.high, 6.0);
    EXPECT_NEAR(ci.coverage, 1.0 - 2.0 / 64.0, 1e-12);
    // n = 10: P(B <= 1) = 11/1024 <= 2.5 % < P(B <= 2) = 56/1024, so [x(2), x(9)].
    ci = median_interval(one_to(10));
    ASSERT_TRUE(ci.exists);
    EXPECT_EQ(ci.low, 2.0);
    EXPECT_EQ(ci.high, 9.0);
    EXPECT_NEAR(ci.coverage, 1.0 - 2.0 * 11.0 / 1024.0, 1e-12);
    // n = 100: P(B <= 39) = 0.0176 <= 2.5 % < P(B <= 40) = 0.0284, so [x(40), x(61)].
    ci = median_interval(one_to(100));
    ASSERT_TRUE(ci.exists);
    EXPECT_EQ(ci.low, 40.0);
    EXPECT_EQ(ci.high, 61.0);
    EXPECT_GE(ci.coverage, 0.95);
    EXPECT_NEAR(relative_half_width(ci, 50.5), 10.5 / 50.5, 1e-12);
}

TEST(MedianInterval, ThousandsOfSamplesDoNotUnderflow) {
    const MedianInterval ci = median_interval(one_to(5000));
    ASSERT_TRUE(ci.exists);
    // Normal approximation: 2500 -+ 1.96 * sqrt(5000) / 2 = 2500 -+ 69.3.
    EXPECT_NEAR(ci.low, 2431.0, 2.0);
    EXPECT_NEAR(ci.high, 2570.0, 2.0);
    EXPECT_GE(ci.coverage, 0.95);
}

TEST(MedianInterval, StatsCarryTheInterval) {
    TimingStats s = compute_stats(one_to(10));
    ASSERT_TRUE(s.median_ci_low_ms && s.median_ci_high_ms);
    EXPECT_EQ(*s.median_ci_low_ms, 2.0);
    EXPECT_EQ(*s.median_ci_high_ms, 9.0);
    s = compute_stats(one_to(4));
    EXPECT_FALSE(s.median_ci_low_ms.has_value());
    // And they travel in the record's JSON.
    const nlohmann::json j = compute_stats(one_to(10));
    EXPECT_EQ(j.at("median_ci_low_ms"), 2.0);
    EXPECT_EQ(j.get<TimingStats>().median_ci_high_ms, 9.0);
}

// ---- The stopping rule -------------------------------------------------------------------------------

// Returns the scripted durations one after the other (the last one forever).
class ScriptedTimer final : public Timer {
public:
    explicit ScriptedTimer(std::vector<double> script) : script_(std::move(script)) {}
    void start() override {}
    double stop_ms() override { return script_[std::min(next_++, script_.size() - 1)]; }
    std::string name() const override { return "scripted"; }
    bool host_clock() const override { return host_; }
    ScriptedTimer& on_the_device() {
        host_ = false;
        return *this;
    }

private:
    bool host_ = true;  // as the host's timer: the least span applies
    std::vector<double> script_;
    size_t next_ = 0;
};

RunSettings settings_with(int repeats, std::optional<double> noise_target) {
    RunSettings s;
    s.warmup = 0;
    s.repeats = repeats;
    s.noise_target = noise_target;
    s.time_budget_s = 3600.0;  // the rules below never wait for the clock
    return s;
}

TEST(StoppingRule, WithoutANoiseTargetTheCountIsFixed) {
    ScriptedTimer timer({1.0, 9.0});
    SamplingOutcome outcome;
    const auto samples = sample(
        settings_with(7, std::nullopt), timer, [] {}, {}, {}, &outcome);
    EXPECT_EQ(samples.size(), 7u);
    EXPECT_EQ(outcome.stop, "repeats");
}

TEST(StoppingRule, SteadySamplesStopAtTheMinimumCount) {
    ScriptedTimer timer({10.0});  // ten of them add up to more than the least span
    SamplingOutcome outcome;
    const auto samples = sample(
        settings_with(10, 0.005), timer, [] {}, {}, {}, &outcome);
    EXPECT_EQ(samples.size(), 10u);
    EXPECT_EQ(outcome.stop, "noise_target");
    EXPECT_EQ(outcome.relative_half_width, 0.0);
}

TEST(StoppingRule, TheMinimumCountIsKeptEvenBelowSixSamplesWhereNoIntervalExists) {
    // repeats 3: three samples have no 95 % interval, so a noise target keeps sampling past them.
    ScriptedTimer timer({10.0});
    SamplingOutcome outcome;
    const auto samples = sample(
        settings_with(3, 0.005), timer, [] {}, {}, {}, &outcome);
    EXPECT_EQ(samples.size(), 6u);
    EXPECT_EQ(outcome.stop, "noise_target");
}

TEST(StoppingRule, NoisySamplesGoOnUntilTheIntervalIsNarrowEnough) {
    // 10 scattered samples, then steady ones: the interval of the median narrows as the steady ones
    // outnumber the scattered ones; it must be within 0.5 % before sampling stops. (Long enough that the
    // least span is spent in the first ten.)
    std::vector<double> script = {10.0, 30.0, 5.0, 20.0, 15.0, 7.0, 25.0, 12.0, 9.0, 40.0, 10.0};
    ScriptedTimer timer(script);
    SamplingOutcome outcome;
    const auto samples = sample(
        settings_with(10, 0.005), timer, [] {}, {}, {}, &outcome);
    EXPECT_GT(samples.size(), 10u);
    EXPECT_EQ(outcome.stop, "noise_target");
    EXPECT_LE(outcome.relative_half_width, 0.005);
    // One sample fewer would not have been enough.
    std::vector<double> fewer(samples.begin(), samples.end() - 1);
    EXPECT_GT(relative_half_width(median_interval(fewer), compute_stats(fewer).median_ms), 0.005);
}

TEST(StoppingRule, ANoiseTargetIsNotMetBeforeTheSamplesSpanTheLeastTime) {
    // Steady 1 ms calls meet the target at ten; a millisecond's worth of calls sees one state of the machine,
    // so sampling goes on until they add up to kNoiseMinSpanS.
    ScriptedTimer timer({1.0});
    SamplingOutcome outcome;
    const auto samples = sample(
        settings_with(10, 0.005), timer, [] {}, {}, {}, &outcome);
    const size_t least = size_t(std::ceil(kNoiseMinSpanS / 1e-3 - 1e-9));
    EXPECT_EQ(samples.size(), least);
    EXPECT_EQ(outcome.stop, "noise_target");
    EXPECT_EQ(outcome.min_span_s, kNoiseMinSpanS);
    EXPECT_GT(outcome.span_s, 0.0);  // the wall time they ran over: the scripted calls take none to speak of
    EXPECT_LT(outcome.span_s, kNoiseMinSpanS);
}

TEST(StoppingRule, AShortTimeCapShortensTheLeastSpanToAQuarterOfIt) {
    RunSettings s = settings_with(10, 0.005);
    s.time_budget_s = 0.08;
    EXPECT_DOUBLE_EQ(StoppingRule::from(s).min_span_s, 0.02);
    ScriptedTimer timer({1.0});
    SamplingOutcome outcome;
    EXPECT_EQ(sample(
                  s, timer, [] {}, {}, {}, &outcome)
                  .size(),
              20u);
    EXPECT_EQ(outcome.stop, "noise_target");
    // A fixed count has no least span: ten calls are ten calls.
    EXPECT_EQ(StoppingRule::from(settings_with(10, std::nullopt)).min_span_s, 0.0);
}

TEST(StoppingRule, SamplesOfADeviceClockHaveNoLeastSpan) {
    ScriptedTimer timer({1.0});
    SamplingOutcome outcome;
    EXPECT_EQ(sample(
                  settings_with(10, 0.005), timer.on_the_device(), [] {}, {}, {}, &outcome)
                  .size(),
              10u);
    EXPECT_EQ(outcome.stop, "noise_target");
    EXPECT_EQ(outcome.min_span_s, 0.0);
}

TEST(StoppingRule, NeverQuietSamplesStopAtTheCapOfSamples) {
    std::vector<double> script;
    for (int i = 0; i < 3 * kMaxSamples; ++i) script.push_back(i % 2 == 0 ? 1.0 : 2.0);
    ScriptedTimer alternating(script);
    SamplingOutcome outcome;
    const auto samples = sample(
        settings_with(10, 0.005), alternating, [] {}, {}, {}, &outcome);
    EXPECT_EQ(samples.size(), size_t(kMaxSamples));
    EXPECT_EQ(outcome.stop, "max_samples");
}

TEST(StoppingRule, TheTimeCapStopsAfterThreeSamples) {
    std::vector<double> script;
    for (int i = 0; i < 100; ++i) script.push_back(i % 2 == 0 ? 1.0 : 2.0);
    ScriptedTimer timer(script);
    RunSettings s = settings_with(10, 0.005);
    s.time_budget_s = 1e-12;  // spent by the time any call returns
    SamplingOutcome outcome;
    const auto samples = sample(
        s, timer, [] {}, {}, {}, &outcome);
    EXPECT_EQ(samples.size(), 3u);
    EXPECT_EQ(outcome.stop, "time_cap");
}

TEST(StoppingRule, StrictAndProfileRunsKeepAFixedCount) {
    RunSettings s = settings_with(10, 0.005);
    s.strict = true;
    StoppingRule rule = StoppingRule::from(s);
    EXPECT_EQ(rule.noise_target, 0.0);
    EXPECT_EQ(rule.max_samples, 10);
    s.strict = false;
    s.profile = true;
    EXPECT_EQ(StoppingRule::from(s).noise_target, 0.0);
    s.profile = false;
    s.time_budget_s.reset();
    rule = StoppingRule::from(s);
    EXPECT_EQ(rule.noise_target, 0.005);
    EXPECT_EQ(rule.min_samples, 10);
    EXPECT_EQ(rule.max_samples, kMaxSamples);
    EXPECT_EQ(rule.time_cap_s, kDefaultNoiseTimeCapS);
    EXPECT_EQ(rule.min_span_s, kNoiseMinSpanS);
    s.strict = true;
    EXPECT_EQ(StoppingRule::from(s).min_span_s, 0.0);
}

TEST(ClockSettle, CallsUntilTwoWindowsAgreeAreWarmUpsAndNotSamples) {
    // Seven slow calls (clocks ramping), then fast ones. Windows of 5: the last two agree first after
    // 15 calls (calls 6-10 have median 1 once three of them are fast).
    std::vector<double> script(7, 5.0);
    script.push_back(1.0);
    ScriptedTimer timer(script);
    RunSettings s = settings_with(4, std::nullopt);
    s.warmup = 2;
    ClockSettle settle;
    settle.enabled = true;
    settle.min_s = 0;
    settle.max_s = 3600;
    std::vector<std::string> labels;
    SampleHooks hooks;
    hooks.after_call = [&](const CallSite& site, double) { labels.push_back(site.label()); };
    SamplingOutcome outcome;
    const auto samples = sample(
        s, timer, [] {}, hooks, settle, &outcome);
    EXPECT_TRUE(outcome.settled);
    EXPECT_EQ(outcome.settle_calls, 15);
    EXPECT_EQ(samples, std::vector<double>(4, 1.0));
    ASSERT_EQ(labels.size(), 2u + 15u + 4u);
    EXPECT_EQ(labels[2], "warm-up call 3");
    EXPECT_EQ(labels[16], "warm-up call 17");
    EXPECT_EQ(labels[17], "timed call 1");
}

// ---- Where the settings come from --------------------------------------------------------------------

nlohmann::json minimal_config() { return {{"kernels", {"cpu_naive"}}, {"shapes", {{{"square", 8}}}}}; }

TEST(StoppingRuleConfig, SweepsDefaultToHalfAPercentAndZeroMeansAFixedCount) {
    SweepConfig c = parse_sweep_config(minimal_config(), "t.json");
    EXPECT_EQ(c.settings.noise_target, kDefaultNoiseTarget);
    EXPECT_EQ(c.to_json().at("noise_target"), kDefaultNoiseTarget);
    nlohmann::json doc = minimal_config();
    doc["noise_target"] = 0;
    c = parse_sweep_config(doc, "t.json");
    EXPECT_EQ(c.settings.noise_target, 0.0);
    EXPECT_EQ(StoppingRule::from(c.settings).noise_target, 0.0);
    doc["noise_target"] = 0.02;
    EXPECT_EQ(parse_sweep_config(doc, "t.json").settings.noise_target, 0.02);
}

TEST(StoppingRuleConfig, OutOfRangeNamesTheFileAndPath) {
    for (const nlohmann::json& bad : {nlohmann::json(1.5), nlohmann::json(-0.1), nlohmann::json("0.01")}) {
        nlohmann::json doc = minimal_config();
        doc["noise_target"] = bad;
        try {
            parse_sweep_config(doc, "t.json");
            ADD_FAILURE() << "accepted noise_target " << bad.dump();
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.file(), "t.json");
            EXPECT_EQ(e.json_path(), "/noise_target") << e.what();
        }
    }
}

// ---- Every call is checked ---------------------------------------------------------------------------

std::string fixture(const std::string& name) { return std::string(KREG_FIXTURE_DIR) + "/" + name + ".so"; }

Job fixture_job(const std::string& kernel, int warmup, int repeats) {
    Job job;
    job.id = 5;
    job.seed = 99;
    job.kernel = kernel;
    job.plugin_path = fixture(kernel);
    job.shape = {12, 10, 7};
    job.settings.warmup = warmup;
    job.settings.repeats = repeats;
    return job;
}

Record run_in_session(const Job& job) {
    WorkerSession session;
    const auto reply = session.handle({{"op", "run"}, {"job", job}});
    return reply.at("record").get<Record>();
}

TEST(EveryCallChecked, AKernelThatSkipsEverySecondCallIsCaughtAtTheFirstSkippedCall) {
    // Calls 1 (checked) and 7 (the last timed) compute: a harness checking only those two passes it.
    Record r = run_in_session(fixture_job("fixture_skips_every_second_call", 1, 5));
    EXPECT_EQ(r.status, RowStatus::wrong_result) << r.reason;
    // (0, 0) and all 120 when C started as NaN; with a finite fill, the elements whose fill no result can equal.
    EXPECT_TRUE(starts_with(r.reason, "warm-up call 1: unwritten element at (")) << r.reason;
    EXPECT_NE(r.reason.find(" of 120 elements of C never written"), std::string::npos) << r.reason;
    EXPECT_FALSE(r.stats.has_value());
    r = run_in_session(fixture_job("fixture_skips_every_second_call", 0, 5));
    EXPECT_EQ(r.status, RowStatus::wrong_result) << r.reason;
    EXPECT_TRUE(starts_with(r.reason, "timed call 1: unwritten element at (")) << r.reason;
}

TEST(EveryCallChecked, AnHonestKernelHasEveryCallScannedAndTheFirstAndLastVerified) {
    const Record r = run_in_session(fixture_job("fixture_good", 2, 5));
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    ASSERT_TRUE(extra_json(r).contains("call_checks")) << extra_json(r).dump();
    EXPECT_EQ(extra_json(r)["call_checks"]["scanned_calls"], 2 + 5);
    EXPECT_EQ(extra_json(r)["call_checks"]["verified"], nlohmann::json({"first call", "last timed call"}));
    EXPECT_LE(extra_json(r)["call_checks"]["sampled_max_rel_err"].get<double>(), 1e-5);
    EXPECT_EQ(extra_json(r)["sampling"]["stop"], "repeats");  // no noise target on a bare job
    EXPECT_EQ(r.samples_ms.size(), 5u);
}

TEST(EveryCallChecked, VerifyOffChecksNothing) {
    Job job = fixture_job("fixture_skips_every_second_call", 1, 5);
    job.settings.verify = false;
    const Record r = run_in_session(job);
    EXPECT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_FALSE(extra_json(r).contains("call_checks"));
}

// A kernel that is right on its first call and writes finite wrong values afterwards (every element
// off): only the sampled comparison with the reference can see it.
kreg_status right_once_then_off_by_one(void* instance, const kreg_gemm_args* args, char*, size_t) {
    const bool first = (*static_cast<int*>(instance))++ == 0;
    const float* a = static_cast<const float*>(args->a);
    const float* b = static_cast<const float*>(args->b);
    float* c = static_cast<float*>(args->c);
    for (int64_t i = 0; i < args->m; ++i)
        for (int64_t j = 0; j < args->n; ++j) {
            float acc = 0;
            for (int64_t p = 0; p < args->k; ++p) acc += a[i * args->lda + p] * b[p * args->ldb + j];
            c[i * args->ldc + j] = first ? acc : acc + 1.0f;
        }
    return KREG_STATUS_OK;
}

// Right on its first call; afterwards one element is +Inf (a NaN the kernel computed would be the same).
kreg_status right_once_then_infinite(void* instance, const kreg_gemm_args* args, char*, size_t) {
    const bool first = (*static_cast<int*>(instance))++ == 0;
    const float* a = static_cast<const float*>(args->a);
    const float* b = static_cast<const float*>(args->b);
    float* c = static_cast<float*>(args->c);
    for (int64_t i = 0; i < args->m; ++i)
        for (int64_t j = 0; j < args->n; ++j) {
            float acc = 0;
            for (int64_t p = 0; p < args->k; ++p) acc += a[i * args->lda + p] * b[p * args->ldb + j];
            c[i * args->ldc + j] = acc;
        }
    if (!first) c[2 * args->ldc + 3] = std::numeric_limits<float>::infinity();
    return KREG_STATUS_OK;
}

// ABI 1.2's variant is asked for again after the row's calls (issue 25): a kernel that chooses in its first call
// names its choice, not what it said before choosing.
TEST(Variant, AKernelThatChoosesInItsFirstCallNamesItsChoice) {
    const Record r = run_in_session(fixture_job("fixture_chooses_in_first_call", 1, 3));
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    ASSERT_TRUE(r.extra.variant);
    EXPECT_EQ(*r.extra.variant, "chosen in the first call, 5 calls");  // checked + 1 warm-up + 3 timed
}

Record run_fake(decltype(kreg_kernel_info::run_gemm) run) { return test::run_fake(run, fixture_job("fake", 1, 3)); }

TEST(EveryCallChecked, ANonFiniteElementOnALaterCallIsNamed) {
    const Record r = run_fake(&right_once_then_infinite);
    EXPECT_EQ(r.status, RowStatus::wrong_result);
    EXPECT_EQ(r.reason, "warm-up call 1: Inf at (2, 3) (1 of 120 elements of C are NaN or Inf)");
}

TEST(EveryCallChecked, FiniteWrongValuesOnALaterCallAreCaughtByTheSampledCheck) {
    const Record r = run_fake(&right_once_then_off_by_one);
    EXPECT_EQ(r.status, RowStatus::wrong_result);
    EXPECT_TRUE(starts_with(r.reason, "warm-up call 1: error ")) << r.reason;
    EXPECT_NE(r.reason.find("(sampled)"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace kreg
