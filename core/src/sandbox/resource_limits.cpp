#include "sandbox/resource_limits.hpp"

#include "sandbox/confined_spawn.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <string>

namespace kreg {
namespace {

// Seconds of grace between SIGXCPU (soft limit) and SIGKILL (hard limit), for a plugin that ignores SIGXCPU.
constexpr rlim_t kCpuGraceSeconds = 5;

std::string text(rlim_t value) { return value == RLIM_INFINITY ? "unlimited" : std::to_string(value); }

// Sets soft and hard, never above the current hard limit (raising it would need CAP_SYS_RESOURCE).
void lower_limit(int resource, const char* name, rlim_t soft, rlim_t hard, const std::string& unit,
                 SandboxReport& report) {
    rlimit current{};
    if (::getrlimit(resource, &current) != 0) {
        report.unavailable.push_back(std::string(name) + ": getrlimit: " + std::strerror(errno));
        return;
    }
    rlimit wanted{soft, hard};
    std::string note;
    if (current.rlim_max != RLIM_INFINITY && current.rlim_max < wanted.rlim_max) {
        wanted.rlim_max = current.rlim_max;
        note = " (the hard limit was already lower than the policy's " + text(hard) + ")";
    }
    if (wanted.rlim_cur > wanted.rlim_max) wanted.rlim_cur = wanted.rlim_max;
    if (::setrlimit(resource, &wanted) != 0) {
        report.unavailable.push_back(std::string(name) + ": setrlimit: " + std::strerror(errno));
        return;
    }
    std::string entry = std::string(name) + ": " + text(wanted.rlim_cur) + unit;
    if (wanted.rlim_max != wanted.rlim_cur) entry += " soft, " + text(wanted.rlim_max) + unit + " hard";
    report.applied.push_back(entry + note);
}

// RLIMIT_CPU counts the CPU time the process has used since it started, so the budget starts from now.
double cpu_seconds_used() {
    timespec ts{};
    if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

rlim_t clamp_to_rlim(double value) {
    if (!(value < double(RLIM_INFINITY - kCpuGraceSeconds))) return RLIM_INFINITY - kCpuGraceSeconds - 1;
    return rlim_t(std::ceil(value));
}

}  // namespace

void apply_resource_limits(const SandboxPolicy& policy, SandboxReport& report) {
    lower_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0, "", report);
    if (policy.cpu_seconds > 0 && std::isfinite(policy.cpu_seconds)) {
        const rlim_t soft = clamp_to_rlim(cpu_seconds_used() + policy.cpu_seconds);
        lower_limit(RLIMIT_CPU, "RLIMIT_CPU", soft, soft + kCpuGraceSeconds, " s", report);
    } else {
        report.unavailable.push_back("RLIMIT_CPU: not set (cpu_seconds is not a positive finite number)");
    }
    lower_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", rlim_t(policy.max_file_bytes), rlim_t(policy.max_file_bytes), " bytes",
                report);
    lower_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", rlim_t(policy.max_open_files), rlim_t(policy.max_open_files), "",
                report);
    // Also where the runner made a cgroup with memory.max (memory_limit.hpp): the cgroup counts the page cache
    // and every process, RLIMIT_DATA this process's private writable mappings (heap, anonymous mmap), never its
    // PROT_NONE reservations. Measured on the H200 machine: a CUDA context adds ~40 MB of VmData, and
    // cudaMallocHost's pinned buffers (mapped from the driver's device file) do not count at all. Equal to
    // memory_bytes, so it never cuts in below the cgroup's limit for memory the process really holds.
    // A fork bomb at load time (fork is denied only after loading): counted per uid, so only where this is
    // the sandbox's own identity (as root, sandbox/confined_spawn.hpp); an ordinary user's other
    // processes count against the same limit.
    if (policy.max_processes > 0 && ::geteuid() == kSandboxUid)
        lower_limit(RLIMIT_NPROC, "RLIMIT_NPROC", rlim_t(policy.max_processes), rlim_t(policy.max_processes), "",
                    report);
    if (policy.memory_bytes > 0 && policy.memory_in_cgroup) {
        report.unavailable.push_back("RLIMIT_DATA: not set (the runner's cgroup caps memory: memory.max)");
    } else if (policy.memory_bytes > 0) {
        const rlim_t data =
            policy.memory_bytes >= uint64_t(RLIM_INFINITY) ? RLIM_INFINITY - 1 : rlim_t(policy.memory_bytes);
        lower_limit(RLIMIT_DATA, "RLIMIT_DATA", data, data, " bytes", report);
    } else {
        report.unavailable.push_back("RLIMIT_DATA: not set (memory_bytes is 0: no memory limit)");
    }
}

}  // namespace kreg
