// Resource limits for a worker: no core files, a CPU-time budget, a largest file and a most open files.
// Not RLIMIT_AS: the CUDA driver reserves address space far beyond any sensible cap.
#pragma once

#include "sandbox/sandbox.hpp"

namespace kreg {

// Lowers RLIMIT_CORE, RLIMIT_CPU, RLIMIT_FSIZE and RLIMIT_NOFILE (soft and hard) and records each one.
// A limit already lower than the policy's stays, and the report says so.
void apply_resource_limits(const SandboxPolicy& policy, SandboxReport& report);

}  // namespace kreg
