// Checks a kernel cannot lean on, on the GPU (issue 20, item 3): the CUDA fixtures of
// tests/fixtures/harness_state fail in a plain run, a strict run and a run checked outside the worker;
// every job runs in a worker process (Executor), because a far write ends the CUDA context of the process
// that makes it. The honest control passes all three.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cuda/device_facts.hpp"
#include "cuda/fenced_device_buffer.hpp"
#include "ops/output_export.hpp"
#include "sweep/checked_calls.hpp"
#include "sweep/executor.hpp"

namespace kreg {
namespace {

std::string fixture(const std::string& name) { return std::string(KREG_FIXTURE_DIR) + "/" + name + ".so"; }

enum class Mode { plain, strict, checked_outside };
const char* to_text(Mode mode) {
    return mode == Mode::plain ? "plain" : mode == Mode::strict ? "strict" : "checked outside";
}

struct Outcome {
    RowStatus status;
    std::string reason;
};

Outcome run(const std::string& kernel, Mode mode, const Shape& shape) {
    ExecutorOptions options;
    options.runner_exe = KREG_RUNNER;
    Executor executor(options);
    Job job;
    job.id = 5;
    job.seed = 11;
    job.kernel = kernel;
    job.plugin_path = fixture(kernel);
    job.shape = shape;
    job.settings.warmup = 2;
    job.settings.repeats = 5;
    job.settings.timeout_s = 120;
    job.settings.strict = mode == Mode::strict;
    job.settings.checked_outside = mode == Mode::checked_outside;
    if (mode != Mode::checked_outside) {
        const Record r = executor.run_job(job);
        return {r.status, r.reason};
    }
    std::vector<CheckedCall> calls;
    const Record r = executor.run_checked_job(job, calls);
    if (r.status != RowStatus::ok) return {r.status, r.reason};
    std::vector<CallOutput> outputs;
    for (const CheckedCall& c : calls) outputs.push_back({c.call, c.seed, c.output.data(), c.output.count()});
    const TrustedCheck check = check_call_outputs(job, outputs, 1 + job.settings.warmup + job.settings.repeats);
    return {check.passed ? RowStatus::ok : RowStatus::wrong_result, check.reason};
}

struct Expected {
    const char* kernel;
    RowStatus status;
    const char* reason_has;
};

// A fault's row: the sticky error, and the runner's note that C lies between unmapped pages.
constexpr const char* kFaultNote = "C lies between unmapped pages";

const Expected kFixtures[] = {
    {"state_cuda_nan_as_zero", RowStatus::wrong_result, ""},
    {"state_cuda_clobbers_b", RowStatus::failed, "kernel modified its input B"},
    {"state_cuda_write_4mib_past_c", RowStatus::crashed, kFaultNote},
    {"state_cuda_write_64mib_past_c", RowStatus::crashed, kFaultNote},
    // One row past C: within a cudaMalloc'd band it was seen only in strict runs; now it faults in all.
    {"fixture_cuda_writes_past_c", RowStatus::crashed, kFaultNote},
};

TEST(GpuHarnessState, EveryFixtureFailsInPlainStrictAndCheckedRuns) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    ASSERT_TRUE(std::filesystem::exists(KREG_RUNNER)) << "build the runner target: " << KREG_RUNNER;
    for (const Shape& shape : {Shape{33, 65, 17}, Shape{256, 192, 160}, Shape{1000, 1000, 64}})
        for (const Expected& e : kFixtures)
            for (Mode mode : {Mode::plain, Mode::strict, Mode::checked_outside}) {
                const Outcome o = run(e.kernel, mode, shape);
                EXPECT_EQ(o.status, e.status)
                    << e.kernel << ", " << to_text(mode) << ", " << to_string(shape) << ": " << o.reason;
                EXPECT_NE(o.reason.find(e.reason_has), std::string::npos)
                    << e.kernel << ", " << to_text(mode) << ", " << to_string(shape) << ": " << o.reason;
            }
}

TEST(GpuHarnessState, TheHonestControlPassesEveryMode) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    for (const Shape& shape : {Shape{33, 65, 17}, Shape{256, 192, 160}})
        for (Mode mode : {Mode::plain, Mode::strict, Mode::checked_outside}) {
            const Outcome o = run("honest_cuda", mode, shape);
            EXPECT_EQ(o.status, RowStatus::ok) << to_text(mode) << ", " << to_string(shape) << ": " << o.reason;
        }
}

// A row says which defence against writes outside C it had (extra.c_fence): on the H200, C between unmapped
// pages, so no fallback reason; in plain and strict runs alike.
TEST(GpuHarnessState, TheRowNamesTheFenceAroundC) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    for (bool strict : {false, true}) {
        ExecutorOptions options;
        options.runner_exe = KREG_RUNNER;
        Executor executor(options);
        Job job;
        job.id = 6;
        job.seed = 11;
        job.kernel = "honest_cuda";
        job.plugin_path = fixture("honest_cuda");
        job.shape = Shape{256, 192, 160};
        job.settings.warmup = 1;
        job.settings.repeats = 3;
        job.settings.timeout_s = 120;
        job.settings.strict = strict;
        const Record r = executor.run_job(job);
        ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
        EXPECT_EQ(r.extra.c_fence, std::optional<std::string>("unmapped_pages")) << (strict ? "strict" : "plain");
        EXPECT_FALSE(r.extra.c_fence_fallback) << *r.extra.c_fence_fallback;
    }
}

// The layout itself, without a fault: on a device with the VMM API, C is 256-byte aligned, the band lies
// right before it, the slack after it is under 256 bytes, and all three are usable memory.
TEST(FencedDeviceBuffer, CLiesAtTheEndOfItsMappingWithTheBandBeforeIt) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    for (size_t c_bytes : {size_t(4), size_t(8580), size_t(1) << 20, (size_t(3) << 20) + 12}) {
        FencedDeviceBuffer buffer(1 << 20, c_bytes, size_t(256) << 20, 0);
        EXPECT_EQ(buffer.fallback_reason(), "") << "the H200's driver has the VMM API";
        EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.c()) % 256, 0u) << c_bytes;
        EXPECT_EQ(buffer.band() + (1 << 20), reinterpret_cast<unsigned char*>(buffer.c())) << c_bytes;
        EXPECT_LT(buffer.after_bytes(), 256u) << c_bytes;
        EXPECT_EQ((reinterpret_cast<uintptr_t>(buffer.after()) + buffer.after_bytes()) % 4096, 0u)
            << "the mapping ends where the slack ends";
        ASSERT_EQ(cudaMemset(buffer.band(), 0x5a, (1 << 20) + c_bytes + buffer.after_bytes()), cudaSuccess) << c_bytes;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << c_bytes;
    }
}

}  // namespace
}  // namespace kreg
