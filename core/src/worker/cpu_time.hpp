// A worker's CPU time, as the kernel counts it and another process reads it. The grader starts a CPU
// worker on one CPU and the worker may not widen its affinity (SandboxPolicy::fixed_affinity): a process
// whose threads share one CPU cannot use more CPU time than the time that passes, so the CPU time the
// worker used inside a call's window is a lower bound on the call's elapsed time that no code in the worker
// can lower (it is the scheduler's account, not the worker's), and, unlike the window, it does not grow
// while the worker waits for the CPU.
#pragma once

#include "platform/process_id.hpp"

#include <memory>
#include <optional>
#include <string>

namespace kreg {

// The CPU time (all threads) of another process, on its kernel clock (clock_getcpuclockid). The kernel brings it
// up to date only when that process leaves its CPU (a tick or a switch): read from another CPU while the process
// runs, it lags by up to a tick (4 ms on the 2-core VM). Read by a thread on the process's own, only CPU, it is
// exact: that thread runs only while none of the process's threads does.
class ProcessCpuClock {
public:
    // nullopt, with why_not, when the clock of pid cannot be read.
    static std::optional<ProcessCpuClock> of(platform::ProcessId pid, std::string& why_not);
    // Milliseconds of CPU time so far; nullopt once the process is gone.
    std::optional<double> read_ms() const;

private:
    // The system's id of the clock: a clockid_t on Linux, which is an int there (worker/cpu_time.cpp checks); an int
    // here, so that the header names no POSIX type (MSVC has none).
    explicit ProcessCpuClock(int clock) : clock_(clock) {}
    int clock_;
};

// While it lives, the calling thread runs on one CPU only (so that a process started meanwhile inherits that
// affinity, or so that it reads a worker's CPU clock on the worker's CPU); the destructor gives the thread its
// former affinity back. cpu < 0: does nothing.
class OneCpuWhileStarting {
public:
    explicit OneCpuWhileStarting(int cpu);
    ~OneCpuWhileStarting();
    OneCpuWhileStarting(const OneCpuWhileStarting&) = delete;
    OneCpuWhileStarting& operator=(const OneCpuWhileStarting&) = delete;
    // "" when the thread was narrowed to the CPU, else why not.
    const std::string& error() const { return error_; }

private:
    bool narrowed_ = false;
    std::string error_;
    struct SavedAffinity;  // the thread's former CPU set (per system)
    std::unique_ptr<SavedAffinity> saved_;
};

// The CPU a grading shard times its CPU rows on: one of the CPUs this process may use, counted from the last
// (CPU 0 takes most interrupts), the shard's index-th (1-based) so that --jobs shards differ. -1 if none.
int timing_cpu_for_shard(int shard_index);

}  // namespace kreg
