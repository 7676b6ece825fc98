#include "grade/outcome.hpp"

#include "sweep/executor.hpp"

#include <algorithm>
#include <array>

namespace kreg {

std::string classify_outcome(const Record& r) {
    // The parent's own findings first: they are what happened, whatever the worker's status claims.
    if (r.reason.rfind(kProtocolViolationPrefix, 0) == 0) return "protocol_violation";
    if (r.reason.rfind("memory limit of ", 0) == 0) return "memory_limit";
    switch (r.status) {
        case RowStatus::ok: return "ok";
        case RowStatus::wrong_result: return "wrong_result";
        case RowStatus::skipped: return "skipped";
        case RowStatus::timeout: return "timeout";
        case RowStatus::failed:
            return r.reason.find("Operation not permitted") != std::string::npos ? "sandbox_violation" : "failed";
        case RowStatus::crashed:
            if (r.signal == "SIGSYS") return "sandbox_violation";
            if (r.signal == "SIGABRT") return "aborted";
            if (r.reason.find("cudaError") != std::string::npos) return "cuda_error";
            if (r.exit_code) return "exited";
            return "crashed";
    }
    return "failed";
}

std::string worst_outcome(const std::vector<std::string>& outcomes) {
    // Most serious first: what a grader must look at before anything else.
    static const std::array<const char*, 12> order{"protocol_violation", "sandbox_violation", "memory_limit", "cuda_error",
                                                   "crashed", "aborted", "exited", "timeout", "failed", "wrong_result",
                                                   "skipped", "ok"};
    for (const char* o : order)
        if (std::find(outcomes.begin(), outcomes.end(), o) != outcomes.end()) return o;
    return "ok";
}

}  // namespace kreg
