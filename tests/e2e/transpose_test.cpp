// End to end: transpose and block_transpose sweeps through the real runner (issue 11): the CPU
// references on odd shapes, skipped (shape, block) rows with their reason, and the bit-exact check
// catching one wrong element, a lost NaN payload and one untransposed tile.
#include "common/job.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <vector>

namespace kreg {
namespace {

using test::fixture;
using test::fresh_dir;
using test::run_command;

const std::string kRunner = KREG_RUNNER;
const std::string kTransposePlugin = std::string(KREG_PLUGIN_DIR) + "/cpu_transpose.so";

// runner --config config.json with cpu_transpose and cpu_naive (whose GEMM kernel a transpose sweep must
// leave out) plus the given fixtures; the report's rows.
struct SweepRun {
    int exit_code = -1;
    std::string out, err;
    std::vector<Record> rows;
};
SweepRun run_sweep(const std::string& name, const std::string& config, const std::vector<std::string>& fixtures = {}) {
    const auto dir = fresh_dir(name);
    std::ofstream(dir / "config.json") << config;
    std::string cmd = kRunner + " --no-default-plugins --plugin " + kTransposePlugin + " --plugin " +
                      std::string(KREG_PLUGIN_DIR) + "/cpu_naive.so";
    for (const auto& f : fixtures) cmd += " --plugin " + fixture(f);
    cmd += " --config config.json --json out.json";
    const auto r = run_command(cmd, dir, dir);
    SweepRun run{r.exit_code, r.out, r.err, {}};
    if (std::filesystem::exists(dir / "out.json")) run.rows = read_records_json(dir / "out.json");
    return run;
}

TEST(Transpose, OddShapesAreBitExactAndMeasuredInBytesPerSecond) {
    const auto run = run_sweep("transpose-odd", R"({
        "operation": "transpose", "kernels": ["cpu_*"], "warmup": 1, "repeats": 3, "noise_target": 0,
        "shapes": [{"m": 1, "n": 1}, {"m": 1, "n": 7}, {"m": 7, "n": 1}, {"m": 17, "n": 33}, {"m": 257, "n": 129}]})");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    ASSERT_EQ(run.rows.size(), 5u) << run.out;  // cpu_naive and cpu_block_transpose are not transposes
    for (const Record& r : run.rows) {
        EXPECT_EQ(r.kernel, "cpu_transpose");
        EXPECT_EQ(r.operation, Operation::transpose);
        EXPECT_EQ(r.status, RowStatus::ok) << to_string(r.shape) << ": " << r.reason;
        EXPECT_EQ(r.shape.k, 0);
        EXPECT_EQ(r.max_rel_err.value_or(-1), 0.0) << to_string(r.shape);
        EXPECT_EQ(r.tolerance.value_or(-1), 0.0);
        ASSERT_TRUE(r.gbps.has_value()) << to_string(r.shape);
        EXPECT_GT(*r.gbps, 0);
        EXPECT_FALSE(r.gflops.has_value());
    }
    EXPECT_NE(run.out.find("GB/s"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("GFLOP/s"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("17x33"), std::string::npos) << run.out;
}

TEST(Transpose, BlockTransposeRunsWholeTilesAndSkipsTheRestWithTheReason) {
    const auto run = run_sweep("block-transpose", R"({
        "operation": "block_transpose", "kernels": ["cpu_block_transpose", "fixture_block_transpose_off_by_one"],
        "warmup": 1, "repeats": 2, "noise_target": 0,
        "shapes": [{"m": [6, 12], "n": 18, "block": [1, 2, 3, 6]}, {"m": 10, "n": 12, "block": 4}, {"square": 16, "block": 16}]})",
                                {"fixture_block_transpose_off_by_one"});
    ASSERT_EQ(run.exit_code, 1) << run.err << run.out;  // the off-by-one fixture's rows are wrong
    ASSERT_EQ(run.rows.size(), 20u) << run.out;
    int ok = 0;
    for (const Record& r : run.rows) {
        EXPECT_EQ(r.operation, Operation::block_transpose);
        const std::string where = r.kernel + " " + to_string(r.shape) + ": " + r.reason;
        if (r.shape.m == 10) {
            EXPECT_EQ(r.status, RowStatus::skipped) << where;
            EXPECT_NE(r.reason.find("M=10 is not a multiple of block=4"), std::string::npos) << where;
        } else if (r.kernel == "cpu_block_transpose") {
            EXPECT_EQ(r.status, RowStatus::ok) << where;
            ++ok;
        } else if (r.shape.block == 16) {
            EXPECT_EQ(r.status, RowStatus::skipped) << where;
            EXPECT_NE(r.reason.find("block=16 exceeds the kernel's maximum 8"), std::string::npos) << where;
        } else if (r.shape.block == 1) {
            // A 1 x 1 tile is its own transpose: skipping the last one changes nothing.
            EXPECT_EQ(r.status, RowStatus::ok) << where;
        } else {
            EXPECT_EQ(r.status, RowStatus::wrong_result) << where;
            EXPECT_NE(r.reason.find("differ"), std::string::npos) << where;
        }
    }
    EXPECT_EQ(ok, 9);  // 8 whole-tile shapes and 16x16/b16
}

TEST(Transpose, OneWrongElementAndALostNanPayloadAreWrongResults) {
    const auto run = run_sweep("transpose-wrong", R"({
        "operation": "transpose", "kernels": ["cpu_transpose", "fixture_*"], "warmup": 0, "repeats": 2, "noise_target": 0,
        "shapes": [{"m": 64, "n": 48}]})",
                                {"fixture_transpose_one_wrong", "fixture_transpose_nan_payload"});
    ASSERT_EQ(run.exit_code, 1) << run.err << run.out;
    ASSERT_EQ(run.rows.size(), 3u) << run.out;
    for (const Record& r : run.rows) {
        if (r.kernel == "cpu_transpose") {
            // The same inputs, NaN payloads, -0 and subnormal included, copied bit for bit.
            EXPECT_EQ(r.status, RowStatus::ok) << r.reason;
            continue;
        }
        EXPECT_EQ(r.status, RowStatus::wrong_result) << r.kernel << ": " << r.reason;
        EXPECT_NE(r.reason.find("first call"), std::string::npos) << r.reason;
        if (r.kernel == "fixture_transpose_one_wrong") {
            EXPECT_NE(r.reason.find("element (0, 0)"), std::string::npos) << r.reason;
            EXPECT_NE(r.reason.find("(1 of 3072 elements differ)"), std::string::npos) << r.reason;
        } else {
            // x * 1.0f quiets the signalling NaN 0x7f812345 planted in A: only its bits differ.
            EXPECT_NE(r.reason.find("bits 0x7fc12345"), std::string::npos) << r.reason;
            EXPECT_NE(r.reason.find("bits 0x7f812345"), std::string::npos) << r.reason;
            EXPECT_NE(r.reason.find("(1 of 3072 elements differ)"), std::string::npos) << r.reason;
        }
    }
}

TEST(Transpose, ConfigsNameTheOperationAndRefuseKeysOfAnother) {
    const auto dir = fresh_dir("transpose-bad-config");
    std::ofstream(dir / "unknown.json") << R"({"operation": "transpose_it", "kernels": ["cpu_transpose"], "shapes": [{"m": 2, "n": 2}]})";
    const auto unknown = run_command(kRunner + " --config unknown.json", dir, dir);
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("unknown.json"), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("unknown operation 'transpose_it'"), std::string::npos) << unknown.err;
    std::ofstream(dir / "k.json") << R"({"operation": "transpose", "kernels": ["cpu_transpose"], "shapes": [{"m": 2, "n": 2, "k": 3}]})";
    const auto k = run_command(kRunner + " --config k.json", dir, dir);
    EXPECT_EQ(k.exit_code, 2);
    EXPECT_NE(k.err.find("/shapes/0/k"), std::string::npos) << k.err;
    EXPECT_NE(k.err.find("a transpose shape has no 'k'"), std::string::npos) << k.err;
    std::ofstream(dir / "block.json") << R"({"kernels": ["cpu_naive"], "shapes": [{"m": 2, "n": 2, "k": 2, "block": 2}]})";
    const auto block = run_command(kRunner + " --config block.json", dir, dir);
    EXPECT_EQ(block.exit_code, 2);
    EXPECT_NE(block.err.find("/shapes/0/block"), std::string::npos) << block.err;
}

TEST(Transpose, APluginBuiltAgainstAbi10StillRunsItsGemms) {
    const auto dir = fresh_dir("abi10-e2e");
    const auto r = run_command(kRunner + " --no-default-plugins --plugin " + fixture("fixture_abi_1_0") +
                                   " --kernels 'abi10_*' --shape 9x7x5 --repeat 2 --warmup 0 --json out.json",
                               dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto rows = read_records_json(dir / "out.json");
    ASSERT_FALSE(rows.empty());
    for (const Record& row : rows) {
        EXPECT_EQ(row.status, RowStatus::ok) << row.kernel << ": " << row.reason;
        EXPECT_EQ(row.operation, Operation::gemm);
        EXPECT_TRUE(row.gflops.has_value());
    }
}

}  // namespace
}  // namespace kreg
