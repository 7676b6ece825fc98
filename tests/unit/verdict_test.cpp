// judge_performance: the performance tier's verdict from the submission's and the reference's rows,
// including the physics check (a row faster than the roofline floor earns nothing, however fast).
#include "grade/verdict.hpp"
#include "measure/host_ceiling.hpp"
#include "measure/roofline.hpp"

#include <gtest/gtest.h>

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

// The H200's measured ceilings, as the grader gets them from a trusted worker.
void annotate(Record& r) {
    const nlohmann::json facts = {{"name", "test device"}, {"peaks", {{"fp32_tflops", 66.9}, {"dram_gbps", 4800.0}}}};
    const nlohmann::json ceilings = {{"dram_copy_gbps", 4300.0}, {"sgemm_tflops", 51.2}};
    annotate_roofline(r, facts, ceilings);
}

TEST(Verdict, RatioAtOrAboveTheTierEarnsItsPoints) {
    Record mine = row("student_gemm", 4.0);
    annotate(mine);
    const CheckResult c = judge_performance(tier(), mine, 7, row("cublas_sgemm", 2.0), 1);
    EXPECT_TRUE(c.passed);
    EXPECT_EQ(c.points, 10);
    EXPECT_EQ(c.max_points, 10);
    EXPECT_DOUBLE_EQ(c.evidence["ratio"].get<double>(), 0.5);
    EXPECT_EQ(c.summary, "ratio 0.5 to cublas_sgemm (needs 0.5): 4 ms vs 2 ms");
    EXPECT_EQ(c.evidence["submission"]["kernel"], "student_gemm");
    EXPECT_EQ(c.evidence["submission"]["seed"], 7);
    EXPECT_EQ(c.evidence["reference"]["seed"], 1);
    EXPECT_EQ(c.evidence["submission"]["roofline"]["faster_than_floor"], false);
    EXPECT_FALSE(c.evidence.contains("flag"));
}

TEST(Verdict, BelowTheTierEarnsNothing) {
    const CheckResult c = judge_performance(tier(), row("student_gemm", 4.1), 7, row("cublas_sgemm", 2.0), 1);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.points, 0);
    EXPECT_NEAR(c.evidence["ratio"].get<double>(), 2.0 / 4.1, 1e-12);
}

TEST(Verdict, FasterThanPhysicsIsFlaggedAndEarnsNothing) {
    // 2*4096^3 FLOP in 1 ms is 137 TFLOP/s, twice the fp32 peak: a timer that was fooled, not a kernel.
    Record mine = row("student_gemm", 1.0);
    annotate(mine);
    ASSERT_EQ(mine.extra["roofline"]["faster_than_floor"], true);
    const CheckResult c = judge_performance(tier(), mine, 7, row("cublas_sgemm", 2.0), 1);
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
    const CheckResult c = judge_performance(cpu_tier(), mine, 7, cpu_row("cpu_blocked", 20.0), 1);
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
    ASSERT_EQ(mine.extra["roofline"]["faster_than_floor"], false);
    const CheckResult c = judge_performance(cpu_tier(), mine, 7, cpu_row("cpu_blocked", 0.4), 1);
    EXPECT_TRUE(c.passed) << c.summary;
    EXPECT_EQ(c.points, 10);
    EXPECT_FALSE(c.evidence.contains("flag"));
}

TEST(Verdict, AnUnmeasuredHostCeilingFlagsNothingAndSaysSo) {
    Record mine = cpu_row("student_gemm", 0.0001);
    annotate_cpu_roofline(mine, 0.0);
    EXPECT_TRUE(mine.extra["roofline"].contains("unavailable"));
    const CheckResult c = judge_performance(cpu_tier(), mine, 7, cpu_row("cpu_blocked", 0.4), 1);
    EXPECT_FALSE(c.evidence.contains("flag"));
    EXPECT_TRUE(c.evidence["submission"]["roofline"].contains("unavailable"));
}

TEST(Verdict, AFailedSubmissionOrReferenceEarnsNothingAndSaysWhich) {
    Record wrong = row("student_gemm", 0, RowStatus::wrong_result);
    wrong.reason = "timed call 2: error 0.5 at (1, 2)";
    wrong.extra["trusted_check"] = {{"calls_checked", 4}, {"passed", false}};
    CheckResult c = judge_performance(tier(), wrong, 7, row("cublas_sgemm", 2.0), 1);
    EXPECT_EQ(c.points, 0);
    EXPECT_EQ(c.summary, "submission wrong_result: timed call 2: error 0.5 at (1, 2)");
    EXPECT_EQ(c.evidence["submission"]["trusted_check"]["passed"], false);

    Record broken_ref = row("cublas_sgemm", 0, RowStatus::failed);
    broken_ref.reason = "CUBLAS_STATUS_NOT_INITIALIZED";
    c = judge_performance(tier(), row("student_gemm", 4.0), 7, broken_ref, 1);
    EXPECT_EQ(c.points, 0);
    EXPECT_EQ(c.summary, "reference cublas_sgemm could not be measured: CUBLAS_STATUS_NOT_INITIALIZED");
}

}  // namespace
}  // namespace kreg
