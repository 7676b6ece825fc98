// End to end: transpose and block_transpose sweeps through the real runner (issue 11): the CPU
// references on odd shapes, skipped (shape, block) rows with their reason, and the bit-exact check
// catching one wrong element, a lost NaN payload and one untransposed tile.
#include "common/job.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <fstream>
#include <map>
#include <sstream>
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
    std::ofstream(dir / "unknown.json")
        << R"({"operation": "transpose_it", "kernels": ["cpu_transpose"], "shapes": [{"m": 2, "n": 2}]})";
    const auto unknown = run_command(kRunner + " --config unknown.json", dir, dir);
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("unknown.json"), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("unknown operation 'transpose_it'"), std::string::npos) << unknown.err;
    std::ofstream(dir / "k.json")
        << R"({"operation": "transpose", "kernels": ["cpu_transpose"], "shapes": [{"m": 2, "n": 2, "k": 3}]})";
    const auto k = run_command(kRunner + " --config k.json", dir, dir);
    EXPECT_EQ(k.exit_code, 2);
    EXPECT_NE(k.err.find("/shapes/0/k"), std::string::npos) << k.err;
    EXPECT_NE(k.err.find("a transpose shape has no 'k'"), std::string::npos) << k.err;
    std::ofstream(dir / "block.json")
        << R"({"kernels": ["cpu_naive"], "shapes": [{"m": 2, "n": 2, "k": 2, "block": 2}]})";
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

// ---------------------------------------------------------------------------------------------------
// Quick-run flags (--operation, --block) and the CSV's transpose columns

// The CSV report as rows keyed by the header's names (RFC 4180 quoting: a reason may hold commas).
std::vector<std::map<std::string, std::string>> read_csv(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    std::vector<std::vector<std::string>> lines(1, std::vector<std::string>(1));
    bool quoted = false;
    const std::string s = text.str();
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quoted && c == '"' && i + 1 < s.size() && s[i + 1] == '"')
            lines.back().back() += '"', ++i;
        else if (c == '"')
            quoted = !quoted;
        else if (!quoted && c == ',')
            lines.back().emplace_back();
        else if (!quoted && c == '\n')
            lines.emplace_back(1);
        else
            lines.back().back() += c;
    }
    if (lines.back() == std::vector<std::string>(1)) lines.pop_back();
    std::vector<std::map<std::string, std::string>> rows;
    for (size_t i = 1; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i].size(), lines[0].size()) << "CSV line " << i;
        std::map<std::string, std::string> row;
        for (size_t c = 0; c < lines[0].size() && c < lines[i].size(); ++c) row[lines[0][c]] = lines[i][c];
        rows.push_back(row);
    }
    return rows;
}

const std::string kQuickRun = kRunner + " --no-default-plugins --plugin " + kTransposePlugin + " --plugin " +
                              std::string(KREG_PLUGIN_DIR) + "/cpu_naive.so --warmup 0 --repeat 2 --time-budget 0.05";

TEST(TransposeQuickRun, OperationSizesAndMxNShapesRunTransposesAndTheCsvCarriesTheirColumns) {
    const auto dir = fresh_dir("transpose-quick-run");
    const auto r = run_command(kQuickRun +
                                   " --operation transpose --kernels cpu_transpose --sizes 64,65 --shape 17x33"
                                   " --json out.json --csv out.csv",
                               dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto records = read_records_json(dir / "out.json");
    ASSERT_EQ(records.size(), 3u) << r.out;
    const std::vector<Shape> expected{{64, 64, 0}, {65, 65, 0}, {17, 33, 0}};
    for (size_t i = 0; i < records.size(); ++i) {
        EXPECT_EQ(records[i].operation, Operation::transpose);
        EXPECT_EQ(records[i].shape, expected[i]) << to_string(records[i].shape);
        EXPECT_EQ(records[i].status, RowStatus::ok) << records[i].reason;
    }
    const auto rows = read_csv(dir / "out.csv");
    ASSERT_EQ(rows.size(), 3u);
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i];
        EXPECT_EQ(row.at("kernel"), "cpu_transpose");
        EXPECT_EQ(row.at("operation"), "transpose");
        EXPECT_EQ(row.at("m"), std::to_string(expected[i].m));
        EXPECT_EQ(row.at("n"), std::to_string(expected[i].n));
        EXPECT_EQ(row.at("k"), "");
        EXPECT_EQ(row.at("block"), "");
        EXPECT_EQ(row.at("gflops"), "");
        ASSERT_FALSE(row.at("gbps").empty());
        EXPECT_NEAR(std::stod(row.at("gbps")), *records[i].gbps, 5e-4 + 1e-6 * *records[i].gbps);
    }
}

TEST(TransposeQuickRun, BlockCrossesEveryShapeAndTheCsvNamesTheBlock) {
    const auto dir = fresh_dir("block-transpose-quick-run");
    const auto r = run_command(kQuickRun +
                                   " --operation block_transpose --kernels cpu_block_transpose --sizes 16"
                                   " --shape 12x18 --block 1,2,16 --json out.json --csv out.csv",
                               dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto rows = read_csv(dir / "out.csv");
    ASSERT_EQ(rows.size(), 6u) << r.out;
    const std::vector<std::array<const char*, 4>> expected{{"16", "16", "1", "ok"},  {"16", "16", "2", "ok"},
                                                           {"16", "16", "16", "ok"}, {"12", "18", "1", "ok"},
                                                           {"12", "18", "2", "ok"},  {"12", "18", "16", "skipped"}};
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i];
        SCOPED_TRACE(i);
        EXPECT_EQ(row.at("operation"), "block_transpose");
        EXPECT_EQ(row.at("m"), expected[i][0]);
        EXPECT_EQ(row.at("n"), expected[i][1]);
        EXPECT_EQ(row.at("block"), expected[i][2]);
        EXPECT_EQ(row.at("status"), expected[i][3]) << row.at("reason");
        EXPECT_EQ(row.at("k"), "");
        EXPECT_EQ(row.at("gbps").empty(), row.at("status") != "ok");
    }
    EXPECT_NE(rows[5].at("reason").find("not a multiple of block=16"), std::string::npos) << rows[5].at("reason");
}

TEST(TransposeQuickRun, GemmCsvKeepsItsColumnsAndNamesTheOperation) {
    const auto dir = fresh_dir("gemm-quick-run-csv");
    const auto r =
        run_command(kQuickRun + " --kernels cpu_naive --shape 9x7x5 --csv out.csv --json out.json", dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    std::ifstream in(dir / "out.csv");
    std::string header;
    std::getline(in, header);
    // The GEMM columns keep their places; the new ones come after every old one.
    EXPECT_EQ(header.rfind("kernel,plugin,backend,dtype,m,n,k,status,max_rel_err,median_ms,min_ms,cv,gflops,", 0), 0u)
        << header;
    EXPECT_EQ(header.substr(header.size() - std::string(",timer,operation,block,gbps").size()),
              ",timer,operation,block,gbps");
    const auto rows = read_csv(dir / "out.csv");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].at("operation"), "gemm");
    EXPECT_EQ(rows[0].at("k"), "5");
    EXPECT_FALSE(rows[0].at("gflops").empty());
    EXPECT_EQ(rows[0].at("block"), "");
    EXPECT_EQ(rows[0].at("gbps"), "");
}

TEST(TransposeQuickRun, WrongCombinationsAreExit2NamingTheOption) {
    const auto dir = fresh_dir("transpose-quick-run-bad");
    std::ofstream(dir / "t.json")
        << R"({"operation": "transpose", "kernels": ["cpu_transpose"], "shapes": [{"m": 2, "n": 2}]})";
    std::ofstream(dir / "g.json") << R"({"kernels": ["cpu_naive"], "shapes": [{"m": 2, "n": 2, "k": 2}]})";
    const std::vector<std::array<std::string, 3>> cases{
        {"--kernels cpu_naive --sizes 8 --block 2", "--block", "this sweep's operation is gemm"},
        {"--operation transpose --sizes 8 --block 2", "--block", "operation is transpose"},
        {"--config t.json --block 2", "--block", "operation is transpose"},
        {"--operation block_transpose --sizes 16", "--block", "give --block"},
        {"--operation transpose --shape 4x5x6", "--shape", "has 3 sizes, but a transpose shape is MxN"},
        {"--operation block_transpose --shape 4x6x6 --block 2", "--shape", "but a block_transpose shape is MxN"},
        {"--kernels cpu_naive --shape 17x33", "--shape", "a gemm shape is MxNxK"},
        {"--config t.json --shape 4x5x6", "--shape", "for a shape of gemm give --operation"},
        {"--config g.json --operation transpose", "--operation", "give --sizes or --shape too"},
        {"--operation transposes --sizes 8", "--operation", "unknown operation 'transposes'"},
        {"--operation transpose --shape 4x", "--shape", "empty size"},
        {"--operation block_transpose --sizes 8 --block 0", "--block", ">= 1"},
    };
    for (const auto& [args, option, message] : cases) {
        SCOPED_TRACE(args);
        const auto r = run_command(kQuickRun + " --dry-run " + args, dir, dir);
        EXPECT_EQ(r.exit_code, 2) << r.out;
        EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    }
}

TEST(TransposeQuickRun, FlagsApplyOnTopOfAConfigOfTheOperation) {
    const auto dir = fresh_dir("transpose-quick-run-config");
    std::ofstream(dir / "b.json") << R"({"operation": "block_transpose", "kernels": ["cpu_block_transpose"],
        "shapes": [{"m": 8, "n": 12, "block": [2, 4]}]})";
    // --block alone keeps the config's (M, N); --sizes alone keeps its blocks.
    const auto blocks = run_command(kQuickRun + " --dry-run --config b.json --block 1,4", dir, dir);
    ASSERT_EQ(blocks.exit_code, 0) << blocks.err;
    EXPECT_NE(blocks.out.find("8x12/b1"), std::string::npos) << blocks.out;
    EXPECT_NE(blocks.out.find("8x12/b4"), std::string::npos) << blocks.out;
    EXPECT_EQ(blocks.out.find("8x12/b2"), std::string::npos) << blocks.out;
    EXPECT_NE(blocks.out.find("2 job(s)"), std::string::npos) << blocks.out;
    const auto sizes = run_command(kQuickRun + " --dry-run --config b.json --sizes 16", dir, dir);
    ASSERT_EQ(sizes.exit_code, 0) << sizes.err;
    EXPECT_NE(sizes.out.find("16x16/b2"), std::string::npos) << sizes.out;
    EXPECT_NE(sizes.out.find("16x16/b4"), std::string::npos) << sizes.out;
    EXPECT_NE(sizes.out.find("2 job(s)"), std::string::npos) << sizes.out;
}

}  // namespace
}  // namespace kreg
