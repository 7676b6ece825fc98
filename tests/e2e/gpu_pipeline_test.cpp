// On a GPU, through the runner: the CUDA backend of the measurement pipeline. Timed launches are queued
// behind a kernel that holds the stream (the launch's host overhead is reported apart), a plugin that
// waits for its own launch inside run_gemm does not deadlock the held stream, the first job of a worker
// waits for the clocks, and every call's C is scanned on the device. Without a GPU every test is skipped
// with the reason.
#include "record_json.hpp"
#include "common/job.hpp"
#include "cuda/device_facts.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace kreg {
namespace {

using test::fixture;

std::map<std::string, Record> run_fixtures(const std::string& dir_name, const std::vector<std::string>& kernels,
                                           int expected_exit, const std::string& options = "") {
    const auto dir = test::fresh_dir(dir_name);
    std::string cmd = std::string(KREG_RUNNER) +
                      " --no-default-plugins --no-calibrate --shape 64x48x40 --warmup 1 --repeat 6" +
                      " --timeout 120 --json out.json --csv out.csv " + options + " --kernels ";
    for (size_t i = 0; i < kernels.size(); ++i) cmd += (i ? "," : "") + kernels[i];
    for (const auto& k : kernels) cmd += " --plugin " + fixture(k);
    const auto r = test::run_command(cmd, dir, dir);
    EXPECT_EQ(r.exit_code, expected_exit) << r.err;
    std::map<std::string, Record> rows;
    for (const auto& rec : read_records_json(dir / "out.json")) rows[rec.kernel] = rec;
    EXPECT_EQ(rows.size(), kernels.size()) << r.err;
    return rows;
}

TEST(GpuPipeline, TimedLaunchesAreHeldAndTheLaunchOverheadIsReportedApart) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    // The held stream times rows CUPTI does not (gpu_cupti_test.cpp has the CUPTI rows).
    auto rows = run_fixtures("gpu-pipeline-held", {"fixture_good_cuda"}, 0, "--timer events");
    const Record& r = rows["fixture_good_cuda"];
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_EQ(extra_json(r).value("timing_method", ""), "held_stream") << extra_json(r).dump();
    ASSERT_TRUE(extra_json(r).contains("launch_overhead_ms")) << extra_json(r).dump();
    EXPECT_GT(extra_json(r)["launch_overhead_ms"].get<double>(), 0.0);
    EXPECT_FALSE(extra_json(r).contains("hold_timeouts")) << extra_json(r).dump();
    // The worker's first job waited for the clocks before its first sample.
    ASSERT_TRUE(extra_json(r)["sampling"].contains("clock_settle")) << extra_json(r).dump();
    EXPECT_GE(extra_json(r)["sampling"]["clock_settle"]["calls"].get<int>(), 10);
    ASSERT_TRUE(r.stats.has_value());
    EXPECT_GE(r.stats->count, 6);
    // Every warm-up, settling and timed call's C was scanned.
    EXPECT_GE(extra_json(r)["call_checks"]["scanned_calls"].get<int>(), 1 + r.stats->count);
}

TEST(GpuPipeline, APluginThatWaitsForItsOwnLaunchDoesNotDeadlockTheHeldStream) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    auto rows = run_fixtures("gpu-pipeline-sync", {"fixture_cuda_syncs_in_run"}, 0, "--timer events");
    const Record& r = rows["fixture_cuda_syncs_in_run"];
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    // The hold gave up once, and the rest of the job was timed without it.
    EXPECT_EQ(extra_json(r).value("timing_method", ""), "held_stream_until_timeout") << extra_json(r).dump();
    EXPECT_EQ(extra_json(r).value("hold_timeouts", 0), 1) << extra_json(r).dump();
}

TEST(GpuPipeline, AKernelThatSkipsEverySecondCallIsCaughtOnTheDevice) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    auto rows = run_fixtures("gpu-pipeline-skips", {"fixture_cuda_skips_every_second_call"}, 1);
    const Record& r = rows["fixture_cuda_skips_every_second_call"];
    EXPECT_EQ(r.status, RowStatus::wrong_result) << r.reason;
    // (0, 0) and all 3072 when C started as NaN; with a finite fill (verify/output_fill.hpp), the elements
    // whose fill no result can equal.
    EXPECT_EQ(r.reason.rfind("warm-up call 1: unwritten element at (", 0), 0u) << r.reason;
    EXPECT_NE(r.reason.find(" of 3072 elements of C never written"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace kreg
