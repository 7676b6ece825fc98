// A student's unconfined self-check: `runner grade --rubric RUBRIC --submission my_gemm.dll` where this build has no
// confinement of untrusted code (Windows: sandbox/unconfined.cpp). The student's own plugin runs in an ordinary
// worker process, every call is checked inside that worker instead of outside it, and the result says so: it is a
// check of one's own work against a published rubric, never a grade of record (docs/WINDOWS.md). Grading others'
// submissions stays refused there (run/grade_run.cpp).
#pragma once

#include "grade/gradebook.hpp"

#include <string>

namespace kreg {

// What a self-check is, what of the grader still held, and each defence of the Linux grader (docs/GRADING.md) that
// did not, as the result records them (StudentResult::unconfined_self_check) and the console prints them.
UnconfinedSelfCheck unconfined_self_check();

// The audit check of a self-check's Windows library (PE), which the static audit cannot read (it reads ELF): not run,
// and the check says why.
CheckResult audit_skipped_for_pe(const std::string& plugin);

// The name of each "<name>: <detail>" entry, joined by ", ": "namespaces, seccomp, Landlock, ...".
std::string entry_names(const std::vector<std::string>& entries);

}  // namespace kreg
