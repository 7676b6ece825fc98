// annotate_roofline and the computed datasheet peaks, against numbers worked out by hand; the CPU's
// measured ceiling (measure_host_fp32_flops, annotate_cpu_roofline).
#include "record_json.hpp"
#include "cuda/peaks.hpp"
#include "measure/host_ceiling.hpp"
#include "measure/roofline.hpp"

#include <chrono>
#include <cstdio>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kreg {
namespace {

// An H100/H200-like device: facts as describe_device reports them, ceilings as calibrate_ceilings does.
nlohmann::json facts() {
    return {
        {"name", "test device"},
        {"peaks",
         {{"fp32_tflops", 66.9}, {"dram_gbps", 4800.0}, {"tf32_tensor_tflops", 494.7}, {"bf16_tensor_tflops", 989.4}}}};
}
nlohmann::json ceilings() {
    return {{"dram_copy_gbps", 4300.0}, {"sgemm_tflops", 51.2}, {"tf32_tflops", 384.0}, {"bf16_tflops", 723.0}};
}

Record ok_row(int64_t m, int64_t n, int64_t k, DType dtype, double median_ms) {
    Record r;
    r.status = RowStatus::ok;
    r.dtype = dtype;
    r.shape = Shape{m, n, k};
    TimingStats s;
    s.count = 10;
    s.median_ms = s.min_ms = s.mean_ms = median_ms;
    r.stats = s;
    return r;
}

// A transpose is judged against the measured copy bandwidth only: 8192^2 fp32 moves 2 * 8192^2 * 4 =
// 536870912 bytes; in 0.15 ms that is 3579.1 GB/s, 0.8323 of 4300.
TEST(Roofline, TransposeIsAFractionOfTheMeasuredCopyBandwidth) {
    Record r = ok_row(8192, 8192, 0, DType::fp32, 0.15);
    r.operation = Operation::transpose;
    annotate_roofline(r, facts(), ceilings());
    ASSERT_TRUE(r.extra.roofline.has_value());
    const RooflineEvidence& roof = *r.extra.roofline;
    EXPECT_DOUBLE_EQ(*roof.min_dram_bytes, 536870912.0);
    EXPECT_NEAR(*roof.achieved_gbps, 3579.139, 1e-3);
    EXPECT_DOUBLE_EQ(*roof.bandwidth_gbps, 4300.0);  // measured, not the 4800 of the datasheet
    EXPECT_NEAR(*roof.fraction_of_copy_bandwidth, 3579.139 / 4300.0, 1e-6);
    EXPECT_EQ(*roof.bound, "memory");
    EXPECT_FALSE(*roof.faster_than_floor);
    EXPECT_FALSE(roof.peak_tflops.has_value());

    Record unmeasured = ok_row(64, 64, 0, DType::fp32, 0.01);
    unmeasured.operation = Operation::block_transpose;
    annotate_roofline(unmeasured, facts(), nlohmann::json::object());
    ASSERT_TRUE(unmeasured.extra.roofline.has_value());
    EXPECT_TRUE(unmeasured.extra.roofline->unavailable.has_value());
    EXPECT_FALSE(unmeasured.extra.roofline->fraction_of_copy_bandwidth.has_value());
}

TEST(Roofline, ComputeBoundFp32Square4096) {
    Record r = ok_row(4096, 4096, 4096, DType::fp32, 3.0);
    r.extra.model_bytes = 1.0e9;
    annotate_roofline(r, facts(), ceilings());
    ASSERT_TRUE(extra_json(r).contains("roofline"));
    const nlohmann::json x = extra_json(r)["roofline"];
    // 2 * 4096^3
    EXPECT_DOUBLE_EQ(x["flops"].get<double>(), 137438953472.0);
    // 4 bytes * (3 * 4096^2)
    EXPECT_DOUBLE_EQ(x["min_dram_bytes"].get<double>(), 201326592.0);
    EXPECT_NEAR(x["arithmetic_intensity"].get<double>(), 4096.0 / 6.0, 1e-9);
    EXPECT_NEAR(x["modelled_ai"].get<double>(), 137.438953472, 1e-9);
    // 1.37438953472e11 FLOP in 3 ms
    EXPECT_NEAR(x["achieved_tflops"].get<double>(), 45.812984490667, 1e-9);
    EXPECT_NEAR(x["fraction_of_measured_peak"].get<double>(), 45.812984490667 / 51.2, 1e-12);
    EXPECT_NEAR(x["fraction_of_computed_peak"].get<double>(), 45.812984490667 / 66.9, 1e-12);
    // The roof is the larger of measured and computed: 66.9 TFLOP/s and 4800 GB/s.
    EXPECT_DOUBLE_EQ(x["peak_tflops"].get<double>(), 66.9);
    EXPECT_DOUBLE_EQ(x["bandwidth_gbps"].get<double>(), 4800.0);
    EXPECT_NEAR(x["ridge_ai"].get<double>(), 13.9375, 1e-12);
    EXPECT_EQ(x["bound"], "compute");
    // max(1.37438953472e11 / 66.9e12 s, 201326592 / 4.8e12 s) = 2.054394 ms
    EXPECT_NEAR(x["floor_ms"].get<double>(), 2.0543939234978, 1e-9);
    EXPECT_EQ(x["faster_than_floor"], false);
}

TEST(Roofline, MemoryBoundRowVectorTimesMatrix) {
    Record r = ok_row(1, 4096, 4096, DType::fp32, 0.02);
    annotate_roofline(r, facts(), ceilings());
    const nlohmann::json x = extra_json(r)["roofline"];
    EXPECT_DOUBLE_EQ(x["flops"].get<double>(), 33554432.0);
    // 4 * (1*4096 + 4096*4096 + 1*4096)
    EXPECT_DOUBLE_EQ(x["min_dram_bytes"].get<double>(), 67141632.0);
    EXPECT_NEAR(x["arithmetic_intensity"].get<double>(), 33554432.0 / 67141632.0, 1e-15);
    EXPECT_EQ(x["bound"], "memory");
    // max(33554432 / 66.9e12 s = 0.000502 ms, 67141632 / 4.8e12 s = 0.013988 ms)
    EXPECT_NEAR(x["floor_ms"].get<double>(), 0.013987840, 1e-12);
    EXPECT_EQ(x["faster_than_floor"], false);
    EXPECT_NEAR(x["achieved_tflops"].get<double>(), 1.6777216, 1e-12);
}

TEST(Roofline, FasterThanTheFloorIsFlagged) {
    // 0.01 ms < 0.9 * 0.013988 ms: more than the memory system can deliver.
    Record r = ok_row(1, 4096, 4096, DType::fp32, 0.01);
    annotate_roofline(r, facts(), ceilings());
    EXPECT_EQ(extra_json(r)["roofline"]["faster_than_floor"], true);
}

TEST(Roofline, WithoutModelBytesThereIsNoModelledIntensity) {
    Record r = ok_row(4096, 4096, 4096, DType::fp32, 3.0);
    annotate_roofline(r, facts(), ceilings());
    EXPECT_FALSE(extra_json(r)["roofline"].contains("modelled_ai"));
    EXPECT_TRUE(extra_json(r)["roofline"].contains("arithmetic_intensity"));
}

TEST(Roofline, Bf16CountsTwoByteInputsAndUsesItsOwnCeilings) {
    Record r = ok_row(4096, 4096, 4096, DType::bf16, 0.25);
    annotate_roofline(r, facts(), ceilings());
    const nlohmann::json x = extra_json(r)["roofline"];
    // 2 * (2 * 4096^2) + 4 * 4096^2
    EXPECT_DOUBLE_EQ(x["min_dram_bytes"].get<double>(), 8.0 * 4096 * 4096);
    EXPECT_DOUBLE_EQ(x["measured_peak_tflops"].get<double>(), 723.0);
    EXPECT_DOUBLE_EQ(x["computed_peak_tflops"].get<double>(), 989.4);
    // 1.37438953472e11 / 0.25e-3 s = 549.76 TFLOP/s
    EXPECT_NEAR(x["fraction_of_measured_peak"].get<double>(), 549.755813888 / 723.0, 1e-12);
    EXPECT_EQ(x["bound"], "compute");
}

TEST(Roofline, MissingCeilingsGiveNoValuesNotGuesses) {
    Record r = ok_row(4096, 4096, 4096, DType::fp32, 3.0);
    annotate_roofline(r, nlohmann::json::object(), nlohmann::json(nullptr));
    ASSERT_TRUE(r.extra.roofline.has_value());
    const RooflineEvidence& roof = *r.extra.roofline;
    EXPECT_FALSE(roof.fraction_of_measured_peak.has_value());
    EXPECT_FALSE(roof.fraction_of_computed_peak.has_value());
    EXPECT_FALSE(roof.ridge_ai.has_value());
    EXPECT_FALSE(roof.bound.has_value());
    EXPECT_FALSE(roof.floor_ms.has_value());
    EXPECT_FALSE(roof.faster_than_floor.has_value());
    const nlohmann::json x = extra_json(r)["roofline"];
    for (const char* key : {"fraction_of_measured_peak", "ridge_ai", "bound", "floor_ms", "faster_than_floor"})
        EXPECT_FALSE(x.contains(key)) << key << ": an unknown value is absent, not a guess";
    EXPECT_DOUBLE_EQ(x["flops"].get<double>(), 137438953472.0);
}

TEST(Roofline, RowsThatAreNotOkAreLeftUntouched) {
    for (RowStatus status : {RowStatus::wrong_result, RowStatus::failed, RowStatus::skipped, RowStatus::crashed}) {
        Record r = ok_row(4096, 4096, 4096, DType::fp32, 3.0);
        r.status = status;
        r.extra.launch = LaunchInfo{{1, 1, 1}, {32, 1, 1}, 0};
        const nlohmann::json before = extra_json(r);
        annotate_roofline(r, facts(), ceilings());
        EXPECT_EQ(extra_json(r), before) << to_string(status);
    }
    Record untimed = ok_row(8, 8, 8, DType::fp32, 1.0);
    untimed.stats.reset();
    annotate_roofline(untimed, facts(), ceilings());
    EXPECT_FALSE(extra_json(untimed).contains("roofline"));
}

TEST(ComputedPeaks, HopperMatchesTheH100Datasheet) {
    // H100 SXM: 132 SMs, 1980 MHz, HBM3 at 2619 MHz on 5120 bits.
    const nlohmann::json p = computed_peaks(9, 0, 132, 1980000, 2619000, 5120);
    EXPECT_EQ(p["fp32_lanes_per_sm"], 128);
    EXPECT_NEAR(p["fp32_tflops"].get<double>(), 66.90816, 1e-9);           // datasheet: 67
    EXPECT_NEAR(p["dram_gbps"].get<double>(), 3352.32, 1e-9);              // datasheet: 3.35 TB/s
    EXPECT_NEAR(p["bf16_tensor_tflops"].get<double>(), 1070.53056, 1e-6);  // 989 at the 1830 MHz tensor clock
    EXPECT_NEAR(p["tf32_tensor_tflops"].get<double>(), 535.26528, 1e-6);
}

TEST(ComputedPeaks, AmpereA100HasHalfTheFp32LanesOfConsumerAmpere) {
    const nlohmann::json a100 = computed_peaks(8, 0, 108, 1410000, 1215000, 5120);
    EXPECT_NEAR(a100["fp32_tflops"].get<double>(), 19.49184, 1e-9);          // datasheet: 19.5
    EXPECT_NEAR(a100["bf16_tensor_tflops"].get<double>(), 311.86944, 1e-6);  // datasheet: 312
    EXPECT_NEAR(a100["dram_gbps"].get<double>(), 1555.2, 1e-9);              // A100 40GB: 1555 GB/s
    EXPECT_EQ(fp32_lanes_per_sm(8, 6), 128);
    EXPECT_EQ(fp32_lanes_per_sm(8, 0), 64);
}

TEST(ComputedPeaks, UnknownArchitectureGivesNullPeaks) {
    const nlohmann::json p = computed_peaks(3, 5, 15, 1000000, 3000000, 384);
    EXPECT_TRUE(p["fp32_tflops"].is_null());
    EXPECT_TRUE(p["bf16_tensor_tflops"].is_null());
    EXPECT_FALSE(p["dram_gbps"].is_null());  // bandwidth needs no table
    EXPECT_FALSE(fp32_lanes_per_sm(3, 5).has_value());
}

// ---- The CPU ceiling ---------------------------------------------------------------------------------

TEST(HostCeiling, CpuRooflineAgainstNumbersWorkedOutByHand) {
    // 2 * 1000^3 = 2e9 FLOP on a 1e11 FLOP/s host: 20 ms at peak, floor 10 ms.
    Record fast = ok_row(1000, 1000, 1000, DType::fp32, 9.0);
    annotate_cpu_roofline(fast, 1e11);
    const nlohmann::json x = extra_json(fast)["roofline"];
    EXPECT_EQ(x["ceiling"], "host_fp32");
    EXPECT_DOUBLE_EQ(x["flops"].get<double>(), 2e9);
    EXPECT_DOUBLE_EQ(x["measured_peak_tflops"].get<double>(), 0.1);
    EXPECT_DOUBLE_EQ(x["peak_tflops"].get<double>(), 0.1);
    EXPECT_DOUBLE_EQ(x["floor_ms"].get<double>(), 10.0);
    EXPECT_DOUBLE_EQ(x["safety_factor"].get<double>(), 0.5);
    EXPECT_NEAR(x["achieved_tflops"].get<double>(), 2e9 / 9e-3 / 1e12, 1e-12);
    EXPECT_NEAR(x["fraction_of_measured_peak"].get<double>(), 20.0 / 9.0, 1e-12);
    EXPECT_EQ(x["faster_than_floor"], true);

    // 15 ms: faster than the measured peak (turbo on one core, a noisy ceiling), not than physics.
    Record plausible = ok_row(1000, 1000, 1000, DType::fp32, 15.0);
    annotate_cpu_roofline(plausible, 1e11);
    EXPECT_EQ(extra_json(plausible)["roofline"]["faster_than_floor"], false);

    Record unmeasured = ok_row(1000, 1000, 1000, DType::fp32, 0.001);
    annotate_cpu_roofline(unmeasured, 0.0);
    EXPECT_EQ(extra_json(unmeasured)["roofline"]["ceiling"], "host_fp32");
    EXPECT_TRUE(extra_json(unmeasured)["roofline"].contains("unavailable"));
    EXPECT_FALSE(extra_json(unmeasured)["roofline"].contains("faster_than_floor"));

    Record failed = ok_row(1000, 1000, 1000, DType::fp32, 1.0);
    failed.status = RowStatus::wrong_result;
    annotate_cpu_roofline(failed, 1e11);
    EXPECT_FALSE(extra_json(failed).contains("roofline"));
}

TEST(HostCeiling, MeasuredPeakIsPlausibleAndQuick) {
#if defined(__x86_64__)
    const auto start = std::chrono::steady_clock::now();
    const double flops = measure_host_fp32_flops();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("host fp32 peak: %.1f GFLOP/s in %.0f ms\n", flops / 1e9, seconds * 1e3);
    // Any x86-64 core does at least 4 GFLOP/s with SSE; no host does a PFLOP/s.
    EXPECT_GT(flops, 4e9);
    EXPECT_LT(flops, 1e15);
    EXPECT_LT(seconds, 1.0) << "the ceiling is measured once per grading run and must stay short";
#else
    EXPECT_EQ(measure_host_fp32_flops(), 0.0) << "no loop for this architecture: unmeasured, never a guess";
#endif
}

}  // namespace
}  // namespace kreg
