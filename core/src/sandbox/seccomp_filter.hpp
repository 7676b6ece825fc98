// The two seccomp filters, written as classic BPF with the kernel's own headers (no libseccomp: its
// header is missing on the GPU machine). Only x86_64 has filters; elsewhere installing reports why not.
#pragma once

#include <string>

namespace kreg {

enum class FilterStage {
    before_load,  // stage 1: ptrace, mounts, namespaces, modules, bpf, perf, keys, io_uring, connect, sockets other
                  // than AF_UNIX streams, signals and signal ownership (fcntl/ioctl) towards other processes...
    after_load,   // stage 2: fork, vfork, execve, execveat, clone without CLONE_THREAD
};

struct FilterOutcome {
    bool installed = false;
    std::string detail;  // what was installed, or why it was not
};

// Installs the stage's filter on every thread of the process (TSYNC; falls back to the calling thread
// only, and says so, on kernels without the seccomp() system call). Needs no_new_privs or CAP_SYS_ADMIN.
// fixed_affinity (stage 1): sched_setaffinity is refused for every thread, its own included.
FilterOutcome install_seccomp_filter(FilterStage stage, bool kill_on_violation, bool fixed_affinity = false);

}  // namespace kreg
