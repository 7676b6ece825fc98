// Resource limits for a worker: no core files, a CPU-time budget, a largest file, a most open files and a most
// private writable memory (RLIMIT_DATA, the fallback of the per-worker cgroup in memory_limit.hpp).
// Not RLIMIT_AS: the CUDA driver reserves address space far beyond any sensible cap.
#pragma once

#include "sandbox/sandbox.hpp"

namespace kreg {

// Lowers RLIMIT_CORE, RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE and, when policy.memory_bytes > 0, RLIMIT_DATA
// (soft and hard) and records each one ("RLIMIT_DATA: 4294967296 bytes").
// A limit already lower than the policy's stays, and the report says so.
void apply_resource_limits(const SandboxPolicy& policy, SandboxReport& report);

}  // namespace kreg
