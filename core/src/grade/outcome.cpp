#include "grade/outcome.hpp"

#include <algorithm>
#include <array>

namespace kreg {

std::string classify_outcome(const Record& r) {
    // From the typed cause set where the end was seen, never from the reason: part of a reason is the
    // plugin's own text. The parent's observations come first: they are what happened, whatever the status
    // a worker claimed (claim_to_row, sweep/result_claim.hpp, lets a worker claim only kernel_failed and cuda_error).
    switch (r.end_cause) {
        case EndCause::protocol_breach:
            return "protocol_violation";
        case EndCause::memory_cap:
        case EndCause::memory_refused:  // no better than failed; the parent takes it only under RLIMIT_DATA alone
            return "memory_limit";
        case EndCause::sandbox_refusal:
            return "sandbox_violation";
        case EndCause::call_timeout:
        case EndCause::job_timeout:
        case EndCause::load_timeout:
            return "timeout";
        case EndCause::signal:
            return r.signal == "SIGABRT" ? "aborted" : "crashed";
        case EndCause::exited:
            return "exited";
        case EndCause::cuda_error:
            return r.status == RowStatus::crashed ? "cuda_error" : "failed";
        case EndCause::worker_not_started:
            return "error";  // the runner's failure before any plugin code ran, never the plugin's
        case EndCause::kernel_failed:
        case EndCause::none:
            break;
    }
    switch (r.status) {
        case RowStatus::ok:
            return "ok";
        case RowStatus::wrong_result:
            return "wrong_result";
        case RowStatus::skipped:
            return "skipped";
        case RowStatus::timeout:
            return "timeout";
        case RowStatus::failed:
            return "failed";
        case RowStatus::crashed:
            return "crashed";
    }
    return "failed";
}

std::string worst_outcome(const std::vector<std::string>& outcomes) {
    // Most serious first: what a grader must look at before anything else.
    // "error" first: the grading itself failed (a worker it could not start, a trusted reference it could not
    // measure), so nothing else in the result can be taken as the student's.
    static const std::array<const char*, 13> order{"error",
                                                   "protocol_violation",
                                                   "sandbox_violation",
                                                   "memory_limit",
                                                   "cuda_error",
                                                   "crashed",
                                                   "aborted",
                                                   "exited",
                                                   "timeout",
                                                   "failed",
                                                   "wrong_result",
                                                   "skipped",
                                                   "ok"};
    for (const char* o : order)
        if (std::find(outcomes.begin(), outcomes.end(), o) != outcomes.end()) return o;
    return "ok";
}

}  // namespace kreg
