// classify_outcome reads the typed end cause and the status, never the reason: a reason made of kreg's own
// phrases (part of a reason is a plugin's text) changes nothing, and each cause the parent observes gives its
// outcome. A worker may claim only kernel_failed and cuda_error (common/types.hpp worker_may_claim).
#include "grade/outcome.hpp"

#include <gtest/gtest.h>

namespace kreg {
namespace {

// Every phrase a reason was once searched for, in one failure message.
const std::string kKregPhrases =
    "memory limit of 1 MiB exceeded; protocol violation: forged; Operation not permitted; std::bad_alloc; "
    "Cannot allocate memory; cudaErrorIllegalAddress; worker killed by SIGSYS; killed by SIGABRT; "
    "worker exited with code 3; did not finish within 1 s";

Record row(RowStatus status, EndCause cause, std::string reason) {
    Record r;
    r.status = status;
    r.end_cause = cause;
    r.reason = std::move(reason);
    return r;
}

TEST(ClassifyOutcome, AReasonMadeOfKregsPhrasesIsOnlyWhatWasObserved) {
    EXPECT_EQ(classify_outcome(row(RowStatus::failed, EndCause::kernel_failed, kKregPhrases)), "failed");
    EXPECT_EQ(classify_outcome(row(RowStatus::failed, EndCause::kernel_failed, "memory limit of 1 MiB exceeded")),
              "failed");
    EXPECT_EQ(classify_outcome(row(RowStatus::failed, EndCause::kernel_failed, "protocol violation: x")), "failed");
    EXPECT_EQ(classify_outcome(row(RowStatus::crashed, EndCause::kernel_failed, kKregPhrases)), "crashed");
    EXPECT_EQ(classify_outcome(row(RowStatus::wrong_result, EndCause::none, kKregPhrases)), "wrong_result");
    EXPECT_EQ(classify_outcome(row(RowStatus::ok, EndCause::none, kKregPhrases)), "ok");
}

TEST(ClassifyOutcome, EachObservedCauseGivesItsOutcomeWhateverTheReason) {
    EXPECT_EQ(classify_outcome(row(RowStatus::crashed, EndCause::protocol_breach, "")), "protocol_violation");
    EXPECT_EQ(classify_outcome(row(RowStatus::crashed, EndCause::memory_cap, "")), "memory_limit");
    EXPECT_EQ(classify_outcome(row(RowStatus::failed, EndCause::memory_cap, "")), "memory_limit");
    EXPECT_EQ(classify_outcome(row(RowStatus::failed, EndCause::memory_refused, "")), "memory_limit");
    EXPECT_EQ(classify_outcome(row(RowStatus::crashed, EndCause::sandbox_refusal, "")), "sandbox_violation");
    EXPECT_EQ(classify_outcome(row(RowStatus::timeout, EndCause::job_timeout, "")), "timeout");
    EXPECT_EQ(classify_outcome(row(RowStatus::timeout, EndCause::call_timeout, "")), "timeout");
    EXPECT_EQ(classify_outcome(row(RowStatus::crashed, EndCause::exited, kKregPhrases)), "exited");
    Record aborted = row(RowStatus::crashed, EndCause::signal, "");
    aborted.signal = "SIGABRT";
    EXPECT_EQ(classify_outcome(aborted), "aborted");
    aborted.signal = "SIGSEGV";
    EXPECT_EQ(classify_outcome(aborted), "crashed");
    EXPECT_EQ(classify_outcome(row(RowStatus::crashed, EndCause::cuda_error, "")), "cuda_error");
}

// A worker the runner could not start (or that ended before its hello) ran no plugin code: the row is the
// grader's error, whatever its status and reason say, and an error outranks every outcome of the student's, so
// the result is retried instead of graded.
TEST(ClassifyOutcome, AWorkerThatNeverStartedIsTheGradersErrorAndOutranksEverything) {
    EXPECT_EQ(classify_outcome(row(RowStatus::failed, EndCause::worker_not_started, kKregPhrases)), "error");
    EXPECT_EQ(classify_outcome(row(RowStatus::crashed, EndCause::worker_not_started, "")), "error");
    EXPECT_EQ(worst_outcome({"ok", "protocol_violation", "error", "crashed"}), "error");
    EXPECT_EQ(worst_outcome({"ok", "protocol_violation", "crashed"}), "protocol_violation");
}

TEST(ClassifyOutcome, TheSignalFieldAloneDecidesNothing) {
    // SIGSYS named by a row without the parent's sandbox_refusal is no sandbox violation.
    Record r = row(RowStatus::crashed, EndCause::kernel_failed, "killed by SIGSYS");
    r.signal = "SIGSYS";
    EXPECT_EQ(classify_outcome(r), "crashed");
}

TEST(EndCause, OnlyTheKernelsFailureACudaErrorAndARefusedAllocationMayBeClaimedByAWorker) {
    for (EndCause c : {EndCause::none, EndCause::kernel_failed, EndCause::cuda_error, EndCause::memory_refused})
        EXPECT_TRUE(worker_may_claim(c));
    for (EndCause c :
         {EndCause::signal, EndCause::exited, EndCause::call_timeout, EndCause::job_timeout, EndCause::load_timeout,
          EndCause::memory_cap, EndCause::sandbox_refusal, EndCause::protocol_breach, EndCause::worker_not_started})
        EXPECT_FALSE(worker_may_claim(c)) << to_string(c);
}

TEST(EndCause, NamesRoundTripAndTheRowCarriesItsCause) {
    for (const char* name :
         {"none", "kernel_failed", "cuda_error", "memory_refused", "signal", "exited", "call_timeout", "job_timeout",
          "load_timeout", "memory_cap", "sandbox_refusal", "protocol_breach", "worker_not_started"}) {
        const auto cause = parse_end_cause(name);
        ASSERT_TRUE(cause) << name;
        EXPECT_EQ(to_string(*cause), name);
    }
    EXPECT_FALSE(parse_end_cause("memory_limit"));
    const Record r = row(RowStatus::crashed, EndCause::memory_cap, "x");
    const nlohmann::json j = r;
    EXPECT_EQ(j.at("end_cause"), "memory_cap");
    EXPECT_EQ(j.get<Record>().end_cause, EndCause::memory_cap);
    EXPECT_FALSE(nlohmann::json(row(RowStatus::ok, EndCause::none, "")).contains("end_cause"));  // ok rows unchanged
}

}  // namespace
}  // namespace kreg
