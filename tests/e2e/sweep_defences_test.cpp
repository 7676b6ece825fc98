// Issue 20, item 3's gap: the harness-state and observed-outcome fixtures in the runs a user makes, `runner
// --plugin X.so` plain and `--strict`, as the user running the tests (root in the containers, CI and on the
// GPU machine) and as an ordinary one (uid 65534 through setpriv: no delegated cgroup, no writable /root, no
// HOME of root's). Each fixture's rows must end as its defence says, read from the JSON report; the honest
// plugins under the same harness, the same options and the same users must pass, so every case can fail
// both ways. Grading (the run checked outside the worker) of the same fixtures as nobody is the last test;
// grade_attack_test.cpp grades them among the attack corpus. The CUDA fixtures: gpu_sweep_defences_test.cpp.
//
// A plain sweep has no sandbox and no memory cap (those are grading's): here the memory cap is met as a claim
// (attack_forge_memory_cap), and signals as the worker's own death (crash, abort); signals aimed at the runner
// are an attack on the grader only (grade_attack_test.cpp).
#include "fixture_sweep.hpp"
#include "foreign_libraries.hpp"
#include "grade/gradebook.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <tuple>

namespace kreg {
namespace {
namespace fs = std::filesystem;
using test::ExpectedRow;
using test::RunAs;
using test::SweepMode;

// "worker killed by SIGSEGV; last stderr: kreg: the kernel wrote past the end of C (guard page at +N bytes)"
constexpr const char* kPastC = "kreg: the kernel wrote past the end of C (guard page at +";

const ExpectedRow kFixtures[] = {
    // Harness state: C's initial contents. C += A*B reading the harness's fill as 0 (its NaN, its NaN word,
    // large or NaN values): the fill differs from call to call, finite on some, so the sum is wrong.
    {"state_nan_as_zero", RowStatus::wrong_result, EndCause::none, "", nullptr, ""},
    {"state_poison_word_as_zero", RowStatus::wrong_result, EndCause::none, "", nullptr, ""},
    {"state_large_or_nan_as_zero", RowStatus::wrong_result, EndCause::none, "", nullptr, ""},
    // C left as the previous call left it on every second call: the poison shows the unwritten element.
    {"fixture_skips_every_second_call", RowStatus::wrong_result, EndCause::none, "unwritten element", nullptr, ""},
    // What lies past C: C's mapping ends at a guard region of at least 64 MiB, so a write anywhere in it
    // faults at the write and the worker's line names the distance.
    {"state_write_1mib_past_c", RowStatus::crashed, EndCause::signal, "(guard page at +1048576 bytes)", "SIGSEGV", ""},
    {"state_write_60mib_past_c", RowStatus::crashed, EndCause::signal, "(guard page at +62914560 bytes)", "SIGSEGV",
     ""},
    {"fixture_writes_far_past_c", RowStatus::crashed, EndCause::signal, "(guard page at +6000 bytes)", "SIGSEGV", ""},
    {"attack_write_far_past_c", RowStatus::crashed, EndCause::signal, kPastC, "SIGSEGV", ""},
    // What lies past B: the harness's NaN padding, named by its payload.
    {"fixture_reads_past_b", RowStatus::wrong_result, EndCause::none, "a value was read past the end of B", nullptr,
     ""},
    // The inputs looked at again after every checked call, plain runs too.
    {"state_clobbers_b", RowStatus::failed, EndCause::kernel_failed, "kernel modified its input B", nullptr, ""},
    // Observed outcomes. A message made of kreg's own phrases is the kernel's failure, shown as written.
    {"attack_kreg_phrases", RowStatus::failed, EndCause::kernel_failed, "worker killed by SIGSYS", nullptr, ""},
    // The worker's result rewritten to claim what only the runner observes: the claim is the breach.
    {"attack_forge_memory_cap", RowStatus::crashed, EndCause::protocol_breach,
     "protocol violation: claimed the end cause 'memory_cap', which only the runner observes", nullptr, ""},
    {"attack_forge_call_timeout", RowStatus::crashed, EndCause::protocol_breach,
     "protocol violation: claimed the end cause 'call_timeout', which only the runner observes", nullptr, ""},
    {"attack_forge_signal", RowStatus::crashed, EndCause::protocol_breach,
     "protocol violation: claimed the end cause 'signal', which only the runner observes", nullptr, ""},
    {"attack_forge_sandbox_refusal", RowStatus::crashed, EndCause::protocol_breach,
     "protocol violation: claimed the end cause 'sandbox_refusal', which only the runner observes", nullptr, ""},
    // How a worker ends, as the parent's reaper and clocks saw it.
    {"fixture_crash_in_run", RowStatus::crashed, EndCause::signal, "worker killed by SIGSEGV", "SIGSEGV", ""},
    {"fixture_abort_in_run", RowStatus::crashed, EndCause::signal, "worker killed by SIGABRT", "SIGABRT", ""},
    {"fixture_exit_in_run", RowStatus::crashed, EndCause::exited, "worker exited with code 0", nullptr, ""},
    {"fixture_throw_in_run", RowStatus::failed, EndCause::kernel_failed, "fixture: run_gemm throws", nullptr, ""},
    {"fixture_hang_in_run", RowStatus::timeout, EndCause::call_timeout, "per-call time limit of 1", nullptr,
     "--call-timeout 1"},
    // The honest controls: the same harness, options and users, every row ok.
    {"fixture_good", RowStatus::ok, EndCause::none, "", nullptr, ""},
    {"fixture_honest_gemm", RowStatus::ok, EndCause::none, "", nullptr, ""},
};

// Two shapes: odd edges, and one with several rows of tiles; a crashed worker's next row starts a new one.
const std::vector<std::string> kShapes = {"33x20x17", "64x48x40"};

class SweepDefences : public ::testing::TestWithParam<test::DefenceCase> {};

TEST_P(SweepDefences, EveryRowEndsAsItsDefenceSays) {
    const bool nobody = std::get<2>(GetParam()).nobody;
    if (nobody)
        if (auto why = test::why_cannot_run_as_nobody(KREG_RUNNER)) GTEST_SKIP() << *why;
    test::sweep_defence_case("sweep-defence-", GetParam(), kShapes);
}

INSTANTIATE_TEST_SUITE_P(Cpu, SweepDefences, test::every_mode_and_user(kFixtures), test::defence_case_name);

// ---- Grading (checked outside the worker) as nobody -----------------------------------------------------

// Each fixture's status in a `runner grade` (grade/outcome.cpp), for the ones graded below; the sweep's rows of
// the same fixtures as nobody are the tests above. The hung kernel is left out: the call limit is the same
// parent's clock, and its three-second waits per correctness run would be most of this test's time.
const std::map<std::string, std::string> kGradeStatus = {
    {"state_nan_as_zero", "wrong_result"},
    {"state_poison_word_as_zero", "wrong_result"},
    {"state_large_or_nan_as_zero", "wrong_result"},
    {"fixture_skips_every_second_call", "wrong_result"},
    {"state_write_1mib_past_c", "crashed"},
    {"state_write_60mib_past_c", "crashed"},
    {"fixture_writes_far_past_c", "crashed"},
    {"attack_write_far_past_c", "crashed"},
    {"fixture_reads_past_b", "wrong_result"},
    {"state_clobbers_b", "failed"},
    {"attack_kreg_phrases", "failed"},
    {"attack_forge_memory_cap", "protocol_violation"},
    {"attack_forge_call_timeout", "protocol_violation"},
    {"attack_forge_signal", "protocol_violation"},
    {"attack_forge_sandbox_refusal", "protocol_violation"},
    {"fixture_crash_in_run", "crashed"},
    {"fixture_abort_in_run", "aborted"},
    {"fixture_exit_in_run", "exited"},
    {"fixture_throw_in_run", "failed"},
    {"fixture_good", "graded"},
    {"fixture_honest_gemm", "graded"},
};

// The third mode as an ordinary user: the same fixtures graded in one run, confined (namespaces, seccomp,
// Landlock, a memory cap without a delegated cgroup) and checked outside the worker. As nobody where the tests
// run as root, else as the user running them, who is one. Every fixture fails with its status and loses
// correctness points; the honest ones keep every one.
TEST(SweepDefencesGrade, TheSameFixturesGradedAsAnUnprivilegedUser) {
    const RunAs who{::geteuid() == 0};
    if (who.nobody)
        if (auto why = test::why_cannot_run_as_nobody(KREG_RUNNER)) GTEST_SKIP() << *why;
    const fs::path dir = test::fresh_dir("sweep-defences-grade-unprivileged");
    fs::create_directories(dir / "subs");
    fs::create_directories(dir / "home");
    for (const auto& [fixture, status] : kGradeStatus)
        fs::copy_file(test::fixture(fixture), dir / "subs" / (fixture + ".so"));
    // A student's Windows build: the audit, on its bytes (common/library_format), says what it is; the student
    // has a row instead of none (grade/submission.cpp took only .so files).
    std::ofstream(dir / "subs" / "windows_build.dll", std::ios::binary) << test::windows_dll_bytes();
    if (who.nobody) test::give_to_nobody(dir);
    const std::string command = who.prefix(dir / "home") + KREG_RUNNER + " grade --rubric " + KREG_TEST_DATA_DIR +
                                "/grading/attack-rubric.json --submissions subs --out out";
    const auto run = test::run_command(command, dir, dir / "console");
    ASSERT_EQ(run.exit_code, 0) << command << "\n" << run.err;
    EXPECT_EQ(test::owner_uid(dir / "out" / "gradebook.csv"), who.nobody ? long(test::kNobodyUid) : long(::geteuid()))
        << "not graded as " << who.name();
    std::map<std::string, StudentResult> graded;
    for (const auto& r : Gradebook(dir / "out").all()) graded[r.student] = r;
    ASSERT_EQ(graded.size(), kGradeStatus.size() + 1) << run.err;
    const StudentResult& dll = graded["windows_build"];
    EXPECT_EQ(dll.status, "rejected_audit") << dll.summary;
    EXPECT_EQ(dll.score, 0) << dll.summary;
    EXPECT_NE(dll.summary.find("a Windows library (PE format"), std::string::npos) << dll.summary;
    EXPECT_NE(dll.summary.find("as a .so"), std::string::npos) << dll.summary;
    for (const auto& [fixture, status] : kGradeStatus) {
        const StudentResult& r = graded[fixture];
        EXPECT_EQ(r.status, status) << fixture << ": " << r.summary;
        if (status == "graded") {
            double correctness = 0;
            for (const auto& c : r.checks)
                if (c.kind == "correctness") correctness += c.points;
            EXPECT_EQ(correctness, 80) << fixture << ": " << r.summary;  // the attack rubric's correctness points
        } else {  // some fail only on some shapes or calls: less than every correctness point, not always 0
            EXPECT_LT(r.score, 80) << fixture << ": " << r.summary;
        }
    }
}

}  // namespace
}  // namespace kreg
