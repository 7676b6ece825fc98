// A per-call time limit inside a worker: armed around one synchronous kernel call, it ends the whole
// worker process (exit code kCallTimeoutExitCode, after one line on stderr) if the call outlives it.
// The parent reads that exit code as a `timeout` row. The job-wide limit the parent enforces stays as
// the backstop, and covers what a call leaves running (an asynchronous CUDA launch that never ends).
#pragma once

#include <string>

namespace kreg {

inline constexpr int kCallTimeoutExitCode = 124;

// Starts the watchdog's thread if it is not running yet. Call it before a job that arms the watchdog,
// so the thread exists before the job counts the process's threads: strict runs read a thread that
// appears during a call as work the kernel left running.
void start_call_watchdog();
void arm_call_watchdog(double seconds, const std::string& what);
void disarm_call_watchdog();

}  // namespace kreg
