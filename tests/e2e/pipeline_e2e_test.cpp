// End to end through the runner and its workers: the measurement pipeline's every-call check and the
// stopping rule's record (pipeline/pipeline.hpp, measure/sampler.hpp).
#include "record_json.hpp"
#include "common/job.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>

namespace kreg {
namespace {

using test::fresh_dir;
using test::run_command;

const std::string kRunner = KREG_RUNNER;
using test::fixture;

using test::rows_by_kernel;

TEST(PipelineEndToEnd, AKernelThatSkipsEverySecondCallIsAWrongResultRow) {
    // 1 warm-up and 5 timed calls: the checked call (1) and the last timed call (7) compute, so checking
    // only those two would call it ok.
    const auto dir = fresh_dir("pipeline-every-second");
    const std::string cmd = kRunner + " --no-default-plugins --plugin " + fixture("fixture_skips_every_second_call") +
                            " --plugin " + fixture("fixture_good") +
                            " --kernels fixture_skips_every_second_call,fixture_good --shape 9x7x5" +
                            " --warmup 1 --repeat 5 --json out.json --csv out.csv";
    const auto r = run_command(cmd, dir, dir);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    auto rows = rows_by_kernel(dir / "out.json");
    const Record& bad = rows["fixture_skips_every_second_call"];
    EXPECT_EQ(bad.status, RowStatus::wrong_result) << bad.reason;
    EXPECT_EQ(bad.reason.rfind("warm-up call 1: unwritten element at (", 0), 0u) << bad.reason;
    EXPECT_EQ(rows["fixture_good"].status, RowStatus::ok) << rows["fixture_good"].reason;
}

TEST(PipelineEndToEnd, TheRecordSaysWhySamplingStoppedWithTheIntervalAndTheCount) {
    // Quick runs carry the sweep default noise target (0.5 %): at least --repeat samples, then until the
    // median's interval is narrow enough or the time budget is spent.
    const auto dir = fresh_dir("pipeline-stopping");
    const auto r = run_command(kRunner +
                                   " --kernels cpu_naive --sizes 16 --warmup 1 --repeat 8 --time-budget 0.5"
                                   " --json out.json --csv out.csv",
                               dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Record row = rows_by_kernel(dir / "out.json")["cpu_naive"];
    ASSERT_EQ(row.status, RowStatus::ok) << row.reason;
    ASSERT_TRUE(row.stats.has_value());
    EXPECT_GE(row.stats->count, 8);
    EXPECT_EQ(size_t(row.stats->count), row.samples_ms.size());
    ASSERT_TRUE(row.stats->median_ci_low_ms && row.stats->median_ci_high_ms);
    EXPECT_LE(*row.stats->median_ci_low_ms, row.stats->median_ms);
    EXPECT_GE(*row.stats->median_ci_high_ms, row.stats->median_ms);
    const nlohmann::json sampling = extra_json(row).at("sampling");
    EXPECT_EQ(sampling.at("noise_target"), 0.005);
    EXPECT_EQ(sampling.at("time_cap_s"), 0.5);
    const std::string stop = sampling.at("stop");
    EXPECT_TRUE(stop == "noise_target" || stop == "time_cap" || stop == "max_samples") << stop;
    if (stop == "noise_target") EXPECT_LE(sampling.at("relative_half_width").get<double>(), 0.005);
    EXPECT_EQ(extra_json(row).at("call_checks").at("scanned_calls"), 1 + row.stats->count);
}

}  // namespace
}  // namespace kreg
