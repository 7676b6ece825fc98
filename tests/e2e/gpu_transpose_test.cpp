// On a GPU, through the runner: every CUDA transpose and both BlockTransposes measured by the pipeline
// on odd shapes and every block 1..20, verified bit for bit against the exact result (NaN payloads
// included), with the memory roofline against the measured copy bandwidth. Without a GPU every test is
// skipped with the reason.
#include "common/job.hpp"
#include "cuda/device_facts.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace kreg {
namespace {

std::vector<Record> run_config(const std::string& name, const std::string& config, bool calibrate) {
    const auto dir = test::fresh_dir(name);
    std::ofstream(dir / "config.json") << config;
    const auto r = test::run_command(
        std::string(KREG_RUNNER) + (calibrate ? "" : " --no-calibrate") + " --config config.json --json out.json", dir,
        dir);
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    return read_records_json(dir / "out.json");
}

TEST(GpuTranspose, EveryCudaTransposeIsBitExactOnOddShapesWithItsCopyRoofline) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto rows = run_config("gpu-transpose", R"({
        "operation": "transpose", "kernels": ["cuda_t*"], "warmup": 1, "repeats": 5, "noise_target": 0,
        "shapes": [{"m": 1, "n": 1}, {"m": 1, "n": 300}, {"m": 300, "n": 1}, {"m": 17, "n": 33},
                   {"m": 4097, "n": 1025}, {"square": 2048}]})",
                                 true);
    ASSERT_GE(rows.size(), 5u * 6u);
    for (const Record& r : rows) {
        EXPECT_EQ(r.status, RowStatus::ok) << r.kernel << " " << to_string(r.shape) << ": " << r.reason;
        if (r.status != RowStatus::ok) continue;
        EXPECT_TRUE(r.gbps.has_value());
        ASSERT_TRUE(r.extra.roofline.has_value()) << r.kernel;
        EXPECT_TRUE(r.extra.roofline->fraction_of_copy_bandwidth.has_value()) << r.kernel;
    }
}

TEST(GpuTranspose, BothBlockTransposesAtEveryBlockFrom1To20) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    // 2520 is a multiple of 1..10, 12, 14, 15, 18 and 20; at the other blocks its rows are skipped with
    // the reason. Every block also runs at its own 3b x 5b (two tile rows and columns that are not equal).
    std::string shapes = R"([{"square": 2520, "block": {"from": 1, "to": 20, "step": 1}})";
    for (int b = 1; b <= 20; ++b)
        shapes += R"(, {"m": )" + std::to_string(3 * b) + R"(, "n": )" + std::to_string(5 * b) + R"(, "block": )" +
                  std::to_string(b) + "}";
    shapes += "]";
    const auto rows = run_config("gpu-block-transpose",
                                 R"({"operation": "block_transpose", "kernels": ["cuda_block_transpose*"], "warmup": 1,
                                     "repeats": 3, "noise_target": 0, "shapes": )" +
                                     shapes + "}",
                                 false);
    int ok = 0;
    for (const Record& r : rows) {
        const std::string where = r.kernel + " " + to_string(r.shape) + ": " + r.reason;
        if (2520 % r.shape.block != 0 && r.shape.m == 2520) {
            EXPECT_EQ(r.status, RowStatus::skipped) << where;
            continue;
        }
        EXPECT_EQ(r.status, RowStatus::ok) << where;
        ++ok;
    }
    EXPECT_GE(ok, 2 * 20);
}

}  // namespace
}  // namespace kreg
