// runner compare's statistics and verdicts: the rank test against known values, and the verdict rules
// (threshold AND significance) on sample sets built to sit on each side of them.
#include "compare/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "compare/compare_files.hpp"
#include "compare/compare_output.hpp"
#include "compare/mann_whitney.hpp"
#include "config/sweep_config.hpp"
#include "scratch_dir.hpp"

namespace kreg {
namespace {

const test::ScratchRoot kScratch("kreg_compare_test");

// n samples around center_ms, spread evenly over +-spread (relative): tight when spread is small.
std::vector<double> evenly(double center_ms, double spread, int n) {
    std::vector<double> out;
    for (int i = 0; i < n; ++i) out.push_back(center_ms * (1.0 + spread * (2.0 * i / (n - 1) - 1.0)));
    return out;
}

std::vector<double> scaled(std::vector<double> v, double factor) {
    for (auto& x : v) x *= factor;
    return v;
}

TEST(MannWhitney, MatchesTheExactDistributionOnSmallSets) {
    // Fully separated 3 vs 3: U = 0, exact two-sided p = 2 / C(6,3) = 0.1.
    const RankTest separated = mann_whitney_u({1, 2, 3}, {4, 5, 6});
    EXPECT_TRUE(separated.exact);
    EXPECT_DOUBLE_EQ(separated.u, 0.0);
    EXPECT_NEAR(separated.p_value, 0.1, 1e-12);
    // 10 vs 10 fully separated: p = 2 / C(20,10) = 1.0825e-5.
    const RankTest ten = mann_whitney_u(evenly(1.0, 0.01, 10), evenly(2.0, 0.01, 10));
    EXPECT_NEAR(ten.p_value, 2.0 / 184756.0, 1e-12);
    EXPECT_DOUBLE_EQ(ten.u, 0.0);
    // Interleaved sets: U = n_a*n_b/2 exactly, no evidence at all.
    const RankTest mixed = mann_whitney_u({1, 3, 5, 7}, {2, 4, 6, 8});
    EXPECT_DOUBLE_EQ(mixed.u, 6.0);  // pairs a > b: 3>2, 5>2, 5>4, 7>2, 7>4, 7>6
    EXPECT_GT(mixed.p_value, 0.5);
}

TEST(MannWhitney, TiesUseTheNormalApproximationAndIdenticalSetsGiveOne) {
    const std::vector<double> same = {1.0, 1.0, 1.0, 2.0, 2.0};
    const RankTest t = mann_whitney_u(same, same);
    EXPECT_FALSE(t.exact);
    EXPECT_DOUBLE_EQ(t.p_value, 1.0);
    const RankTest all_equal = mann_whitney_u({3, 3, 3}, {3, 3});
    EXPECT_DOUBLE_EQ(all_equal.p_value, 1.0);
    // Large separated sets with ties: tiny p.
    std::vector<double> a(200, 1.0), b(200, 1.1);
    a[0] = 1.1;
    EXPECT_LT(mann_whitney_u(a, b).p_value, 1e-10);
    EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1.0}).p_value, 1.0);
}

TEST(MannWhitney, MedianOfOddAndEvenCounts) {
    EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2.0);
    EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median_of({}), 0.0);
}

TEST(CompareSamples, IdenticalSampleSetsAreSame) {
    const auto a = evenly(0.5, 0.02, 10);
    const SampleVerdict v = compare_samples(a, a, CompareOptions{});
    EXPECT_EQ(v.verdict, Verdict::same);
    EXPECT_DOUBLE_EQ(*v.ratio, 1.0);
    EXPECT_GT(v.p_value, 0.9);
}

TEST(CompareSamples, AThreePercentShiftOfTightSamplesIsSlowerAtTwoPercent) {
    const auto a = evenly(1.0, 0.001, 10);
    const auto b = scaled(a, 1.03);
    CompareOptions two;
    two.threshold = 0.02;
    const SampleVerdict slower = compare_samples(a, b, two);
    EXPECT_EQ(slower.verdict, Verdict::slower) << slower.note;
    EXPECT_NEAR(*slower.ratio, 1.03, 1e-12);
    EXPECT_EQ(compare_samples(b, a, two).verdict, Verdict::faster);
    // The same shift under the default threshold (10 % without controls) is real but small: same, and the
    // note says so.
    const SampleVerdict within = compare_samples(a, b, CompareOptions{});
    EXPECT_EQ(within.verdict, Verdict::same);
    EXPECT_DOUBLE_EQ(within.noise_floor, kDefaultThresholdWithoutControls);
    EXPECT_NE(within.note.find("within the threshold"), std::string::npos) << within.note;
}

TEST(CompareSamples, NoisyOverlappingSamplesAreSameEvenWhenTheMediansMoveBeyondTheThreshold) {
    // Two draws of heavy noise (+-40 %) whose medians differ by more than 5 %: not significant.
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> noise(0.6, 1.4);
    std::vector<double> a, b;
    for (int i = 0; i < 10; ++i) a.push_back(noise(gen));
    for (int i = 0; i < 10; ++i) b.push_back(noise(gen) * 1.08);
    CompareOptions five;
    five.threshold = 0.05;
    five.statistic = RowStatistic::median;
    const SampleVerdict v = compare_samples(a, b, five);
    ASSERT_GT(std::abs(*v.ratio - 1.0), 0.05) << "the draw must move the median beyond the threshold to test anything";
    EXPECT_EQ(v.verdict, Verdict::same);
    EXPECT_GE(v.p_value, 0.01);
    // The row's own samples are too wide for the change: their interval is the floor, and the note says so.
    EXPECT_GT(v.within_run, std::abs(*v.ratio - 1.0));
    EXPECT_DOUBLE_EQ(v.noise_floor, v.within_run);
    EXPECT_NE(v.note.find("within the noise floor"), std::string::npos) << v.note;
}

TEST(CompareSamples, TooFewSamplesCannotBeSignificant) {
    // One sample each, 2x slower: a rank test cannot tell, so no regression is claimed.
    const SampleVerdict one = compare_samples({1.0}, {2.0}, CompareOptions{});
    EXPECT_EQ(one.verdict, Verdict::same);
    EXPECT_NE(one.note.find("+100.0% but not significant"), std::string::npos) << one.note;
}

ReportRow row(const std::string& kernel, const std::string& status, std::vector<double> samples) {
    ReportRow r;
    r.key.kernel = kernel;
    r.key.m = r.key.n = r.key.k = 64;
    r.key.dtype = "fp32";
    r.status = status;
    r.samples_ms = std::move(samples);
    return r;
}

// A GPU's own clock (CUPTI, events) moves by a percent or two between runs; the shared CPU's default of 15 %
// would hide an 8 % GPU regression. Rows timed by a GPU's clock on both sides default to 5 %.
TEST(CompareReports, RowsTimedByAGpuClockDefaultToFivePercent) {
    const auto tight = evenly(1.0, 0.001, 20);
    for (const std::string timer : {"cupti", "cuda_event", "host"}) {
        SCOPED_TRACE(timer);
        ReportFile a, b;  // no plugin hashes: no controls
        ReportRow slow_a = row("eight_percent", "ok", tight), slow_b = row("eight_percent", "ok", scaled(tight, 1.08));
        slow_a.timer = slow_b.timer = timer;
        a.rows = {slow_a};
        b.rows = {slow_b};
        const Comparison c = compare_reports(a, b, CompareOptions{});
        ASSERT_EQ(c.rows.size(), 1u);
        EXPECT_EQ(c.rows[0].verdict, timer == "host" ? Verdict::same : Verdict::slower) << c.rows[0].note;
        CompareOptions explicit_threshold;
        explicit_threshold.threshold = 0.10;  // --threshold wins over every default
        EXPECT_EQ(compare_reports(a, b, explicit_threshold).rows[0].verdict, Verdict::same);
    }
}

TEST(CompareReports, JoinsRowsAndMarksRegressions) {
    const auto tight = evenly(1.0, 0.001, 10);
    ReportFile a, b;  // no plugin hashes (a hand-made report): no controls, the 10 % default
    a.rows = {row("same", "ok", tight),          row("slow", "ok", tight),    row("fast", "ok", tight),
              row("broke", "ok", tight),         row("fixed", "crashed", {}), row("gone", "ok", tight),
              row("both_skipped", "skipped", {})};
    b.rows = {row("same", "ok", tight),
              row("slow", "ok", scaled(tight, 1.5)),
              row("fast", "ok", scaled(tight, 0.5)),
              row("broke", "wrong_result", {}),
              row("fixed", "ok", tight),
              row("new", "ok", tight),
              row("both_skipped", "skipped", {})};
    const Comparison c = compare_reports(a, b, CompareOptions{});
    std::map<std::string, const RowComparison*> by_kernel;
    for (const auto& r : c.rows) by_kernel[r.key.kernel] = &r;
    ASSERT_EQ(c.rows.size(), 8u);
    EXPECT_EQ(by_kernel["same"]->verdict, Verdict::same);
    EXPECT_EQ(by_kernel["slow"]->verdict, Verdict::slower);
    EXPECT_TRUE(by_kernel["slow"]->regression);
    EXPECT_EQ(by_kernel["fast"]->verdict, Verdict::faster);
    EXPECT_FALSE(by_kernel["fast"]->regression);
    EXPECT_EQ(by_kernel["broke"]->verdict, Verdict::status_changed);
    EXPECT_TRUE(by_kernel["broke"]->regression);
    EXPECT_EQ(by_kernel["fixed"]->verdict, Verdict::status_changed);
    EXPECT_FALSE(by_kernel["fixed"]->regression);
    EXPECT_EQ(by_kernel["gone"]->verdict, Verdict::missing_in_b);
    EXPECT_FALSE(by_kernel["gone"]->regression);
    EXPECT_EQ(by_kernel["new"]->verdict, Verdict::missing_in_a);
    EXPECT_EQ(by_kernel["both_skipped"]->verdict, Verdict::same);
    EXPECT_EQ(c.regressions(), 2u);
    EXPECT_EQ(c.rows.back().key.kernel, "new");  // rows only B has come last

    CompareOptions strict_missing;
    strict_missing.fail_on_missing = true;
    EXPECT_EQ(compare_reports(a, b, strict_missing).regressions(), 3u);

    // The machine-readable forms say the same.
    const nlohmann::json j = comparison_to_json(a, b, c);
    EXPECT_EQ(j["summary"]["regressions"], 2);
    EXPECT_EQ(j["summary"]["slower"], 1);
    EXPECT_EQ(j["rows"][1]["verdict"], "slower");
    const std::string csv = comparison_to_csv(c);
    EXPECT_EQ(
        csv.substr(0, csv.find('\n')),
        "kernel,m,n,k,dtype,params,status_a,status_b,median_a_ms,median_b_ms,ratio,p_value,samples_a,samples_b,verdict,"
        "regression,note,adjusted_ratio,noise_floor,control,plugin_unchanged,value_a_ms,value_b_ms,between_rounds");
    EXPECT_NE(csv.find("\nslow,64,64,64,fp32,,ok,ok,1,1.5,1.5,"), std::string::npos) << csv;
}

// Synthetic runs for the noise model: `kernels` x `sizes` rows, each a tight sample set around a base time,
// B's times scaled per row. A row's plugin hash is its kernel's, the same in both runs unless changed.
struct SyntheticRuns {
    ReportFile a, b;
};
SyntheticRuns synthetic_runs(const std::vector<std::string>& kernels, const std::vector<int64_t>& sizes,
                             const std::function<double(const std::string&, int64_t)>& b_factor,
                             const std::vector<std::string>& changed_plugins = {}) {
    SyntheticRuns runs;
    runs.a.kreg_version = runs.b.kreg_version = "0.1.0";
    for (const auto& kernel : kernels) {
        for (int64_t size : sizes) {
            ReportRow r = row(kernel, "ok", evenly(1e-6 * double(size * size * size), 0.002, 20));
            r.key.m = r.key.n = r.key.k = size;
            r.plugin_sha256 = "sha-of-" + kernel;
            ReportRow rb = r;
            rb.samples_ms = scaled(r.samples_ms, b_factor(kernel, size));
            if (std::count(changed_plugins.begin(), changed_plugins.end(), kernel)) rb.plugin_sha256 += "-rebuilt";
            runs.a.rows.push_back(r);
            runs.b.rows.push_back(rb);
        }
    }
    return runs;
}

const std::vector<int64_t> kSizes = {64, 128, 256, 512};

// The machine 20 % slower in B, every plugin unchanged: the controls see the drift, nothing is slower.
TEST(NoiseModel, AGlobalDriftOfUnchangedRowsIsSame) {
    // +-2 % of per-row jitter on top of the drift, as two real runs have.
    const auto runs = synthetic_runs({"naive", "blocked", "mine"}, kSizes, [](const std::string& k, int64_t s) {
        return 1.20 * (1.0 + 0.02 * std::sin(double(s) + double(k.size())));
    });
    const Comparison c = compare_reports(runs.a, runs.b, CompareOptions{});
    EXPECT_TRUE(c.model.drift_corrected);
    EXPECT_EQ(c.model.control_rows, 12u);
    EXPECT_NEAR(c.model.drift, 1.20, 0.03);
    EXPECT_DOUBLE_EQ(c.model.threshold, kDefaultThresholdWithControls);
    for (const auto& r : c.rows) {
        EXPECT_EQ(r.verdict, Verdict::same) << r.key.kernel << " " << r.key.m << ": " << r.note;
        EXPECT_TRUE(r.plugin_unchanged);
        EXPECT_TRUE(r.control);
        EXPECT_NE(r.note.find("plugin unchanged"), std::string::npos) << r.note;
    }
    EXPECT_EQ(c.regressions(), 0u);
    // The old model (no drift correction, 5 %) would have called every row slower: the test tests something.
    CompareOptions no_controls;
    no_controls.controls = {"no_such_kernel"};
    no_controls.threshold = 0.05;
    EXPECT_EQ(compare_reports(runs.a, runs.b, no_controls).count(Verdict::slower), runs.a.rows.size());
}

// One rebuilt plugin 25 % slower among unchanged controls, on a machine 20 % slower: slower at every size,
// a regression at every size, and the controls stay same.
TEST(NoiseModel, AChangedPluginTwentyFivePercentSlowerUnderDriftIsSlowerAtEverySize) {
    const auto runs = synthetic_runs({"naive", "blocked", "mine"}, kSizes,
                                     [](const std::string& k, int64_t s) {
                                         return 1.20 * (k == "mine" ? 1.25 : 1.0) *
                                                (1.0 + 0.02 * std::sin(double(s) + double(k.size())));
                                     },
                                     {"mine"});
    const Comparison c = compare_reports(runs.a, runs.b, CompareOptions{});
    EXPECT_EQ(c.model.control_rows, 8u);  // "mine" changed: not a control
    EXPECT_NEAR(c.model.drift, 1.20, 0.03);
    for (const auto& r : c.rows) {
        const bool mine = r.key.kernel == "mine";
        EXPECT_EQ(r.verdict, mine ? Verdict::slower : Verdict::same)
            << r.key.kernel << " " << r.key.m << ": " << r.note;
        EXPECT_EQ(r.regression, mine);
        EXPECT_EQ(r.plugin_unchanged, !mine);
        EXPECT_NEAR(*r.samples.adjusted_ratio, mine ? 1.25 : 1.0, 0.04);
    }
    EXPECT_EQ(c.regressions(), kSizes.size());
    // Named controls instead of every unchanged row: the same verdicts.
    CompareOptions named;
    named.controls = {"na*", "blocked"};
    const Comparison by_name = compare_reports(runs.a, runs.b, named);
    EXPECT_EQ(by_name.model.control_rows, 8u);
    EXPECT_EQ(by_name.regressions(), kSizes.size());
}

// Controls that scatter (a loaded machine) raise every row's floor to k sigma: a 25 % change is then noise.
TEST(NoiseModel, TheNoiseFloorGrowsWithScatteredControls) {
    const auto jitter = [](double amplitude) {
        return [amplitude](const std::string& k, int64_t s) {
            const double wobble = 1.0 + amplitude * std::sin(3.7 * double(s) + double(k.size()));
            return (k == "mine" ? 1.25 : 1.0) * wobble;
        };
    };
    const auto calm = synthetic_runs({"naive", "blocked", "mine"}, kSizes, jitter(0.01), {"mine"});
    const auto loaded = synthetic_runs({"naive", "blocked", "mine"}, kSizes, jitter(0.15), {"mine"});
    const Comparison quiet = compare_reports(calm.a, calm.b, CompareOptions{});
    const Comparison noisy = compare_reports(loaded.a, loaded.b, CompareOptions{});
    EXPECT_GT(noisy.model.between_run_sigma, 5 * quiet.model.between_run_sigma);
    for (const auto& r : quiet.rows) EXPECT_DOUBLE_EQ(r.samples.noise_floor, kDefaultThresholdWithControls);
    for (const auto& r : noisy.rows) {
        EXPECT_NEAR(r.samples.noise_floor,
                    std::max(std::expm1(kNoiseFloorSigmas * noisy.model.between_run_sigma),
                             noisy.model.widest_control_deviation),
                    1e-12);
        EXPECT_GT(r.samples.noise_floor, 0.25);
    }
    EXPECT_EQ(quiet.regressions(), kSizes.size());
    EXPECT_EQ(noisy.regressions(), 0u);  // too noisy to tell 25 %, and it says so per row
    EXPECT_NE(noisy.rows.back().note.find("within the noise floor"), std::string::npos) << noisy.rows.back().note;
}

// Without enough controls there is no drift estimate: nothing is corrected, the threshold is the
// no-controls default, and the model says so.
// Heavy tails: seven controls agree to 1 % and one strayed 40 %. The MAD's sigma does not see it (1 % x 3),
// but a row that moved 30 % moved less than that control did: not news.
TEST(NoiseModel, NoRowIsSlowerForMovingLessThanAControlDid) {
    const auto runs = synthetic_runs({"naive", "blocked", "mine"}, kSizes,
                                     [](const std::string& k, int64_t s) {
                                         if (k == "mine") return 1.30;
                                         if (k == "naive" && s == 512) return 1.40;
                                         return 1.0 + 0.01 * std::sin(double(s) + double(k.size()));
                                     },
                                     {"mine"});
    const Comparison c = compare_reports(runs.a, runs.b, CompareOptions{});
    EXPECT_LT(std::expm1(kNoiseFloorSigmas * c.model.between_run_sigma), 0.1);
    EXPECT_NEAR(c.model.widest_control_deviation, 0.40, 0.03);
    for (const auto& r : c.rows) {
        EXPECT_EQ(r.verdict, Verdict::same) << r.key.kernel << " " << r.key.m << ": " << r.note;
        EXPECT_GE(r.samples.noise_floor, c.model.widest_control_deviation);
    }
    EXPECT_EQ(c.regressions(), 0u);
}

TEST(NoiseModel, NoControlsMeansNoDriftCorrectionAndTheDefaultThreshold) {
    const auto all_changed =
        synthetic_runs({"naive", "mine"}, kSizes, [](const std::string&, int64_t) { return 1.08; }, {"naive", "mine"});
    const Comparison none = compare_reports(all_changed.a, all_changed.b, CompareOptions{});
    EXPECT_FALSE(none.model.drift_corrected);
    EXPECT_EQ(none.model.control_rows, 0u);
    EXPECT_DOUBLE_EQ(none.model.drift, 1.0);
    EXPECT_EQ(none.model.note, "no control rows: drift not corrected");
    EXPECT_DOUBLE_EQ(none.model.threshold, kDefaultThresholdWithoutControls);
    for (const auto& r : none.rows) {
        EXPECT_EQ(r.verdict, Verdict::same) << r.note;  // 8 % is below 10 %
        EXPECT_DOUBLE_EQ(*r.samples.adjusted_ratio, *r.samples.ratio);
    }
    // Two controls are not enough either.
    const auto two =
        synthetic_runs({"naive", "mine"}, {64, 128}, [](const std::string&, int64_t) { return 1.3; }, {"mine"});
    const Comparison few = compare_reports(two.a, two.b, CompareOptions{});
    EXPECT_FALSE(few.model.drift_corrected);
    EXPECT_EQ(few.model.note, "2 control row(s), fewer than 3: drift not corrected");
    EXPECT_EQ(few.regressions(), 2u);  // mine 30 % slower is beyond 10 %; naive is slower too but unchanged
    EXPECT_EQ(few.count(Verdict::slower), 4u);
    // An explicit threshold wins over the default.
    CompareOptions fifty;
    fifty.threshold = 0.5;
    EXPECT_EQ(compare_reports(two.a, two.b, fifty).regressions(), 0u);
}

// Another kreg version, or a hash only one side has, is not "unchanged": the binary may not be what ran.
// Rounds of both sides, as a loaded machine gives them: every call of B's rows `drift` slower, each round's
// rows wobbling by up to +-`round_wobble` together and by up to +-`row_wobble` each, and in every run `loaded`
// of the calls (a fraction) preempted, 1.5x to 3x longer; "mine" is `mine_factor` slower in B, rebuilt
// when that is not 1. The fastest calls of a row are never preempted (load only adds time).
struct SyntheticRounds {
    std::vector<ReportFile> a, b;
    std::vector<const ReportFile*> a_ptrs() const { return pointers(a); }
    std::vector<const ReportFile*> b_ptrs() const { return pointers(b); }
    static std::vector<const ReportFile*> pointers(const std::vector<ReportFile>& runs) {
        std::vector<const ReportFile*> out;
        for (const auto& r : runs) out.push_back(&r);
        return out;
    }
};
struct RoundsSpec {
    int rounds = 3;
    double drift = 1.20, mine_factor = 1.0, round_wobble = 0.03, row_wobble = 0.02, loaded = 0.5;
    std::function<double(const std::string&, int64_t)> b_kind_factor = [](const std::string&, int64_t) { return 1.0; };
};
SyntheticRounds synthetic_rounds(const RoundsSpec& spec, unsigned seed = 1) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0), preempted(1.5, 3.0), coin(0.0, 1.0);
    SyntheticRounds out;
    for (int side = 0; side < 2; ++side) {
        for (int round = 0; round < spec.rounds; ++round) {
            ReportFile run;
            run.kreg_version = "0.1.0";
            const double round_factor = 1.0 + spec.round_wobble * unit(gen);
            for (const std::string kernel : {"naive", "blocked", "mine"}) {
                for (int64_t size : kSizes) {
                    double factor = round_factor * (1.0 + spec.row_wobble * unit(gen));
                    if (side == 1) factor *= spec.drift * spec.b_kind_factor(kernel, size);
                    if (side == 1 && kernel == "mine") factor *= spec.mine_factor;
                    ReportRow r = row(kernel, "ok", evenly(1e-6 * double(size * size * size) * factor, 0.002, 20));
                    r.key.m = r.key.n = r.key.k = size;
                    for (std::size_t i = 4; i < r.samples_ms.size(); ++i)  // the four fastest always run alone
                        if (coin(gen) < spec.loaded) r.samples_ms[i] *= preempted(gen);
                    r.plugin_sha256 = "sha-of-" + kernel +
                                      (side == 1 && kernel == "mine" && spec.mine_factor != 1.0 ? "-rebuilt" : "");
                    run.rows.push_back(r);
                }
            }
            (side == 0 ? out.a : out.b).push_back(std::move(run));
        }
    }
    return out;
}

CompareOptions judged_against(std::vector<std::string> controls) {
    CompareOptions options;
    options.controls = std::move(controls);
    return options;
}

// The issue's gate on synthetic drift: a machine 20 % slower for all of B, rounds wobbling, half the calls
// preempted. The same binary of "mine" (judged, not a control) is same at every size; a build 30 % slower
// is slower and a regression at every size; the controls stay same.
TEST(Rounds, ACommonTwentyPercentDriftIsSameAndAThirtyPercentSlowerBuildIsSlowerAtEverySize) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
        RoundsSpec unchanged;
        const auto same_runs = synthetic_rounds(unchanged, seed);
        const Comparison same =
            compare_runs(same_runs.a_ptrs(), same_runs.b_ptrs(), judged_against({"naive", "blocked"}));
        EXPECT_NEAR(same.model.drift, 1.20, 0.08) << seed;  // each side's fastest round: +-3 % a round
        for (const auto& r : same.rows) {
            EXPECT_EQ(r.verdict, Verdict::same) << seed << " " << r.key.kernel << " " << r.key.m << ": " << r.note;
            ASSERT_TRUE(r.samples.between_rounds) << "three runs a side: the row's own noise is known";
        }
        RoundsSpec slower = unchanged;
        slower.mine_factor = 1.30;
        const auto slower_runs = synthetic_rounds(slower, seed);
        const Comparison regressed =
            compare_runs(slower_runs.a_ptrs(), slower_runs.b_ptrs(), judged_against({"naive", "blocked"}));
        for (const auto& r : regressed.rows) {
            const bool mine = r.key.kernel == "mine";
            EXPECT_EQ(r.verdict, mine ? Verdict::slower : Verdict::same)
                << seed << " " << r.key.kernel << " " << r.key.m << ": " << r.note;
            EXPECT_EQ(r.regression, mine);
            if (mine) EXPECT_NEAR(*r.samples.adjusted_ratio, 1.30, 0.08) << r.note;
        }
        EXPECT_EQ(regressed.regressions(), kSizes.size()) << seed;
    }
}

// Load slows a share of the calls of every row: the median moves with it (here, B's rows were preempted more
// than A's), the fastest call does not. Judged on medians the unchanged "mine" is slower; on the fastest
// call it is same.
TEST(Rounds, LoadThatSlowsSomeCallsMovesTheMedianButNotTheFastestCall) {
    RoundsSpec spec;
    spec.drift = 1.0;
    spec.loaded = 0.0;
    auto runs = synthetic_rounds(spec, 3);
    std::mt19937 gen(5);
    std::uniform_real_distribution<double> preempted(2.0, 3.0), coin(0.0, 1.0);
    for (auto& run : runs.b)  // B beside a busy core: nine calls in ten of "mine" preempted, none of the controls
        for (auto& r : run.rows)
            if (r.key.kernel == "mine")
                for (std::size_t i = 4; i < r.samples_ms.size(); ++i)
                    if (coin(gen) < 0.9) r.samples_ms[i] *= preempted(gen);
    CompareOptions by_median = judged_against({"naive", "blocked"});
    by_median.statistic = RowStatistic::median;
    const Comparison medians = compare_runs(runs.a_ptrs(), runs.b_ptrs(), by_median);
    const Comparison fastest = compare_runs(runs.a_ptrs(), runs.b_ptrs(), judged_against({"naive", "blocked"}));
    for (std::size_t i = 0; i < fastest.rows.size(); ++i) {
        if (fastest.rows[i].key.kernel != "mine") continue;
        EXPECT_EQ(medians.rows[i].verdict, Verdict::slower)
            << "the test must move the median: " << medians.rows[i].note;
        EXPECT_EQ(fastest.rows[i].verdict, Verdict::same) << fastest.rows[i].note;
        EXPECT_NEAR(*fastest.rows[i].samples.adjusted_ratio, 1.0, 0.06);
    }
}

// Controls of another kind: the multithreaded "blocked" rows are 2x slower in B beside a busy core, the
// single-threaded ones are not. With one run a side the widest control (100 %) is every row's floor and a
// 30 % slower build goes unseen; with three runs a side each row's floor is its own spread over its runs
// and the build is slower at every size, while the same binary stays same.
TEST(Rounds, ARowWithItsOwnRunsIsNotHeldToTheWidestControlOfAnotherKind) {
    RoundsSpec spec;
    spec.mine_factor = 1.30;
    spec.b_kind_factor = [](const std::string& k, int64_t s) { return k == "blocked" && s >= 256 ? 2.0 : 1.0; };
    const auto runs = synthetic_rounds(spec, 11);
    const auto options = judged_against({"naive", "blocked"});
    const Comparison single = compare_reports(runs.a[0], runs.b[0], options);
    EXPECT_GT(single.model.widest_control_deviation, 0.5);
    for (const auto& r : single.rows) {
        EXPECT_FALSE(r.samples.between_rounds);
        EXPECT_GE(r.samples.noise_floor, single.model.widest_control_deviation);
    }
    EXPECT_EQ(single.regressions(), 0u);  // the single pair cannot tell: the widest control says so
    const Comparison rounds = compare_runs(runs.a_ptrs(), runs.b_ptrs(), options);
    for (const auto& r : rounds.rows) {
        if (r.key.kernel != "mine") continue;
        EXPECT_LT(r.samples.noise_floor, 0.2) << r.note;
        EXPECT_EQ(r.verdict, Verdict::slower) << r.key.m << ": " << r.note;
    }
    EXPECT_EQ(rounds.regressions(), kSizes.size());
    spec.mine_factor = 1.0;
    const auto unchanged = synthetic_rounds(spec, 11);
    const Comparison same = compare_runs(unchanged.a_ptrs(), unchanged.b_ptrs(), options);
    for (const auto& r : same.rows)
        if (r.key.kernel == "mine") EXPECT_EQ(r.verdict, Verdict::same) << r.key.m << ": " << r.note;
}

// Judged on medians, a row whose median wanders from run to run (here by up to +-40 % a round) is held to
// that: its floor is 3 x its robust sigma over the runs, and a 30 % change is within it.
TEST(Rounds, ARowWhoseMedianWandersOverItsRunsHasAWideFloor) {
    RoundsSpec spec;
    spec.mine_factor = 1.30;
    spec.row_wobble = 0.40;
    spec.rounds = 5;
    const auto runs = synthetic_rounds(spec, 4);
    CompareOptions by_median = judged_against({"naive", "blocked"});
    by_median.statistic = RowStatistic::median;
    const Comparison c = compare_runs(runs.a_ptrs(), runs.b_ptrs(), by_median);
    for (const auto& r : c.rows) {
        ASSERT_TRUE(r.samples.between_rounds);
        EXPECT_GT(*r.samples.between_rounds, 0.1) << r.key.kernel << " " << r.key.m;
        EXPECT_GE(r.samples.noise_floor, *r.samples.between_rounds);
    }
    EXPECT_EQ(c.regressions(), 0u);
    // The rebuilt rows that moved beyond the threshold say why they are same (the seed fixes the draw).
    EXPECT_GE(std::count_if(c.rows.begin(), c.rows.end(),
                            [](const RowComparison& r) {
                                return r.key.kernel == "mine" &&
                                       r.note.find("within the noise floor") != std::string::npos;
                            }),
              1);
}

// A whole run of a row slowed (the row ran beside a busy hyperthread sibling: every call 25 % slower, its
// fastest too), in three of A's five runs and in two of B's. The median of the runs' fastest calls would
// call the same binary 25 % faster; the fastest of all runs is the code's on both sides, and two runs agree
// on it, so the floor stays low and a 30 % slower build is slower. Where only one run of a side was left
// alone, its second fastest run stands 25 % above it and that is the floor.
TEST(Rounds, TheFastestOfAllRunsNeedsOneUndisturbedRunAndTheSecondFastestSaysHowSure) {
    const auto with_slowed_runs = [](double mine_factor, std::vector<int> slowed_a, std::vector<int> slowed_b) {
        RoundsSpec spec;
        spec.rounds = 5;
        spec.drift = 1.0;
        spec.round_wobble = spec.row_wobble = 0.005;
        spec.loaded = 0.3;
        spec.mine_factor = mine_factor;
        auto runs = synthetic_rounds(spec, 9);
        for (auto [side, slowed] : {std::pair{&runs.a, slowed_a}, std::pair{&runs.b, slowed_b}})
            for (int round : slowed)
                for (auto& r : (*side)[std::size_t(round)].rows)
                    if (r.key.kernel == "mine") r.samples_ms = scaled(r.samples_ms, 1.25);
        return runs;
    };
    const auto options = judged_against({"naive", "blocked"});
    const auto unchanged = with_slowed_runs(1.0, {0, 1, 2}, {3, 4});
    const Comparison same = compare_runs(unchanged.a_ptrs(), unchanged.b_ptrs(), options);
    for (const auto& r : same.rows) {
        if (r.key.kernel != "mine") continue;
        EXPECT_EQ(r.verdict, Verdict::same) << r.key.m << ": " << r.note;
        EXPECT_NEAR(*r.samples.adjusted_ratio, 1.0, 0.03) << r.note;
        EXPECT_LT(*r.samples.between_rounds, 0.05) << r.note;
    }
    const auto rebuilt = with_slowed_runs(1.30, {0, 1, 2}, {3, 4});
    const Comparison slower = compare_runs(rebuilt.a_ptrs(), rebuilt.b_ptrs(), options);
    EXPECT_EQ(slower.regressions(), kSizes.size());
    const auto one_clean = with_slowed_runs(1.0, {0, 1, 2, 3}, {});
    const Comparison unsure = compare_runs(one_clean.a_ptrs(), one_clean.b_ptrs(), options);
    for (const auto& r : unsure.rows)
        if (r.key.kernel == "mine") EXPECT_GT(*r.samples.between_rounds, 0.2) << r.key.m << ": " << r.note;
}

TEST(NoiseModel, UnchangedNeedsTheSameHashAndTheSameKregVersion) {
    auto runs = synthetic_runs({"naive", "blocked", "mine"}, kSizes, [](const std::string&, int64_t) { return 1.3; });
    EXPECT_EQ(compare_reports(runs.a, runs.b, CompareOptions{}).regressions(), 0u);  // unchanged: the machine's
    runs.b.kreg_version = "0.2.0";
    const Comparison other_kreg = compare_reports(runs.a, runs.b, CompareOptions{});
    EXPECT_EQ(other_kreg.model.control_rows, 0u);
    EXPECT_EQ(other_kreg.regressions(), runs.a.rows.size());
    runs.b.kreg_version = runs.a.kreg_version;
    for (auto& r : runs.b.rows) r.plugin_sha256.clear();
    EXPECT_EQ(compare_reports(runs.a, runs.b, CompareOptions{}).regressions(), runs.a.rows.size());
}

TEST(MedianInterval, IsDistributionFreeAndCoversTheWholeRangeForFewSamples) {
    EXPECT_DOUBLE_EQ(median_interval_half_width({}), 0.0);
    EXPECT_NEAR(median_interval_half_width({0.9, 1.0, 1.1}), 0.1, 1e-12);  // three samples: the whole range
    // 100 samples 1..100: ranks 40 and 61 (n/2 -+ 1.96 sqrt(n)/2), around a median of 50.5.
    std::vector<double> hundred;
    for (int i = 1; i <= 100; ++i) hundred.push_back(i);
    EXPECT_NEAR(median_interval_half_width(hundred), (61.0 - 40.0) / (2 * 50.5), 1e-12);
    // An interrupted sample in the tail does not widen it.
    hundred.back() = 1e6;
    EXPECT_NEAR(median_interval_half_width(hundred), (61.0 - 40.0) / (2 * 50.5), 1e-12);
}

TEST(ReadReportRows, PluginHashesComeFromMetaByPathOrUnambiguousName) {
    const auto dir = kScratch.fresh_dir("hashes");
    const std::string path = (dir / "r.json").string();
    std::ofstream(path) << R"({"meta": {"kreg_version": "0.1.0", "plugins": [
            {"path": "/p/one.so", "name": "one", "sha256": "aaa"},
            {"path": "/p/two.so", "name": "two", "sha256": "bbb"},
            {"path": "/q/two.so", "name": "two", "sha256": "ccc"}, 7, {"name": "three"}]},
        "records": [
        {"kernel": "k1", "plugin": "one", "plugin_path": "/p/one.so", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1]},
        {"kernel": "k2", "plugin": "one", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1]},
        {"kernel": "k3", "plugin": "two", "plugin_path": "/q/two.so", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1]},
        {"kernel": "k4", "plugin": "two", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1]},
        {"kernel": "k5", "plugin": "three", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1]}]})";
    const ReportFile r = read_report_rows(path);
    EXPECT_EQ(r.kreg_version, "0.1.0");
    ASSERT_EQ(r.rows.size(), 5u);
    EXPECT_EQ(r.rows[0].plugin_sha256, "aaa");
    EXPECT_EQ(r.rows[1].plugin_sha256, "aaa");  // by name: one build of "one"
    EXPECT_EQ(r.rows[2].plugin_sha256, "ccc");  // by path
    EXPECT_EQ(r.rows[3].plugin_sha256, "");     // two builds named "two": which one ran is not known
    EXPECT_EQ(r.rows[4].plugin_sha256, "");     // no hash recorded
}

TEST(CompareReports, RowsDifferingOnlyInWarmCacheAreNotJoined) {
    const auto dir = kScratch.fresh_dir("params");
    const std::string path = (dir / "r.json").string();
    std::ofstream(path) << R"({"records": [
        {"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1], "extra": {"warm_cache": true}},
        {"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1], "extra": {"warm_cache": false}}]})";
    const ReportFile r = read_report_rows(path);
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_EQ(params_text(r.rows[0].key), "warm_cache=true");
    EXPECT_EQ(params_text(r.rows[1].key), "");  // cold cache is the default: no parameter
}

TEST(CompareReports, RowsTimedByCuptiAreNotJoinedWithRowsTimedByEvents) {
    // The same call reads a third shorter by its kernel records at small shapes: joined, the change of timer
    // would pass for a speed-up.
    const auto dir = kScratch.fresh_dir("timer");
    const std::string path = (dir / "r.json").string();
    std::ofstream(path) << R"({"records": [
        {"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1], "timer": "cupti"},
        {"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1], "timer": "cuda_event"}]})";
    const ReportFile r = read_report_rows(path);
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_EQ(params_text(r.rows[0].key), "timer=cupti");
    EXPECT_EQ(params_text(r.rows[1].key), "");  // events: the rows of every report before CUPTI
    EXPECT_FALSE(r.rows[0].key == r.rows[1].key);
}

// Every way a report can be unusable is an error naming the file and the JSON pointer.
TEST(ReadReportRows, BadInputNamesTheFileAndThePath) {
    const auto dir = kScratch.fresh_dir("bad");
    const std::string ok_row =
        R"({"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1.0]})";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{", "invalid JSON at line 1"},
        {"[]", "a kreg report is a JSON object"},
        {"{\"meta\": {}}", "no 'records'"},
        {"{\"records\": {}}", "/records: expected an array"},
        {"{\"records\": [" + ok_row + ", {\"m\": 8}]}", "/records/1: missing key 'kernel'"},
        {R"({"records": [{"kernel": "k", "m": 0, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1]}]})",
         "/records/0/m: size must be from 1"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp33", "status": "ok", "samples_ms": [1]}]})",
         "/records/0/dtype: unknown dtype 'fp33'"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "fine", "samples_ms": [1]}]})",
         "/records/0/status: unknown status 'fine'"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1, "x"]}]})",
         "/records/0/samples_ms/1: expected a number, got string"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [-1]}]})",
         "/records/0/samples_ms/0: a time must be a finite number >= 0"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": []}]})",
         "/records/0/samples_ms: an ok row without timing samples"},
        {"{\"records\": [" + ok_row + ", " + ok_row + "]}", "/records/1: the same row as /records/0"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::string path = (dir / ("bad" + std::to_string(i) + ".json")).string();
        std::ofstream(path) << cases[i].first;
        try {
            read_report_rows(path);
            ADD_FAILURE() << "no error for " << cases[i].first;
        } catch (const ConfigError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
            EXPECT_NE(what.find(cases[i].second), std::string::npos)
                << "expected '" << cases[i].second << "' in: " << what;
        }
    }
    EXPECT_THROW(read_report_rows(dir / "absent.json"), ConfigError);
}

// runner compare's option values, as compare_files.hpp checks them.
TEST(CompareOptionValues, ThresholdIsAPercentageBelow100) {
    EXPECT_DOUBLE_EQ(parse_threshold_percent("5%"), 0.05);
    EXPECT_DOUBLE_EQ(parse_threshold_percent("2.5"), 0.025);
    EXPECT_DOUBLE_EQ(parse_threshold_percent("0"), 0.0);
    for (const char* bad : {"", "%", "100", "-1", "5%%", "five", "nan", "5 %"}) {
        try {
            parse_threshold_percent(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("--threshold: expected a percentage", 0), 0u) << e.what();
        }
    }
}

TEST(CompareOptionValues, OutputIsNeverOverwrittenWithoutForce) {
    const std::filesystem::path dir = kScratch.fresh_dir("option_values_out");
    const std::string file = (dir / "c.json").string();
    EXPECT_NO_THROW(check_output_path(std::nullopt, false, "--json"));
    EXPECT_NO_THROW(check_output_path(file, false, "--json"));  // not there yet
    std::ofstream(file) << "{}";
    EXPECT_THROW(check_output_path(file, false, "--json"), std::invalid_argument);
    EXPECT_NO_THROW(check_output_path(file, true, "--json"));
    EXPECT_THROW(check_output_path(dir.string(), true, "--csv"), std::invalid_argument);  // a folder, even forced
    EXPECT_THROW(check_output_path(std::string(), true, "--csv"), std::invalid_argument);
}

}  // namespace
}  // namespace kreg
