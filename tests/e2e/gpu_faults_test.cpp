// On a GPU: a kernel that faults (sticky illegal address) or never ends becomes one row — crashed with
// the CUDA error's name, or timeout — and the next kernel runs in a fresh worker with a fresh context.
#include "common/job.hpp"
#include "cuda/device_facts.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>

namespace kreg {
namespace {

using test::fixture;

TEST(GpuFaults, IllegalAddressAndHungKernelsBecomeRowsAndTheNextKernelRuns) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto dir = test::fresh_dir("gpu-faults");
    std::string cmd =
        std::string(KREG_RUNNER) + " --no-default-plugins --no-calibrate --shape 64x48x40 --repeat 2 --timeout 10";
    // Order matters: the good kernel runs after each fault, in a fresh worker.
    for (const char* f : {"fixture_illegal_address", "fixture_good_cuda", "fixture_infinite_kernel"})
        cmd += " --plugin " + fixture(f);
    cmd += " --kernels fixture_illegal_address,fixture_infinite_kernel,fixture_good_cuda --json out.json --csv out.csv";
    const auto r = test::run_command(cmd, dir, dir);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    std::map<std::string, Record> rows;
    for (const auto& rec : read_records_json(dir / "out.json")) rows[rec.kernel] = rec;
    ASSERT_EQ(rows.size(), 3u) << r.err;
    EXPECT_EQ(rows["fixture_illegal_address"].status, RowStatus::crashed) << rows["fixture_illegal_address"].reason;
    EXPECT_NE(rows["fixture_illegal_address"].reason.find("cudaErrorIllegalAddress"), std::string::npos)
        << rows["fixture_illegal_address"].reason;
    EXPECT_EQ(rows["fixture_infinite_kernel"].status, RowStatus::timeout) << rows["fixture_infinite_kernel"].reason;
    EXPECT_EQ(rows["fixture_good_cuda"].status, RowStatus::ok) << rows["fixture_good_cuda"].reason;
}

TEST(GpuFaults, AHungKernelIsEndedByThePerCallLimitLongBeforeTheJobLimit) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto dir = test::fresh_dir("gpu-call-limit");
    const std::string cmd = std::string(KREG_RUNNER) +
                            " --no-default-plugins --no-calibrate --shape 64x48x40 --repeat 2" +
                            " --timeout 120 --call-timeout 2 --plugin " + fixture("fixture_infinite_kernel") +
                            " --plugin " + fixture("fixture_good_cuda") + " --json out.json --csv out.csv";
    const auto started = std::chrono::steady_clock::now();
    const auto r = test::run_command(cmd, dir, dir);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_EQ(r.exit_code, 1) << r.err;
    std::map<std::string, Record> rows;
    for (const auto& rec : read_records_json(dir / "out.json")) rows[rec.kernel] = rec;
    ASSERT_EQ(rows.size(), 2u) << r.err;
    const Record& hung = rows["fixture_infinite_kernel"];
    EXPECT_EQ(hung.status, RowStatus::timeout) << hung.reason;
    EXPECT_NE(hung.reason.find("per-call time limit"), std::string::npos) << hung.reason;
    EXPECT_EQ(rows["fixture_good_cuda"].status, RowStatus::ok) << rows["fixture_good_cuda"].reason;
    // Not a timing assertion on the kernels: only that the 120 s job limit was not what ended it.
    EXPECT_LT(seconds, 100) << "the job limit, not the call limit, ended the hung kernel";
}

// A read past the end of B reads the harness's NaN padding, not another allocation: the row fails with a
// NaN, and the reason claims no more than the bits show. Whether the GPU kept the padding's payload is
// the hardware's business (NVIDIA's arithmetic returns the canonical NaN), so either diagnosis is right;
// "unwritten" would be wrong, since every element was written.
TEST(GpuFaults, AReadPastTheEndOfBIsANaNFromThePaddingNeverAnUnwrittenElement) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto dir = test::fresh_dir("gpu-reads-past-b");
    const std::string cmd = std::string(KREG_RUNNER) +
                            " --no-default-plugins --no-calibrate --shape 64x48x40 --repeat 1" +
                            " --warmup 0 --plugin " + fixture("fixture_cuda_reads_past_b") + " --json out.json";
    const auto r = test::run_command(cmd, dir, dir);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const auto rows = read_records_json(dir / "out.json");
    ASSERT_EQ(rows.size(), 1u) << r.err;
    const std::string& reason = rows[0].reason;
    EXPECT_EQ(rows[0].status, RowStatus::wrong_result) << reason;
    const bool payload_kept =
        reason.find("computed from the padding after B: a value was read past the end of B") != std::string::npos;
    const bool canonical =
        reason.find("the canonical NaN 0x7fffffff, whose bits do not say where it came from") != std::string::npos;
    EXPECT_TRUE(payload_kept || canonical) << reason;
    EXPECT_EQ(reason.find("unwritten"), std::string::npos) << reason;
    std::cout << "the GPU's diagnosis of a read past B: " << reason << "\n";  // which of the two, for the record
}

}  // namespace
}  // namespace kreg
