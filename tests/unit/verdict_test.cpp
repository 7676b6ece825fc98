// judge_performance: the performance tier's verdict from the submission's and the reference's rows,
// including the physics check (a row faster than the roofline floor earns nothing, however fast).
#include "record_json.hpp"
#include "grade/verdict.hpp"
#include "grade/paired_ratio.hpp"
#include "measure/host_ceiling.hpp"
#include "measure/roofline.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kreg {
namespace {

PerformanceTier tier() {
    PerformanceTier t;
    t.name = "half of cuBLAS";
    t.points = 10;
    t.shape = {4096, 4096, 4096};
    t.reference = "cublas_sgemm";
    t.min_ratio = 0.5;
    return t;
}

Record row(const std::string& kernel, double median_ms, RowStatus status = RowStatus::ok) {
    Record r;
    r.kernel = kernel;
    r.shape = {4096, 4096, 4096};
    r.status = status;
    if (status == RowStatus::ok) {
        TimingStats s;
        s.count = 10;
        s.median_ms = s.min_ms = s.mean_ms = median_ms;
        r.stats = s;
    }
    return r;
}

// n rounds of the same submission and reference rows (a quiet machine).
PairedRounds rounds(const Record& mine, const Record& ref, int n = 3) {
    PairedRounds p;
    for (int i = 0; i < n; ++i) {
        p.submission.push_back(mine);
        p.reference.push_back(ref);
    }
    p.at_limit = true;
    return p;
}

// Rounds with the given medians (ms), submission and reference.
PairedRounds timed_rounds(const std::vector<double>& mine_ms, const std::vector<double>& ref_ms) {
    PairedRounds p;
    for (double ms : mine_ms) p.submission.push_back(row("student_gemm", ms));
    for (double ms : ref_ms) p.reference.push_back(row("cublas_sgemm", ms));
    return p;
}

// The H200's measured ceilings, as the grader gets them from a trusted worker.
void annotate(Record& r) {
    const nlohmann::json facts = {{"name", "test device"}, {"peaks", {{"fp32_tflops", 66.9}, {"dram_gbps", 4800.0}}}};
    const nlohmann::json ceilings = {{"dram_copy_gbps", 4300.0}, {"sgemm_tflops", 51.2}};
    annotate_roofline(r, facts, ceilings);
}

TEST(Verdict, RatioAtOrAboveTheTierEarnsItsPoints) {
    Record mine = row("student_gemm", 4.0);
    annotate(mine);
    const CheckResult c = judge_performance(tier(), rounds(mine, row("cublas_sgemm", 2.0)), 7, 1);
    EXPECT_TRUE(c.passed);
    EXPECT_EQ(c.points, 10);
    EXPECT_EQ(c.max_points, 10);
    EXPECT_DOUBLE_EQ(c.evidence["ratio"].get<double>(), 0.5);
    EXPECT_EQ(c.summary, "ratio 0.5 [0.5, 0.5] to cublas_sgemm (needs 0.5), 3 rounds: 4 ms vs 2 ms");
    EXPECT_EQ(c.evidence["submission"]["kernel"], "student_gemm");
    EXPECT_EQ(c.evidence["submission"]["seed"], 7);
    EXPECT_EQ(c.evidence["reference"]["seed"], 1);
    EXPECT_EQ(c.evidence["submission"]["roofline"]["faster_than_floor"], false);
    EXPECT_FALSE(c.evidence.contains("flag"));
}

TEST(Verdict, BelowTheTierEarnsNothing) {
    const CheckResult c = judge_performance(tier(), rounds(row("student_gemm", 4.1), row("cublas_sgemm", 2.0)), 7, 1);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.points, 0);
    EXPECT_NEAR(c.evidence["ratio"].get<double>(), 2.0 / 4.1, 1e-12);
}

TEST(Verdict, FasterThanPhysicsIsFlaggedAndEarnsNothing) {
    // 2*4096^3 FLOP in 1 ms is 137 TFLOP/s, twice the fp32 peak: a timer that was fooled, not a kernel.
    Record mine = row("student_gemm", 1.0);
    annotate(mine);
    ASSERT_EQ(extra_json(mine)["roofline"]["faster_than_floor"], true);
    const CheckResult c = judge_performance(tier(), rounds(mine, row("cublas_sgemm", 2.0)), 7, 1);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.points, 0);
    EXPECT_EQ(c.evidence["flag"], "faster_than_floor");
    EXPECT_FALSE(c.evidence.contains("ratio"));
    EXPECT_EQ(c.summary, "faster than the roofline floor allows: flagged, no points");
}

// CPU rows: the ceiling is the host's measured fp32 peak (annotate_cpu_roofline). A 2-socket 1 TFLOP/s
// host does 2*512^3 FLOP (0.27 GFLOP) in 0.27 ms at best; the floor is half of that.
PerformanceTier cpu_tier() {
    PerformanceTier t = tier();
    t.name = "half of cpu_blocked";
    t.shape = {512, 512, 512};
    t.reference = "cpu_blocked";
    return t;
}

Record cpu_row(const std::string& kernel, double median_ms) {
    Record r = row(kernel, median_ms);
    r.shape = {512, 512, 512};
    r.backend = Backend::cpu;
    return r;
}

TEST(Verdict, ACpuRowFasterThanTheHostsPeakIsFlagged) {
    Record mine = cpu_row("student_gemm", 0.05);  // 5.4 TFLOP/s on a 1 TFLOP/s host
    annotate_cpu_roofline(mine, 1e12);
    const CheckResult c = judge_performance(cpu_tier(), rounds(mine, cpu_row("cpu_blocked", 20.0)), 7, 1);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.points, 0);
    EXPECT_EQ(c.evidence["flag"], "faster_than_floor");
    EXPECT_EQ(c.evidence["submission"]["roofline"]["ceiling"], "host_fp32");
    EXPECT_EQ(c.summary, "faster than the host's measured fp32 peak allows: flagged, no points");
}

TEST(Verdict, APlausibleCpuRowIsJudgedOnItsRatio) {
    // 0.2 ms is 1.34 TFLOP/s: above the measured 1 TFLOP/s, within the safety factor (turbo, noise).
    Record mine = cpu_row("student_gemm", 0.2);
    annotate_cpu_roofline(mine, 1e12);
    ASSERT_EQ(extra_json(mine)["roofline"]["faster_than_floor"], false);
    const CheckResult c = judge_performance(cpu_tier(), rounds(mine, cpu_row("cpu_blocked", 0.4)), 7, 1);
    EXPECT_TRUE(c.passed) << c.summary;
    EXPECT_EQ(c.points, 10);
    EXPECT_FALSE(c.evidence.contains("flag"));
}

TEST(Verdict, AnUnmeasuredHostCeilingFlagsNothingAndSaysSo) {
    Record mine = cpu_row("student_gemm", 0.0001);
    annotate_cpu_roofline(mine, 0.0);
    EXPECT_TRUE(extra_json(mine)["roofline"].contains("unavailable"));
    const CheckResult c = judge_performance(cpu_tier(), rounds(mine, cpu_row("cpu_blocked", 0.4)), 7, 1);
    EXPECT_FALSE(c.evidence.contains("flag"));
    EXPECT_TRUE(c.evidence["submission"]["roofline"].contains("unavailable"));
}

TEST(Verdict, AFailedSubmissionOrReferenceEarnsNothingAndSaysWhich) {
    Record wrong = row("student_gemm", 0, RowStatus::wrong_result);
    wrong.reason = "timed call 2: error 0.5 at (1, 2)";
    wrong.extra.trusted_check = TrustedCheckEvidence{4, false, {}};
    CheckResult c = judge_performance(tier(), rounds(wrong, row("cublas_sgemm", 2.0)), 7, 1);
    EXPECT_EQ(c.points, 0);
    EXPECT_EQ(c.summary, "submission wrong_result: timed call 2: error 0.5 at (1, 2)");
    EXPECT_EQ(c.evidence["submission"]["trusted_check"]["passed"], false);

    Record broken_ref = row("cublas_sgemm", 0, RowStatus::failed);
    broken_ref.reason = "CUBLAS_STATUS_NOT_INITIALIZED";
    c = judge_performance(tier(), rounds(row("student_gemm", 4.0), broken_ref), 7, 1);
    EXPECT_EQ(c.points, 0);
    EXPECT_EQ(c.summary, "reference cublas_sgemm could not be measured: CUBLAS_STATUS_NOT_INITIALIZED");
}

// The interval, not two medians, decides: paired rounds that agree give a tight interval around the
// ratio; a machine that slows both sides of a round moves neither the ratio nor the verdict.
TEST(Verdict, LoadThatSlowsBothSidesOfARoundDoesNotMoveTheRatio) {
    // Round 2 ran while the machine was loaded: both took 2.5x longer.
    const PairedRounds p = timed_rounds({4.0, 10.0, 4.0}, {2.0, 5.0, 2.0});
    const CheckResult c = judge_performance(tier(), p, 7, 1);
    EXPECT_TRUE(c.passed) << c.summary;
    EXPECT_NEAR(c.evidence["ratio"].get<double>(), 0.5, 1e-12);
    EXPECT_NEAR(c.evidence["ratio_interval"]["low"].get<double>(), 0.5, 1e-12);
    EXPECT_EQ(c.evidence["rounds"].size(), 3u);
    EXPECT_EQ(c.evidence["decision"], "interval above the threshold");
    EXPECT_FALSE(tier_needs_more_rounds(tier(), p));
}

TEST(Verdict, AnIntervalThatStraddlesTheThresholdAsksForMoreRounds) {
    // Ratios 0.45, 0.55, 0.5: the interval contains 0.5.
    PairedRounds p = timed_rounds({4.0, 4.0, 4.0}, {1.8, 2.2, 2.0});
    EXPECT_TRUE(tier_needs_more_rounds(tier(), p));
    // At the limit the point estimate decides, and the evidence says it did.
    p.at_limit = true;
    const CheckResult c = judge_performance(tier(), p, 7, 1);
    const double ratio = c.evidence["ratio"].get<double>();
    EXPECT_LT(c.evidence["ratio_interval"]["low"].get<double>(), 0.5);
    EXPECT_GT(c.evidence["ratio_interval"]["high"].get<double>(), 0.5);
    EXPECT_EQ(c.passed, ratio >= 0.5);
    EXPECT_EQ(c.evidence["decision"],
              "interval straddles the threshold at the round limit: the point estimate decides");
    EXPECT_NE(c.summary.find("undecided at the limit"), std::string::npos) << c.summary;
}

TEST(Verdict, AnIntervalWhollyBelowEarnsNothingWithoutMoreRounds) {
    const PairedRounds p = timed_rounds({4.0, 4.1, 3.9}, {1.0, 1.0, 1.0});
    EXPECT_FALSE(tier_needs_more_rounds(tier(), p));
    const CheckResult c = judge_performance(tier(), p, 7, 1);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.evidence["decision"], "interval below the threshold");
}

TEST(Verdict, OneRoundIsNeverEnoughToDecideWithoutTheLimit) {
    PairedRounds p = timed_rounds({1.0}, {4.0});
    EXPECT_TRUE(tier_needs_more_rounds(tier(), p));
    p.at_limit = true;
    EXPECT_TRUE(judge_performance(tier(), p, 7, 1).passed);
}

TEST(Verdict, AFailedOrFlaggedRoundEndsTheRoundsAndDecides) {
    PairedRounds p = timed_rounds({4.0, 4.0}, {2.0});
    p.submission.back() = row("student_gemm", 0, RowStatus::timeout);
    p.submission.back().reason = "call 3 took longer than 60 s";
    EXPECT_FALSE(tier_needs_more_rounds(tier(), p));
    const CheckResult c = judge_performance(tier(), p, 7, 1);
    EXPECT_EQ(c.points, 0);
    EXPECT_EQ(c.summary, "submission timeout: call 3 took longer than 60 s");

    // One round of three faster than physics taints the tier, whatever the others say.
    PairedRounds q = timed_rounds({4.0, 1.0, 4.0}, {2.0, 2.0, 2.0});
    for (Record& r : q.submission) annotate(r);
    EXPECT_FALSE(tier_needs_more_rounds(tier(), q));
    const CheckResult flagged = judge_performance(tier(), q, 7, 1);
    EXPECT_EQ(flagged.evidence["flag"], "faster_than_floor");
    EXPECT_EQ(flagged.points, 0);
}

TEST(PairedRatio, StudentTIntervalOnTheLogRatios) {
    // log ratios ln2, ln2, ln2 + ln(1.1): mean and spread by hand.
    const RatioInterval r = paired_ratio({2.0, 2.0, 2.2}, {1.0, 1.0, 1.0});
    const double l = std::log(1.1), mean = (2 * std::log(2.0) + std::log(2.2)) / 3;
    const double sd = std::sqrt(((l / 3) * (l / 3) * 2 + (2 * l / 3) * (2 * l / 3)) / 2);
    const double half = 4.303 * sd / std::sqrt(3.0);
    EXPECT_NEAR(r.ratio, std::exp(mean), 1e-12);
    EXPECT_NEAR(r.low, std::exp(mean - half), 1e-9);
    EXPECT_NEAR(r.high, std::exp(mean + half), 1e-9);
    EXPECT_EQ(r.rounds, 3);
    EXPECT_EQ(decide_tier(r, 1.5), TierDecision::above);
    EXPECT_EQ(decide_tier(r, 3.0), TierDecision::below);
    EXPECT_EQ(decide_tier(r, 2.05), TierDecision::undecided);
}

TEST(PairedRatio, QuantilesAndBadInput) {
    EXPECT_DOUBLE_EQ(student_t_quantile(0.95, 1), 12.706);
    EXPECT_DOUBLE_EQ(student_t_quantile(0.95, 30), 2.042);
    EXPECT_NEAR(student_t_quantile(0.95, 60), 2.000, 2e-3);
    EXPECT_NEAR(student_t_quantile(0.95, 1000000), 1.95996, 1e-4);
    EXPECT_THROW(student_t_quantile(0.8, 3), std::invalid_argument);
    EXPECT_THROW(paired_ratio({1.0}, {1.0, 2.0}), std::invalid_argument);
    EXPECT_THROW(paired_ratio({1.0, 0.0}, {1.0, 2.0}), std::invalid_argument);
    EXPECT_THROW(paired_ratio({1.0, std::nan("")}, {1.0, 2.0}), std::invalid_argument);
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

// ---- Tiers against the copy ceiling (transposes) ----

PerformanceTier copy_tier(double fraction = 0.8) {
    PerformanceTier t;
    t.name = "80% of the copy bandwidth";
    t.points = 10;
    t.shape = {8192, 8192, 0, 0};
    t.min_fraction_of_copy = fraction;
    return t;
}

// A CUDA transpose round at 8192^2 taking median_ms, with the roofline the grader gives it against a
// copy ceiling of ceiling_gbps (0: none measured).
Record transpose_round(double median_ms, double ceiling_gbps = 4000.0) {
    Record r = row("student_transpose", median_ms);
    r.operation = Operation::transpose;
    r.backend = Backend::cuda;
    r.shape = {8192, 8192, 0, 0};
    const nlohmann::json ceilings =
        ceiling_gbps > 0 ? nlohmann::json{{"dram_copy_gbps", ceiling_gbps}} : nlohmann::json(nullptr);
    annotate_roofline(r, nlohmann::json::object(), ceilings);
    return r;
}

// 8192^2 floats read once and written once: 536.9 MB; at 4000 GB/s a copy takes 0.1342 ms.
constexpr double kCopyMs = 2.0 * 8192.0 * 8192.0 * 4.0 / 4000e9 * 1e3;

TEST(CopyCeilingTier, AFractionAtOrAboveTheThresholdEarnsThePoints) {
    const std::vector<Record> rounds{transpose_round(kCopyMs / 0.90), transpose_round(kCopyMs / 0.91),
                                     transpose_round(kCopyMs / 0.89)};
    EXPECT_FALSE(copy_tier_needs_more_rounds(copy_tier(), rounds));
    const CheckResult c = judge_copy_fraction(copy_tier(), rounds, 7);
    EXPECT_TRUE(c.passed) << c.summary;
    EXPECT_EQ(c.points, 10);
    EXPECT_NEAR(c.evidence["fraction_of_copy"].get<double>(), 0.90, 0.01) << c.evidence.dump();
    EXPECT_EQ(c.evidence["ceiling_gbps"], 4000.0);
    EXPECT_EQ(c.evidence["rounds"].size(), 3u);
    EXPECT_EQ(c.evidence["decision"], "interval above the threshold");
    EXPECT_NE(c.summary.find("(needs 0.8) of the 4000 GB/s the grader measured, 3 rounds"), std::string::npos)
        << c.summary;
}

TEST(CopyCeilingTier, BelowTheThresholdEarnsNothing) {
    const std::vector<Record> rounds{transpose_round(kCopyMs / 0.40), transpose_round(kCopyMs / 0.41),
                                     transpose_round(kCopyMs / 0.39)};
    const CheckResult c = judge_copy_fraction(copy_tier(), rounds, 7);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.points, 0);
    EXPECT_EQ(c.evidence["decision"], "interval below the threshold");
}

TEST(CopyCeilingTier, WithoutAMeasuredCeilingTheTierIsNotJudgedAndSaysWhy) {
    // A fast round that would pass, were there a ceiling: no points, and the summary says so.
    const std::vector<Record> rounds{transpose_round(kCopyMs, 0), transpose_round(kCopyMs, 0),
                                     transpose_round(kCopyMs, 0)};
    EXPECT_FALSE(copy_tier_needs_more_rounds(copy_tier(), rounds)) << "another round cannot bring a ceiling";
    const CheckResult c = judge_copy_fraction(copy_tier(), rounds, 7);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.points, 0);
    EXPECT_NE(
        c.summary.find(
            "not judged, no points: the copy ceiling is unavailable: no measured device-to-device copy bandwidth"),
        std::string::npos)
        << c.summary;
    EXPECT_TRUE(c.evidence.contains("ceiling_unavailable")) << c.evidence.dump();
    // A CPU row has no GPU ceiling at all.
    Record cpu = row("student_transpose", 1.0);
    cpu.operation = Operation::transpose;
    cpu.backend = Backend::cpu;
    const CheckResult on_cpu = judge_copy_fraction(copy_tier(), {cpu}, 7);
    EXPECT_FALSE(on_cpu.passed);
    EXPECT_NE(on_cpu.summary.find("the graded kernel ran on the CPU"), std::string::npos) << on_cpu.summary;
}

TEST(CopyCeilingTier, FasterThanTheCopyCeilingIsFlagged) {
    // 1.2x the copy bandwidth: a transpose moves a copy's bytes and more slowly, never this fast.
    const std::vector<Record> rounds{transpose_round(kCopyMs / 0.9), transpose_round(kCopyMs / 1.2),
                                     transpose_round(kCopyMs / 0.9)};
    EXPECT_TRUE(rounds[1].extra.roofline->faster_than_floor.value_or(false));
    EXPECT_FALSE(copy_tier_needs_more_rounds(copy_tier(), rounds));
    const CheckResult c = judge_copy_fraction(copy_tier(), rounds, 7);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.evidence["flag"], "faster_than_floor");
    EXPECT_NE(c.summary.find("faster than the measured device-to-device copy bandwidth allows"), std::string::npos)
        << c.summary;
}

TEST(CopyCeilingTier, AStraddlingIntervalAsksForMoreRoundsAndAFailedRoundDecides) {
    const std::vector<Record> straddle{transpose_round(kCopyMs / 0.70), transpose_round(kCopyMs / 0.90)};
    EXPECT_TRUE(copy_tier_needs_more_rounds(copy_tier(), straddle));
    EXPECT_TRUE(copy_tier_needs_more_rounds(copy_tier(), {}));
    std::vector<Record> failed = straddle;
    failed.push_back(row("student_transpose", 1.0, RowStatus::wrong_result));
    failed.back().reason = "timed call 2: element (0, 0) was never written";
    EXPECT_FALSE(copy_tier_needs_more_rounds(copy_tier(), failed));
    const CheckResult c = judge_copy_fraction(copy_tier(), failed, 7);
    EXPECT_FALSE(c.passed);
    EXPECT_NE(c.summary.find("submission wrong_result: timed call 2"), std::string::npos) << c.summary;
}

TEST(PairedRatio, RatioIntervalOfFractionsIsTheGeometricMean) {
    const RatioInterval one = ratio_interval({0.8});
    EXPECT_DOUBLE_EQ(one.ratio, 0.8);
    EXPECT_EQ(decide_tier(one, 0.5), TierDecision::undecided);
    const RatioInterval three = ratio_interval({0.5, 2.0, 1.0});
    EXPECT_NEAR(three.ratio, 1.0, 1e-12);
    EXPECT_LT(three.low, 1.0);
    EXPECT_GT(three.high, 1.0);
    EXPECT_THROW(ratio_interval({}), std::invalid_argument);
    EXPECT_THROW(ratio_interval({1.0, 0.0}), std::invalid_argument);
}

}  // namespace
}  // namespace kreg
