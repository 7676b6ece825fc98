// End to end, issue 22's frictions of configs and output: a block edge refused where it is written, a
// repeated shape said with both paths, a sweep that cannot run here said once with a count, the CSV
// beside --json, and --list narrowed by --kernels and kept to 120 columns.
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace kreg {
namespace {

using test::fresh_dir;
using test::run_command;

const std::string kRunner = KREG_RUNNER;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

TEST(ConfigOutput, ABlockEdgeOutsideOneTo32IsAConfigErrorAtItsPathNotSkippedRows) {
    const auto dir = fresh_dir("block-edge");
    std::ofstream(dir / "huge.json") << R"({"operation": "block_transpose", "kernels": ["cpu_block_transpose"],
        "shapes": [{"m": 100000, "n": 100000, "block": 100000}]})";
    const auto huge = run_command(kRunner + " --config huge.json", dir, dir / "run");
    EXPECT_EQ(huge.exit_code, 2) << huge.err << huge.out;
    EXPECT_TRUE(contains(huge.err, "runner: config error: huge.json: /shapes/0/block: block must be <= 32, got 100000"))
        << huge.err;
    EXPECT_FALSE(contains(huge.err, "cannot run here")) << huge.err;
    std::ofstream(dir / "zero.json") << R"({"operation": "block_transpose", "kernels": ["cpu_block_transpose"],
        "shapes": [{"square": 64, "block": 0}]})";
    const auto zero = run_command(kRunner + " --config zero.json --dry-run", dir, dir / "run");
    EXPECT_EQ(zero.exit_code, 2) << zero.err;
    EXPECT_TRUE(contains(zero.err, "zero.json: /shapes/0/block: block must be >= 1, got 0")) << zero.err;
    EXPECT_FALSE(contains(zero.err, "/shapes/0/k")) << zero.err;
    const auto option = run_command(kRunner +
                                        " --operation block_transpose --kernels cpu_block_transpose --sizes 64 "
                                        "--block 4,64 --dry-run",
                                    dir, dir / "run");
    EXPECT_EQ(option.exit_code, 2) << option.err;
    EXPECT_TRUE(contains(option.err, "--block")) << option.err;
    EXPECT_TRUE(contains(option.err, "block must be <= 32")) << option.err;
}

TEST(ConfigOutput, ARepeatedShapeIsMeasuredOnceWithANoteNamingBothPaths) {
    const auto dir = fresh_dir("repeated-shape");
    std::ofstream(dir / "twice.json") << R"({"kernels": ["cpu_naive"], "repeats": 1, "warmup": 0, "noise_target": 0,
        "shapes": [{"square": 16}, {"m": 8, "n": 8, "k": 8}, {"m": 16, "n": 16, "k": 16}]})";
    const auto r = run_command(kRunner + " --config twice.json --json t.json", dir, dir / "run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(
        r.err, "runner: note: twice.json: /shapes/2: 16x16x16 is already given at /shapes/0; it is measured once"))
        << r.err;
    EXPECT_EQ(read_records_json(dir / "t.json").size(), 2u);
}

// The CSV goes beside the JSON report the user named, not into kreg-reports/.
TEST(ConfigOutput, JsonNamedWithoutCsvPutsTheCsvBesideIt) {
    const auto dir = fresh_dir("csv-beside");
    const auto r = run_command(kRunner + " --kernels cpu_naive --sizes 8 --repeat 1 --warmup 0 --json out/run.json",
                               dir, dir / "run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::is_regular_file(dir / "out" / "run.json"));
    EXPECT_TRUE(std::filesystem::is_regular_file(dir / "out" / "run.csv")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "kreg-reports")) << r.err;
    const auto both = run_command(
        kRunner + " --kernels cpu_naive --sizes 8 --repeat 1 --warmup 0 --json b.json --csv c/b.csv", dir, dir / "run");
    ASSERT_EQ(both.exit_code, 0) << both.err;
    EXPECT_TRUE(std::filesystem::is_regular_file(dir / "c" / "b.csv"));
    EXPECT_FALSE(std::filesystem::exists(dir / "b.csv"));
    // A config naming both reports: --json alone takes the CSV along, beside it.
    std::ofstream(dir / "named.json") << R"({"kernels": ["cpu_naive"], "shapes": [{"square": 8}], "repeats": 1,
        "output": {"json": "cfg/named.json", "csv": "cfg/named.csv"}})";
    const auto config = run_command(kRunner + " --config named.json --json mine.json", dir, dir / "run");
    ASSERT_EQ(config.exit_code, 0) << config.err;
    EXPECT_TRUE(std::filesystem::is_regular_file(dir / "mine.csv")) << config.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "cfg")) << config.err;
}

TEST(ConfigOutput, ListKeepsToTheKernelsAskedForAndTo120Columns) {
    const auto dir = fresh_dir("list-narrow");
    const auto all = run_command(kRunner + " --list", dir, dir / "run");
    ASSERT_EQ(all.exit_code, 0) << all.err;
    for (const auto& line : lines_of(all.out)) EXPECT_LE(line.size(), 120u) << line;
    const auto some = run_command(kRunner + " --list --kernels 'cpu_n*'", dir, dir / "run");
    ASSERT_EQ(some.exit_code, 0) << some.err;
    EXPECT_TRUE(contains(some.out, "cpu_naive")) << some.out;
    EXPECT_FALSE(contains(some.out, "cpu_blocked")) << some.out;
    const auto json = run_command(kRunner + " --list --format json --kernels cpu_blocked", dir, dir / "run");
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto doc = nlohmann::json::parse(json.out);
    ASSERT_EQ(doc["kernels"].size(), 1u) << json.out;
    EXPECT_EQ(doc["kernels"][0]["name"], "cpu_blocked");
    const auto typo = run_command(kRunner + " --list --kernels cpu_naiv", dir, dir / "run");
    EXPECT_EQ(typo.exit_code, 2);
    EXPECT_TRUE(contains(typo.err, "did you mean 'cpu_naive'")) << typo.err;
    // --wide prints every cell whole: the longest line is at least as long as without it.
    const auto wide = run_command(kRunner + " --list --wide", dir, dir / "run");
    ASSERT_EQ(wide.exit_code, 0) << wide.err;
    size_t longest = 0;
    for (const auto& line : lines_of(wide.out)) longest = std::max(longest, line.size());
    size_t longest_narrow = 0;
    for (const auto& line : lines_of(all.out)) longest_narrow = std::max(longest_narrow, line.size());
    EXPECT_GE(longest, longest_narrow);
}

// Where no GPU can be used, a CUDA sweep says why once, in plain words, with the count, and its report
// still holds every row.
TEST(ConfigOutput, ASweepThatCannotRunHereSaysWhyOnceWithACount) {
    const auto dir = fresh_dir("no-gpu-once");
    const auto listing = nlohmann::json::parse(run_command(kRunner + " --list --format json", dir, dir / "run").out);
    bool any_cuda = false, cuda_ready = false;
    for (const auto& k : listing["kernels"]) {
        if (k.value("backend", "") != "cuda") continue;
        any_cuda = true;
        cuda_ready = cuda_ready || k.value("unavailable_reason", "x").empty();
    }
    if (!any_cuda) GTEST_SKIP() << "built without CUDA: no CUDA rows to skip";
    if (cuda_ready) GTEST_SKIP() << "a CUDA device is present, so the rows run here";
    const auto r = run_command(kRunner + " --config sweeps/h200.json --json h.json --no-calibrate", dir, dir / "run");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    const auto rows = read_records_json(dir / "h.json");
    ASSERT_GT(rows.size(), 100u);
    const auto err_lines = lines_of(r.err);
    EXPECT_LE(err_lines.size(), 8u) << r.err;  // not one line per row
    EXPECT_LE(lines_of(r.out).size(), 5u) << r.out;
    EXPECT_TRUE(contains(r.err, ": the " + std::to_string(rows.size()) + " CUDA rows of this sweep cannot run here"))
        << r.err;
    // The machine has no driver (cudaErrorInsufficientDriver) or no GPU: either way in words, not only the code.
    EXPECT_TRUE(contains(r.err, "no NVIDIA driver") || contains(r.err, "no NVIDIA GPU is visible")) << r.err;
    for (const auto& row : rows) EXPECT_EQ(row.status, RowStatus::skipped) << row.kernel;
}

}  // namespace
}  // namespace kreg
