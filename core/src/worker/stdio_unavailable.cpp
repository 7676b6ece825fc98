// What the worker build without Linux does without (Windows): another process's CPU clock and a thread's CPU
// affinity (a grader's timing defences, worker/cpu_time.hpp), and the allocator watch (the grader's RLIMIT_DATA
// accounting, worker/allocation_watch.hpp). Each says so where a caller asks.
#include "worker/allocation_watch.hpp"
#include "worker/cpu_time.hpp"

namespace kreg {

struct OneCpuWhileStarting::SavedAffinity {};

std::optional<ProcessCpuClock> ProcessCpuClock::of(platform::ProcessId, std::string& why_not) {
    why_not = "another process's CPU clock is read on Linux only";
    return std::nullopt;
}

std::optional<double> ProcessCpuClock::read_ms() const { return std::nullopt; }

OneCpuWhileStarting::OneCpuWhileStarting(int cpu) {
    if (cpu >= 0) error_ = "a worker is started on one CPU on Linux only";
}

OneCpuWhileStarting::~OneCpuWhileStarting() = default;

int timing_cpu_for_shard(int) { return -1; }

AllocationRefusals allocation_refusals() { return {}; }

void reset_allocation_refusals() {}

}  // namespace kreg
