// On a GPU: sweep_defences_test.cpp for the CUDA fixtures. Each harness-state and observed-outcome fixture in
// `runner --plugin X.so` plain and `--strict`, as the user running the tests and as nobody (uid 65534 through
// setpriv), its rows read from the JSON report; the honest CUDA plugins under the same harness pass. Grading
// them as nobody is GradeGpu.HarnessStateAndOutcomeFixturesAsAnUnprivilegedUser (grade_gpu_test.cpp).
//
// What a fault gives: the worker waits on the harness stream after every call (pipeline/cuda_backend.cpp,
// synchronize); a write outside C meets the unmapped pages around C's mapping (cuda/fenced_device_buffer.hpp)
// and the wait returns cudaErrorIllegalAddress, sticky, so the worker ends the row itself: crashed, the
// worker's claim cuda_error (WorkerFatal::cuda, worker/session.cpp; read_record_claim keeps it for a crashed
// row), with the runner's note that C lies between unmapped pages. No signal, no exit status on the row.
#include "cuda/device_facts.hpp"
#include "fixture_sweep.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <tuple>

namespace kreg {
namespace {
using test::ExpectedRow;
using test::RunAs;
using test::SweepMode;

// pipeline/cuda_backend.cpp, synchronize: the note of an illegal address where C lies between unmapped pages.
constexpr const char* kFaultNote = "C lies between unmapped pages";

const ExpectedRow kFixtures[] = {
    // Harness state: C's initial contents (C += A*B reading NaN as 0; nothing launched on every second call).
    {"state_cuda_nan_as_zero", RowStatus::wrong_result, EndCause::none, "", nullptr, ""},
    {"fixture_cuda_skips_every_second_call", RowStatus::wrong_result, EndCause::none, "", nullptr, ""},
    // What lies past C: one row past it, 4 MiB and 64 MiB past it; each meets the unmapped pages.
    {"fixture_cuda_writes_past_c", RowStatus::crashed, EndCause::cuda_error, kFaultNote, nullptr, ""},
    {"state_cuda_write_4mib_past_c", RowStatus::crashed, EndCause::cuda_error, kFaultNote, nullptr, ""},
    {"state_cuda_write_64mib_past_c", RowStatus::crashed, EndCause::cuda_error, kFaultNote, nullptr, ""},
    // Far outside any allocation (2^40 floats past C).
    {"fixture_illegal_address", RowStatus::crashed, EndCause::cuda_error, "cudaErrorIllegalAddress", nullptr, ""},
    // What lies past B: the harness's NaN padding (whether the GPU keeps its payload is the hardware's business,
    // gpu_faults_test.cpp: only the status is asserted).
    {"fixture_cuda_reads_past_b", RowStatus::wrong_result, EndCause::none, "", nullptr, ""},
    // The inputs compared with what the harness wrote after every checked call, plain runs too.
    {"state_cuda_clobbers_b", RowStatus::failed, EndCause::kernel_failed, "kernel modified its input B", nullptr, ""},
    {"cheat_cuda_modifies_input", RowStatus::failed, EndCause::kernel_failed, "kernel modified its input A", nullptr,
     ""},
    // Observed outcomes: kreg's phrases as a kernel's message are its failure, shown as written; a result
    // rewritten to claim the runner's own observations is the breach; a hung kernel, the parent's call limit.
    {"fixture_cuda_kreg_phrases", RowStatus::failed, EndCause::kernel_failed, "worker killed by SIGSYS", nullptr, ""},
    {"attack_cuda_forge_memory_cap", RowStatus::crashed, EndCause::protocol_breach,
     "protocol violation: claimed the end cause 'memory_cap', which only the runner observes", nullptr, ""},
    {"attack_cuda_forge_sandbox_refusal", RowStatus::crashed, EndCause::protocol_breach,
     "protocol violation: claimed the end cause 'sandbox_refusal', which only the runner observes", nullptr, ""},
    {"fixture_infinite_kernel", RowStatus::timeout, EndCause::call_timeout, "per-call time limit of 2", nullptr,
     "--call-timeout 2"},
    // The honest controls.
    {"honest_cuda", RowStatus::ok, EndCause::none, "", nullptr, ""},
    {"fixture_good_cuda", RowStatus::ok, EndCause::none, "", nullptr, ""},
};

// Odd edges, and tiles enough that a far write's block is not the first (gpu_harness_state_test.cpp's first two).
const std::vector<std::string> kShapes = {"33x65x17", "256x192x160"};

class GpuSweepDefences : public ::testing::TestWithParam<test::DefenceCase> {};

// Why nobody cannot use the GPU here, if so: the driver's control node must be open to it.
std::optional<std::string> why_nobody_has_no_gpu() {
    if (std::system((test::as_nobody() + "sh -c 'test -r /dev/nvidiactl && test -w /dev/nvidiactl'").c_str()) != 0)
        return "uid 65534 cannot open /dev/nvidiactl (the driver's device nodes are not open to other users)";
    return std::nullopt;
}

TEST_P(GpuSweepDefences, EveryRowEndsAsItsDefenceSays) {
    const bool nobody = std::get<2>(GetParam()).nobody;
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    if (nobody) {
        if (auto why = test::why_cannot_run_as_nobody(KREG_RUNNER)) GTEST_SKIP() << *why;
        if (auto why = why_nobody_has_no_gpu()) GTEST_SKIP() << *why;
    }
    const auto sweep = test::sweep_defence_case("gpu-sweep-defence-", GetParam(), kShapes, "--no-calibrate ");
    // Every CUDA row says how C was fenced; on the H200 (the VMM API), by unmapped pages.
    for (const Record& r : sweep.rows)
        if (r.status == RowStatus::ok)
            EXPECT_EQ(r.extra.c_fence, std::optional<std::string>("unmapped_pages")) << r.kernel << ": " << r.reason;
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSweepDefences, test::every_mode_and_user(kFixtures), test::defence_case_name);

}  // namespace
}  // namespace kreg
