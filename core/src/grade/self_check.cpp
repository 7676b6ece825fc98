#include "grade/self_check.hpp"

namespace kreg {

UnconfinedSelfCheck unconfined_self_check() {
    UnconfinedSelfCheck u;
    u.summary =
        "this runner cannot confine untrusted code (Linux's namespaces, seccomp, Landlock and cgroups are not in this "
        "build), so the submission ran unconfined, in an ordinary worker process with your rights, and the defences "
        "listed as not applied did not hold it: a check of your own plugin against a published rubric, not a grade "
        "(grades come from the Linux grader)";
    u.applied = {
        "a worker process of its own: a crash or a hang ends only that process (in a Job Object on Windows: a "
        "timeout kills it with everything it started), and the run goes on",
        "the rubric's time limits: each call (limits.call_s, ended inside the worker), each run, the submission's "
        "total (limits.total_s) and its load (limits.load_s)",
        "strict runs checked inside the worker: every call with fresh inputs, C poisoned before it (a NaN or finite "
        "fill drawn for the call) and placed between guard pages, then checked in full against the fp64 reference "
        "(an unwritten element or a NaN never passes), A and B compared with what was written",
        "the worker protocol: every line a JSON object carrying the request's id, read as a claim; a reply out of "
        "protocol ends the worker",
        "performance tiers in paired rounds against the trusted reference kernels, and the roofline floor",
    };
    u.not_applied = {
        "namespaces: the Linux grader runs a submission in its own PID, mount, network, IPC and UTS namespaces under "
        "another identity (uid 61000 without capabilities, or a user namespace), where it can reach no other "
        "process; here it runs as you, beside your other processes and on your network",
        "seccomp: the Linux grader refuses the system calls that reach other processes, connect(), mounts, "
        "namespaces, bpf, perf and io_uring, and fork and exec once the plugin is loaded; here no call is refused",
        "Landlock: the Linux grader lets a worker read the system's folders and write one private scratch folder "
        "only; here it reads and writes whatever you can",
        "an allow-listed environment: the Linux grader's worker inherits no variable but PATH, the locale, the "
        "library path and the CUDA device selection; here it inherits your environment",
        "cgroup memory limit: the Linux grader caps each worker at the rubric's limits.memory_mb (a cgroup's "
        "memory.max, else RLIMIT_DATA) and calls a cap reached memory_limit; here nothing caps its memory",
        "rlimits: the Linux grader bounds a worker's CPU time, file sizes, open files and processes; here only the "
        "rubric's time limits (above) hold",
        "static audit: the Linux grader reads a submission's ELF dynamic section before any of its code runs and "
        "refuses forbidden imports (cuBLAS, dlopen, fork and exec, sockets, syscall, cudaEvent*, cupti*, ...); it "
        "reads ELF only, and a .dll (PE) is not audited here",
        "outputs checked outside the worker: the Linux grader takes every call's C as a memfd sealed against "
        "change and checks it in its own process, against inputs drawn from a seed it issues right before the "
        "call; here each call is checked inside the worker (above), so the verdict is the worker's own word",
        "the grader's clock: the Linux grader times every call's window (seed sent, sealed output received) on its "
        "own clock and the worker's CPU time, and does not believe a claimed time below that bound; here the "
        "times are the worker's own, as in a sweep",
        "CPU pinning: the Linux grader starts a CPU rubric's workers, the submission's and its references', on one "
        "CPU they may not leave, which makes the worker's CPU time a bound on each call; here they run where the "
        "system puts them",
        "threads left running: the Linux worker counts the threads each call leaves behind (/proc/self/task); not "
        "counted here",
    };
    return u;
}

CheckResult audit_skipped_for_pe(const std::string& plugin) {
    return {"audit",
            "static audit of the shared object",
            0,
            0,
            true,
            "not run: " + plugin +
                " is a Windows library (PE), and the static audit reads ELF shared objects only (an unconfined "
                "self-check: see unconfined_self_check)",
            {{"skipped", true}, {"format", "windows_pe"}}};
}

std::string entry_names(const std::vector<std::string>& entries) {
    std::string joined;
    for (const std::string& entry : entries) joined += (joined.empty() ? "" : ", ") + entry.substr(0, entry.find(": "));
    return joined;
}

}  // namespace kreg
