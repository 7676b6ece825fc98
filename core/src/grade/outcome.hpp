// One word for how a graded row ended, finer than RowStatus: what a grader wants to read in a
// gradebook ("aborted", "cuda_error", "sandbox_violation") and what the evidence explains.
#pragma once

#include "common/job.hpp"

#include <string>
#include <vector>

namespace kreg {

// ok, wrong_result, skipped, failed, timeout, crashed, aborted (SIGABRT: abort, uncaught exception),
// exited (the plugin ended the worker with exit()), cuda_error (sticky CUDA error), sandbox_violation
// (SIGSYS: seccomp killed the worker), protocol_violation (the worker wrote out of protocol or its claims
// contradicted what the grader saw), memory_limit (the worker's cgroup counted the cap reached, or its peak
// RSS reached it). Derived from r.end_cause and r.status only, never from r.reason (docs/GRADING.md, "Outcomes").
std::string classify_outcome(const Record& r);

// The most serious of several outcomes (for a student's status), "ok" for none.
std::string worst_outcome(const std::vector<std::string>& outcomes);

}  // namespace kreg
