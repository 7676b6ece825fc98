#include "worker/cpu_time.hpp"

#include <sched.h>
#include <sys/types.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>
#include <vector>

namespace kreg {

static_assert(std::is_same_v<clockid_t, int>, "ProcessCpuClock keeps a clockid_t as an int");

std::optional<ProcessCpuClock> ProcessCpuClock::of(platform::ProcessId pid, std::string& why_not) {
    clockid_t clock;
    if (const int e = ::clock_getcpuclockid(pid_t(pid), &clock); e != 0) {
        why_not = "clock_getcpuclockid(" + std::to_string(pid) + "): " + std::strerror(e);
        return std::nullopt;
    }
    ProcessCpuClock c(clock);
    if (!c.read_ms()) {
        why_not = "clock_gettime(the CPU clock of process " + std::to_string(pid) + "): " + std::strerror(errno);
        return std::nullopt;
    }
    return c;
}

std::optional<double> ProcessCpuClock::read_ms() const {
    timespec t{};
    if (::clock_gettime(clock_, &t) != 0) return std::nullopt;
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

struct OneCpuWhileStarting::SavedAffinity {
    cpu_set_t set{};
};

OneCpuWhileStarting::OneCpuWhileStarting(int cpu) {
    if (cpu < 0) return;
    saved_ = std::make_unique<SavedAffinity>();
    if (::sched_getaffinity(0, sizeof saved_->set, &saved_->set) != 0) {
        error_ = std::string("sched_getaffinity: ") + std::strerror(errno);
        return;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (::sched_setaffinity(0, sizeof one, &one) != 0) {
        error_ = "sched_setaffinity(CPU " + std::to_string(cpu) + "): " + std::strerror(errno);
        return;
    }
    narrowed_ = true;
}

OneCpuWhileStarting::~OneCpuWhileStarting() {
    if (narrowed_) ::sched_setaffinity(0, sizeof saved_->set, &saved_->set);
}

int timing_cpu_for_shard(int shard_index) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    std::vector<int> cpus;
    for (int cpu = CPU_SETSIZE - 1; cpu >= 0; --cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    if (cpus.empty()) return -1;
    return cpus[size_t(std::max(0, shard_index - 1)) % cpus.size()];
}

}  // namespace kreg
