// End to end: reduction sweeps through the real runner on the CPU: cpu_reduce_sum and the CPU template's
// starting point right at tiny, odd and ragged n and measured in GB/s, and the check (docs/TOLERANCES.md,
// "Reduction") failing a kernel that drops the last element, one that adds the first twice, one that writes a
// NaN and one that never writes, with the outputs poisoned before every call; in plain and strict runs. The
// shipped sweep config parses, and a reduction's shapes (its row of common/operations.def: n alone) refuse keys
// of another operation.
#include "common/job.hpp"
#include "ops/reduction.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <vector>

namespace kreg {
namespace {

using test::fixture;
using test::fresh_dir;
using test::run_command;

const std::string kRunner = KREG_RUNNER;
const std::string kQuickRun = kRunner + " --no-default-plugins --plugin " + std::string(KREG_PLUGIN_DIR) +
                              "/cpu_reduce.so --plugin " + std::string(KREG_PLUGIN_DIR) +
                              "/cpu_naive.so --warmup 1 --repeat 3 --time-budget 0.05";

struct Run {
    int exit_code = -1;
    std::string out, err;
    std::vector<Record> rows;
};

Run run_quick(const std::string& name, const std::string& options, const std::vector<std::string>& fixtures = {}) {
    const auto dir = fresh_dir(name);
    std::string cmd = kQuickRun;
    for (const auto& f : fixtures) cmd += " --plugin " + fixture(f);
    const auto r = run_command(cmd + " " + options + " --json out.json", dir, dir);
    Run run{r.exit_code, r.out, r.err, {}};
    if (std::filesystem::exists(dir / "out.json")) run.rows = read_records_json(dir / "out.json");
    return run;
}

TEST(Reduction, TinyOddAndRaggedNAreRightAndMeasuredInBytesPerSecond) {
    const auto run = run_quick("reduction-ok",
                               "--operation reduction --kernels 'cpu_reduce_sum,student_reduction' "
                               "--sizes 1,2,3,257,1000003",
                               {"fixture_student_reduction_cpu"});
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    ASSERT_EQ(run.rows.size(), 10u) << run.out;  // cpu_naive's GEMM kernel is left out of a reduction sweep
    for (const Record& r : run.rows) {
        const std::string where = r.kernel + " " + to_string(r.shape) + ": " + r.reason;
        EXPECT_EQ(r.operation, Operation::reduction) << where;
        EXPECT_EQ(r.status, RowStatus::ok) << where;
        EXPECT_EQ(r.shape.m, 0) << where;  // n alone (common/operations.def)
        EXPECT_EQ(r.shape.k, 0) << where;
        // Held to the reduction's own bound for its n, not GEMM's fixed 1e-5.
        EXPECT_EQ(r.tolerance.value_or(-1), reduction_tolerance(r.shape.n)) << where;
        EXPECT_LE(r.max_rel_err.value_or(1), *r.tolerance) << where;
        ASSERT_TRUE(r.gbps.has_value()) << where;
        EXPECT_GT(*r.gbps, 0) << where;
        EXPECT_FALSE(r.gflops.has_value()) << where;
    }
    EXPECT_NE(run.out.find("GB/s"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("  1000003  "), std::string::npos) << run.out;
}

// Each wrong kernel, at n where an ordinary element is below the tolerance (2^20 + 1) and where it is not.
void expect_each_wrong_kernel_fails(const Run& run) {
    const std::map<std::string, std::string> says{
        {"fixture_reduction_drops_last", "but the exact sum is"},
        {"fixture_reduction_doubles_first", "but the exact sum is"},
        {"fixture_reduction_writes_nan", "NaN"},
        // out[0] starts as the poison NaN or a finite fill (verify/output_fill.hpp): "never written", or a wrong sum.
        {"fixture_reduction_unwritten", ""},
    };
    int wrong = 0;
    for (const Record& r : run.rows) {
        const std::string where = r.kernel + " " + to_string(r.shape) + ": " + r.reason;
        if (r.kernel == "fixture_reduction_good") {
            EXPECT_EQ(r.status, RowStatus::ok) << where;
            continue;
        }
        ASSERT_EQ(says.count(r.kernel), 1u) << where;
        EXPECT_EQ(r.status, RowStatus::wrong_result) << where;
        EXPECT_NE(r.reason.find(says.at(r.kernel)), std::string::npos) << where;
        if (r.kernel == "fixture_reduction_unwritten")
            EXPECT_TRUE(r.reason.find("written") != std::string::npos ||
                        r.reason.find("but the exact sum is") != std::string::npos)
                << where;
        ++wrong;
    }
    EXPECT_EQ(wrong, 4 * 3) << run.out;
}

TEST(Reduction, ADroppedOrDoubledElementANanAndAnUnwrittenResultAreWrongResults) {
    const std::vector<std::string> fixtures{"fixture_reduction_good", "fixture_reduction_drops_last",
                                            "fixture_reduction_doubles_first", "fixture_reduction_writes_nan",
                                            "fixture_reduction_unwritten"};
    const auto run =
        run_quick("reduction-wrong", "--operation reduction --kernels 'fixture_*' --sizes 1,1000,1048577", fixtures);
    ASSERT_EQ(run.exit_code, 1) << run.err << run.out;
    ASSERT_EQ(run.rows.size(), 15u) << run.out;
    expect_each_wrong_kernel_fails(run);
    // Strict: every call's output checked in full, with inputs drawn per call.
    const auto strict =
        run_quick("reduction-wrong-strict",
                  "--strict --operation reduction --kernels 'fixture_*' --sizes 1,1000,1048577", fixtures);
    ASSERT_EQ(strict.exit_code, 1) << strict.err << strict.out;
    ASSERT_EQ(strict.rows.size(), 15u) << strict.out;
    expect_each_wrong_kernel_fails(strict);
}

TEST(Reduction, TheShippedSweepParsesAndShapesRefuseKeysOfAnotherOperation) {
    const auto dir = fresh_dir("reduction-configs");
    // Its shapes and keys parse (its kernels are CUDA plugins, which this machine may lack: cpu_reduce_sum
    // stands in for them).
    const auto plan = run_command(
        kQuickRun + " --config sweeps/reduction-h200.json --kernels cpu_reduce_sum --baseline cpu_reduce_sum --dry-run",
        dir, dir);
    EXPECT_EQ(plan.exit_code, 0) << plan.err << plan.out;
    EXPECT_NE(plan.out.find("  268435456  "), std::string::npos) << plan.out;
    EXPECT_NE(plan.out.find("  67108865  "), std::string::npos) << plan.out;
    std::ofstream(dir / "m.json")
        << R"({"operation": "reduction", "kernels": ["cpu_reduce_sum"], "shapes": [{"m": 2, "n": 2}]})";
    const auto m = run_command(kRunner + " --config m.json", dir, dir);
    EXPECT_EQ(m.exit_code, 2);
    EXPECT_NE(m.err.find("/shapes/0/m"), std::string::npos) << m.err;
    EXPECT_NE(m.err.find("a reduction shape has no 'm'"), std::string::npos) << m.err;
    const auto shape = run_command(kQuickRun + " --operation reduction --shape 4x4", dir, dir);
    EXPECT_EQ(shape.exit_code, 2);
    EXPECT_NE(shape.err.find("but a reduction shape is N"), std::string::npos) << shape.err;
}

}  // namespace
}  // namespace kreg
