// On a GPU, through the runner: the CUPTI timer (cuda/cupti_timer.hpp). A row it timed says so and carries
// the kernel time beside the event time; work a plugin leaves running on a stream of its own is counted in
// the sample and named; and where CUPTI cannot be had the row is timed by events and says why. No test
// here judges speed beyond ratios a loaded machine cannot come near (the times themselves are the H200
// batch's business, tools/cupti_vs_ncu.py). Without a GPU every test is skipped with the reason.
#include <gtest/gtest.h>

#include <string>

#include "common/job.hpp"
#include "cuda/device_facts.hpp"
#include "record_json.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

namespace kreg {
namespace {

using test::fixture;

std::string plugin(const std::string& name) { return std::string(KREG_PLUGIN_DIR) + "/" + name + ".so"; }

// One kernel of one plugin at one shape, through the runner; env is prefixed to the command (VAR=value ...).
Record run_one(const std::string& dir_name, const std::string& plugin_path, const std::string& kernel,
               const std::string& args, int expected_exit = 0, const std::string& env = "") {
    const auto dir = test::fresh_dir(dir_name);
    const std::string cmd = env + " " + std::string(KREG_RUNNER) +
                            " --no-default-plugins --no-calibrate --timeout 120" + " --json out.json --kernels " +
                            kernel + " --plugin " + plugin_path + " " + args;
    const auto r = test::run_command(cmd, dir, dir);
    EXPECT_EQ(r.exit_code, expected_exit) << cmd << "\n" << r.err;
    const auto rows = test::rows_by_kernel(dir / "out.json");
    EXPECT_EQ(rows.count(kernel), 1u) << r.err;
    return rows.count(kernel) ? rows.at(kernel) : Record{};
}

TEST(GpuCupti, TheDefaultTimerIsCuptiAndShowsTheEventTimeBeside) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const Record r = run_one("cupti-cublas", plugin("cublas_reference"), "cublas_sgemm",
                             "--shape 2048x2048x2048 --warmup 2 --repeat 10");
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_EQ(r.timer, "cupti");
    const nlohmann::json x = extra_json(r);
    EXPECT_EQ(x.value("timing_method", ""), "cupti") << x.dump();
    EXPECT_FALSE(x.contains("timer_fallback")) << x.dump();
    ASSERT_TRUE(x.contains("kernel_time")) << x.dump();
    const nlohmann::json& kt = x["kernel_time"];
    std::cout << "cublas_sgemm 2048^3: " << kt.dump() << "\n";  // the margins, for the log
    EXPECT_EQ(kt["calls"], int(r.samples_ms.size()));
    EXPECT_EQ(kt["calls_without_records"], 0) << kt.dump();
    EXPECT_GE(kt["kernels_median"].get<double>(), 1.0) << kt.dump();
    EXPECT_EQ(kt["off_stream_calls"], 0) << "cuBLAS runs on the harness stream: " << kt.dump();
    EXPECT_EQ(kt["streams_max"], 1) << kt.dump();
    // The samples are the spans.
    ASSERT_TRUE(r.stats.has_value());
    EXPECT_DOUBLE_EQ(r.stats->median_ms, kt["span_ms_median"].get<double>());
    // One stream: the kernels cannot add up to more than their span.
    EXPECT_LE(kt["kernel_sum_ms_median"].get<double>(), kt["span_ms_median"].get<double>() * 1.0001) << kt.dump();
    // At ~1 ms of GEMM the launch gap the events also see is small: the two times agree to well within 2x
    // (the span can only be shorter, give or take the events' own resolution).
    const double ratio = kt["span_ms_median"].get<double>() / kt["event_ms_median"].get<double>();
    EXPECT_GT(ratio, 0.5) << kt.dump();
    EXPECT_LT(ratio, 1.05) << kt.dump();
}

TEST(GpuCupti, WorkLeftRunningOnASideStreamIsCountedAndNamed) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    // cheat_cuda_other_stream launches a naive GEMM on its own stream and returns at once: events on the
    // harness stream bracket nothing; CUPTI's window holds the whole GEMM.
    const Record r = run_one("cupti-side-stream", fixture("cheat_cuda_other_stream"), "cheat_cuda_other_stream",
                             "--shape 1024x1024x1024 --warmup 1 --repeat 5 --timer cupti");
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_EQ(r.timer, "cupti");
    const nlohmann::json kt = extra_json(r).at("kernel_time");
    std::cout << "cheat_cuda_other_stream 1024^3: " << kt.dump() << "\n";
    const int calls = int(r.samples_ms.size());
    EXPECT_EQ(kt["calls"], calls);
    EXPECT_EQ(kt["off_stream_calls"], calls) << kt.dump();
    EXPECT_EQ(kt["outliving_calls"], calls) << kt.dump();
    EXPECT_GE(kt["kernels_median"].get<double>(), 1.0) << kt.dump();
    EXPECT_GT(kt["outlived_ms_max"].get<double>(), 0.0) << kt.dump();
    // A naive 1024^3 GEMM takes hundreds of microseconds at least; the events saw next to nothing of it.
    EXPECT_GT(kt["span_ms_median"].get<double>(), 5 * kt["event_ms_median"].get<double>()) << kt.dump();
    EXPECT_GT(kt["span_ms_median"].get<double>(), 0.1) << kt.dump();
}

TEST(GpuCupti, TimedByEventsTheSameCallHidesItsWork) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    // The contrast that makes the previous test mean something: with --timer events the sample is the
    // held stream's, which the side-stream GEMM never touches. (Unverified: a plain run timed by events waits
    // for the harness stream only before it reads C, so the side stream's C may not be there yet.)
    const Record r = run_one("cupti-side-stream-events", fixture("cheat_cuda_other_stream"), "cheat_cuda_other_stream",
                             "--shape 1024x1024x1024 --warmup 1 --repeat 5 --timer events --no-verify");
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_EQ(r.timer, "cuda_event");
    EXPECT_FALSE(extra_json(r).contains("kernel_time"));
    EXPECT_FALSE(extra_json(r).contains("timer_fallback")) << "events were asked for: no fallback to explain";
    ASSERT_TRUE(r.stats.has_value());
    EXPECT_LT(r.stats->median_ms, 0.1) << "the held-stream events should see next to nothing of the hidden GEMM";
}

TEST(GpuCupti, WithoutLibcuptiTheRowIsTimedByEventsAndSaysWhy) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const std::string missing = "KREG_CUPTI_LIBRARY=/nonexistent/libcupti.so";
    const Record r = run_one("cupti-missing", fixture("fixture_good_cuda"), "fixture_good_cuda",
                             "--shape 64x48x40 --repeat 5", 0, missing);
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_EQ(r.timer, "cuda_event");
    const nlohmann::json x = extra_json(r);
    EXPECT_EQ(x.value("timing_method", ""), "held_stream") << x.dump();
    EXPECT_EQ(x.value("timer_fallback", "").rfind("CUPTI unavailable: dlopen(/nonexistent/libcupti.so)", 0), 0u)
        << x.dump();
    EXPECT_FALSE(x.contains("kernel_time"));
    // Asked for by name, CUPTI that cannot be had fails the row instead.
    const Record forced = run_one("cupti-missing-forced", fixture("fixture_good_cuda"), "fixture_good_cuda",
                                  "--shape 64x48x40 --repeat 5 --timer cupti", 1, missing);
    EXPECT_EQ(forced.status, RowStatus::failed);
    EXPECT_EQ(forced.reason.rfind("--timer cupti: CUPTI unavailable: dlopen(", 0), 0u) << forced.reason;
}

}  // namespace
}  // namespace kreg
