// The hardening a worker applies to itself around loading an untrusted plugin. Two calls, both
// irreversible for the calling process, made by the worker and never by the runner:
//
//   harden_before_load   right after the worker starts, before dlopen of the plugin: a private network
//                        namespace, rlimits, no_new_privs, not dumpable, Landlock (sandbox/landlock.hpp:
//                        read the system's folders and readable_paths, write only scratch_dir; no
//                        signals or abstract sockets out of the domain), seccomp stage 1 (no ptrace,
//                        mounts, namespaces, kernel modules, bpf, perf, keyrings, io_uring, no socket
//                        other than an AF_UNIX stream, no connect, no raising of rlimits, no signal,
//                        signal ownership (fcntl/ioctl), pidfd or scheduling aimed at another process).
//                        Plugin constructors run under this stage alone, so it must hold by itself.
//   harden_after_load    after the plugin is loaded and the CUDA context exists, before any plugin code
//                        runs a job: seccomp stage 2, a stacked filter that forbids fork, vfork, execve,
//                        execveat and clone without CLONE_THREAD. Threads keep working.
//
// Every step that could not be applied is listed in SandboxReport::unavailable with its reason; none
// is fatal, except that harden_before_load throws SandboxError when no_new_privs fails while seccomp is
// requested (a filter without it needs CAP_SYS_ADMIN and would be the weaker half of the design).
//
// A denied call fails with EPERM by default, so the plugin's own error message ("socket: Operation not
// permitted") reaches the report; kreg does not count the attempts. With kill_on_violation the worker
// dies of SIGSYS instead, which the runner reports as "killed by SIGSYS": that is the record.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

struct SandboxPolicy {
    bool enabled = true;                 // false: apply nothing, report that
    double cpu_seconds = 600;            // RLIMIT_CPU from now, for the whole worker, not per job
    uint64_t max_file_bytes = 64 << 20;  // RLIMIT_FSIZE: larger writes end in SIGXFSZ
    uint64_t max_open_files = 256;       // RLIMIT_NOFILE: CUDA itself holds a few dozen
    bool network_namespace = true;       // a private network namespace with only a (down) lo
    bool seccomp = true;                 // both filter stages
    bool kill_on_violation = false;      // SIGSYS instead of EPERM for a forbidden call

    // The file system (Landlock): everything the process may read is the system's folders (sandbox/
    // landlock.hpp lists them) plus readable_paths; the only place it may write is scratch_dir, a
    // private, empty folder the parent created for this one process and deletes after it.
    bool landlock = true;
    std::string scratch_dir;                  // "" : no writable folder at all
    std::vector<std::string> readable_paths;  // files or folders, read-only (a plugin, an SDK prefix)
    // A confined worker's scratch folder is a private tmpfs of this size (its pages count as the worker's
    // memory), so no submission can fill a disk. 0: the folder on disk as it is.
    uint64_t scratch_bytes = uint64_t(1) << 30;

    // Memory: a cgroup v2 memory.max (and pids.max) where one can be made, else RLIMIT_DATA
    // (sandbox/memory_limit.hpp). 0: no limit.
    uint64_t memory_bytes = uint64_t(4) << 30;
    // Set by the runner when it made the worker's cgroup with memory.max = memory_bytes: then the cgroup alone
    // caps memory and RLIMIT_DATA is not set, so a cap reached is one the parent sees in memory.events however
    // the memory was asked for (RLIMIT_DATA refuses a large request before the cgroup counts anything, and a
    // refusal leaves the parent nothing to observe but the worker's word).
    bool memory_in_cgroup = false;
    // Processes and threads together (pids.max; RLIMIT_NPROC where the process runs as the sandbox's own
    // uid, which nothing else uses). 0: no limit.
    uint64_t max_processes = 512;
    // Keep the CPU affinity the worker was started with (the grader starts CPU workers on one CPU): stage 1
    // refuses sched_setaffinity for every thread, its own included, so the process can never run on two
    // CPUs at once, and its CPU time, which the grader reads on the kernel's clock, bounds its elapsed time.
    bool fixed_affinity = false;
};

struct SandboxReport {
    // Each entry starts with the step's name ("seccomp stage 1", "RLIMIT_CPU", "network namespace",
    // "no_new_privs", "dumpable", "seccomp stage 2"), then ": " and the detail or the reason.
    std::vector<std::string> applied;
    std::vector<std::string> unavailable;  // "network namespace: unshare(CLONE_NEWNET): Operation not permitted"

    // True when a step of that name (the text before ": ") was applied.
    bool has_applied(std::string_view step) const;
    nlohmann::json to_json() const;  // {"applied":[...],"unavailable":[...]}
    static SandboxReport from_json(const nlohmann::json& j);
};

class SandboxError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Call once, in the worker, single-threaded if possible, before the plugin is opened.
SandboxReport harden_before_load(const SandboxPolicy& policy);

// Call once, in the worker, after the plugin is loaded and the CUDA context is created. Adds its steps
// to report. Applies to every thread of the process (SECCOMP_FILTER_FLAG_TSYNC).
void harden_after_load(const SandboxPolicy& policy, SandboxReport& report);

}  // namespace kreg
