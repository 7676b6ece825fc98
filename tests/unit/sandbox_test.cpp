// The worker's hardening, applied for real. The filters and namespaces cannot be undone, so every test
// forks a child, hardens the child, tries the forbidden (or the still allowed) thing there and reports
// through the exit code and a message on a pipe; the parent asserts on that. A step this machine cannot
// apply (not root, no user namespaces) makes the test skip with the report's reason, never pass.
#include "sandbox/sandbox.hpp"

#include "scratch_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/kcmp.h>
#include <linux/filter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "in_child.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace kreg {
namespace {

using test::ChildOutcome;
using test::in_child;
using test::kFail;
using test::kPass;
using test::kSkip;

namespace fs = std::filesystem;

const test::ScratchRoot scratch("kreg_sandbox_test");

// Collects failed expectations inside the child; the message travels back to the parent.
struct Checks {
    std::string log;
    bool ok = true;
    void expect(bool condition, const std::string& what) {
        if (!condition) {
            ok = false;
            log += "FAILED: " + what + "\n";
        }
    }
    // r and saved_errno are the result of one call, read right after it.
    void expect_errno(const std::string& call, long r, int saved_errno, int wanted) {
        const std::string got =
            r == -1 ? std::string("-1 with ") + std::strerror(saved_errno) : std::to_string(r) + " (success)";
        expect(r == -1 && saved_errno == wanted,
               call + " returned " + got + ", wanted -1 with " + std::strerror(wanted));
    }
    // Makes the call, then reads errno (arguments of one call have no order, so errno must wait).
    template <class Call>
    void expect_call_errno(const std::string& call, Call&& make_call, int wanted) {
        errno = 0;
        const long r = long(make_call());
        expect_errno(call, r, errno, wanted);
    }
    int result() const { return ok ? kPass : kFail; }
};

std::string unavailable_text(const SandboxReport& report) {
    std::string text;
    for (const std::string& entry : report.unavailable) text += entry + "\n";
    return text;
}

// In the child: kSkip with the report's reasons when step did not apply.
bool step_missing(const SandboxReport& report, const char* step, std::string& message) {
    if (report.has_applied(step)) return false;
    message = std::string(step) + " is not available here:\n" + unavailable_text(report);
    return true;
}

// In the child: kSkip only when the report gives a reason for step; a step missing from both lists is
// not an excuse (the checks run and fail).
bool step_unavailable(const SandboxReport& report, const char* step, std::string& message) {
    if (report.has_applied(step)) return false;
    for (const std::string& entry : report.unavailable)
        if (entry.rfind(std::string(step) + ": ", 0) == 0) {
            message = std::string(step) + " is not available here:\n" + unavailable_text(report);
            return true;
        }
    return false;
}

ino_t net_namespace_inode() {
    struct stat st {};
    return ::stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
}

// Interface names from /proc/self/net/dev, which shows the calling process's network namespace.
std::vector<std::string> interfaces_from_proc() {
    std::ifstream in("/proc/self/net/dev");
    std::vector<std::string> names;
    std::string line;
    while (std::getline(in, line)) {
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        name.erase(0, name.find_first_not_of(' '));
        names.push_back(name);
    }
    return names;
}

std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "" : ",") + n;
    return text;
}

TEST(SandboxReport, JsonRoundTripAndStepNames) {
    SandboxReport report;
    report.applied = {"RLIMIT_CORE: 0", "seccomp stage 1: 40 syscalls -> EPERM"};
    report.unavailable = {"network namespace: unshare(CLONE_NEWNET): Operation not permitted"};
    const nlohmann::json j = report.to_json();
    EXPECT_EQ(j["applied"].size(), 2u);
    EXPECT_EQ(j["unavailable"][0], "network namespace: unshare(CLONE_NEWNET): Operation not permitted");
    const SandboxReport back = SandboxReport::from_json(j);
    EXPECT_EQ(back.applied, report.applied);
    EXPECT_EQ(back.unavailable, report.unavailable);
    EXPECT_TRUE(report.has_applied("seccomp stage 1"));
    EXPECT_TRUE(report.has_applied("RLIMIT_CORE"));
    EXPECT_FALSE(report.has_applied("seccomp"));
    EXPECT_FALSE(report.has_applied("network namespace"));
}

TEST(Sandbox, ReportListsEveryStepAndDropsNone) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        SandboxReport report = harden_before_load(SandboxPolicy{});
        harden_after_load(SandboxPolicy{}, report);
        message = report.to_json().dump(1) + "\n";
        Checks checks;
        for (const char* step : {"network namespace", "RLIMIT_CORE", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE",
                                 "no_new_privs", "dumpable", "landlock", "seccomp stage 1", "seccomp stage 2"}) {
            if (report.has_applied(step)) continue;
            bool reported = false;
            for (const std::string& entry : report.unavailable) reported |= entry.rfind(step, 0) == 0;
            checks.expect(reported, std::string(step) + " is neither applied nor reported unavailable");
            if (reported && checks.ok) {
                message = std::string(step) + " is not available here:\n" + unavailable_text(report);
                return kSkip;
            }
        }
        checks.expect(report.unavailable.empty() || ::geteuid() != 0, "as root, nothing should be unavailable");
        message += checks.log;
        return checks.result();
    }));
}

TEST(Sandbox, OnlyUnixStreamSocketsCanBeCreated) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        const SandboxReport report = harden_before_load(SandboxPolicy{});
        if (step_missing(report, "seccomp stage 1", message)) return kSkip;
        Checks checks;
        const std::pair<int, const char*> denied[] = {
            {AF_INET, "AF_INET"}, {AF_INET6, "AF_INET6"}, {AF_NETLINK, "AF_NETLINK"}, {AF_PACKET, "AF_PACKET"}};
        for (const auto& [domain, name] : denied) {
            const int fd = ::socket(domain, SOCK_DGRAM, 0);
            checks.expect_errno(std::string("socket(") + name + ")", fd, errno, EPERM);
        }
        // A datagram socket could sendmsg to any pathname socket (msg_name is out of the filter's sight).
        for (const auto& [type, name] :
             {std::pair<int, const char*>{SOCK_DGRAM | SOCK_CLOEXEC, "SOCK_DGRAM"}, {SOCK_RAW, "SOCK_RAW"}}) {
            const int fd = ::socket(AF_UNIX, type, 0);
            checks.expect_errno(std::string("socket(AF_UNIX, ") + name + ")", fd, errno, EPERM);
            int pair[2];
            const int r = ::socketpair(AF_UNIX, type, 0, pair);
            checks.expect_errno(std::string("socketpair(AF_UNIX, ") + name + ")", r, errno, EPERM);
        }
        const int stream = ::socket(AF_UNIX, SOCK_STREAM, 0);
        checks.expect(stream >= 0, std::string("socket(AF_UNIX, SOCK_STREAM): ") + std::strerror(errno));
        const int seqpacket = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        checks.expect(seqpacket >= 0, std::string("socket(AF_UNIX, SOCK_SEQPACKET): ") + std::strerror(errno));
        int pair[2];
        checks.expect(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0,
                      std::string("socketpair(AF_UNIX, SOCK_STREAM): ") + std::strerror(errno));
        message = checks.log;
        return checks.result();
    }));
}

// Each call has arguments that would fail harmlessly with another errno (or do nothing lasting) if
// the filter were missing, so a broken filter shows up as a wrong errno, never as a reboot.
struct DeniedCall {
    const char* name;
    std::function<long()> call;
};

std::vector<DeniedCall> stage1_denied_calls() {
    static char buffer[16];
    static const char* const missing = "/nonexistent-kreg-sandbox-test";
    return {
        {"ptrace(PTRACE_TRACEME)", [] { return ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); }},
        {"process_vm_readv(self)",
         [] {
             char target[16];
             iovec local{target, sizeof target}, remote{buffer, sizeof buffer};
             return long(::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0));
         }},
        {"process_vm_writev(self)",
         [] {
             char source[16] = {};
             iovec local{source, sizeof source}, remote{buffer, sizeof buffer};
             return long(::process_vm_writev(::getpid(), &local, 1, &remote, 1, 0));
         }},
        {"mount", [] { return long(::mount("none", missing, "tmpfs", 0, nullptr)); }},
        {"umount2", [] { return long(::umount2(missing, 0)); }},
        {"unshare(CLONE_NEWNS)", [] { return long(::unshare(CLONE_NEWNS)); }},
        {"unshare(CLONE_NEWUSER)", [] { return long(::unshare(CLONE_NEWUSER)); }},
        {"setns", [] { return long(::setns(-1, 0)); }},
        {"pivot_root", [] { return ::syscall(SYS_pivot_root, missing, missing); }},
        {"chroot", [] { return long(::chroot(missing)); }},
        {"bpf", [] { return ::syscall(SYS_bpf, 9999, nullptr, 0); }},
        {"perf_event_open", [] { return ::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0); }},
        {"kexec_load", [] { return ::syscall(SYS_kexec_load, 0, 1000000, nullptr, 0x7fff0000ul); }},
        {"kexec_file_load", [] { return ::syscall(SYS_kexec_file_load, -1, -1, 0, nullptr, ~0ul); }},
        {"init_module", [] { return ::syscall(SYS_init_module, nullptr, 0, ""); }},
        {"finit_module", [] { return ::syscall(SYS_finit_module, -1, "", 0); }},
        {"delete_module", [] { return ::syscall(SYS_delete_module, "kreg_no_such_module", O_NONBLOCK); }},
        {"reboot(bad magic)", [] { return ::syscall(SYS_reboot, 0, 0, 0, nullptr); }},
        {"swapon", [] { return ::syscall(SYS_swapon, missing, 0); }},
        {"swapoff", [] { return ::syscall(SYS_swapoff, missing); }},
        {"keyctl", [] { return ::syscall(SYS_keyctl, 9999, 0, 0, 0, 0); }},
        {"add_key", [] { return ::syscall(SYS_add_key, nullptr, nullptr, nullptr, 0, 0); }},
        {"request_key", [] { return ::syscall(SYS_request_key, nullptr, nullptr, nullptr, 0); }},
        {"userfaultfd", [] { return ::syscall(SYS_userfaultfd, O_CLOEXEC); }},
        {"io_uring_setup", [] { return ::syscall(SYS_io_uring_setup, 0, nullptr); }},
        {"open_by_handle_at", [] { return ::syscall(SYS_open_by_handle_at, -1, nullptr, 0); }},
        {"fsopen", [] { return ::syscall(SYS_fsopen, "kreg_no_such_fs", 0); }},
        {"open_tree", [] { return ::syscall(SYS_open_tree, -1, missing, 0); }},
        {"pidfd_getfd", [] { return ::syscall(SYS_pidfd_getfd, -1, 0, 0); }},
        {"iopl", [] { return ::syscall(SYS_iopl, 4); }},
        {"sethostname(too long)", [] { return ::syscall(SYS_sethostname, "x", 100000); }},
        {"clock_settime(CLOCK_MONOTONIC)",
         [] {
             timespec ts{};
             return ::syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts);
         }},
        {"setrlimit(RLIMIT_NOFILE)",
         [] {
             rlimit same{};
             ::getrlimit(RLIMIT_NOFILE, &same);
             return ::syscall(SYS_setrlimit, RLIMIT_NOFILE, &same);
         }},
        {"prlimit64(set RLIMIT_CPU)",
         [] {
             rlimit same{};
             ::getrlimit(RLIMIT_CPU, &same);
             return ::syscall(SYS_prlimit64, 0, RLIMIT_CPU, &same, nullptr);
         }},
        {"setsid", [] { return long(::setsid()); }},
        {"setpgid(0, 0)", [] { return long(::setpgid(0, 0)); }},
        {"tkill(self, 0)", [] { return ::syscall(SYS_tkill, ::gettid(), 0); }},
        {"pidfd_send_signal", [] { return ::syscall(SYS_pidfd_send_signal, -1, SIGCONT, nullptr, 0); }},
        {"kill(parent, SIGCONT)", [] { return long(::kill(::getppid(), SIGCONT)); }},
        {"kill(no such pid, SIGTERM)", [] { return long(::kill(0x7ffffff0, SIGTERM)); }},
        {"tgkill(parent, parent, SIGCONT)", [] { return ::syscall(SYS_tgkill, ::getppid(), ::getppid(), SIGCONT); }},
        {"rt_sigqueueinfo(parent, SIGCONT)",
         [] {
             siginfo_t info{};
             info.si_code = SI_QUEUE;
             return ::syscall(SYS_rt_sigqueueinfo, ::getppid(), SIGCONT, &info);
         }},
        {"prctl(PR_SET_DUMPABLE, 1)", [] { return long(::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)); }},
        {"clone(CLONE_NEWNET)",
         [] {
             const long r = ::syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, nullptr, nullptr, nullptr, 0);
             if (r == 0) ::_exit(kFail);  // a child: the filter let it through
             return r;
         }},
    };
}

TEST(Sandbox, Stage1DeniesEveryListedCallWithEperm) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        const SandboxReport report = harden_before_load(SandboxPolicy{});
        if (step_missing(report, "seccomp stage 1", message)) return kSkip;
        Checks checks;
        // Only call the dangerous ones with a filter in place.
        if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2) {
            message = "the report says stage 1 applied, but PR_GET_SECCOMP is not 2";
            return kFail;
        }
        for (const DeniedCall& denied : stage1_denied_calls()) {
            errno = 0;
            const long r = denied.call();
            checks.expect_errno(denied.name, r, errno, EPERM);
        }
        // clone3 is not a violation: ENOSYS sends glibc back to clone. Size 0 is invalid without a filter.
        errno = 0;
        const long r = ::syscall(SYS_clone3, nullptr, 0);
        checks.expect_errno("clone3", r, errno, ENOSYS);
        // Reading limits stays allowed.
        rlimit limit{};
        checks.expect(::getrlimit(RLIMIT_NOFILE, &limit) == 0, "getrlimit is allowed");
        message = checks.log;
        return checks.result();
    }));
}

std::atomic<int> signals_received{0};
void count_signal(int) { signals_received.fetch_add(1); }

TEST(Sandbox, SignalsStillReachTheWorkerItself) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        // Its own process group, like a worker: kill(0, ...) must not reach the test runner.
        if (::setpgid(0, 0) != 0) {
            message = std::string("setpgid: ") + std::strerror(errno);
            return kFail;
        }
        const SandboxReport report = harden_before_load(SandboxPolicy{});
        if (step_missing(report, "seccomp stage 1", message)) return kSkip;
        Checks checks;
        ::signal(SIGUSR1, count_signal);
        checks.expect(::raise(SIGUSR1) == 0, "raise(SIGUSR1)");
        checks.expect(::kill(::getpid(), SIGUSR1) == 0, "kill(self, SIGUSR1)");
        checks.expect(::kill(0, SIGUSR1) == 0, "kill(0, SIGUSR1), the worker's own group");
        checks.expect(::pthread_kill(::pthread_self(), SIGUSR1) == 0, "pthread_kill(self)");
        std::thread([&] { checks.expect(::kill(::getpid(), SIGUSR1) == 0, "kill(self) from another thread"); }).join();
        checks.expect(signals_received.load() == 5, "5 signals arrived: " + std::to_string(signals_received.load()));
        // Signal 0 only asks whether a process exists: seccomp lets it through, Landlock's signal scope
        // (ABI 6) does not, so from a Landlock domain even that question has no answer outside it.
        errno = 0;
        const long probe = ::kill(::getppid(), 0);
        if (report.applied.end() !=
            std::find_if(report.applied.begin(), report.applied.end(), [](const std::string& e) {
                return e.rfind("landlock: ", 0) == 0 &&
                       e.find("signals and abstract Unix sockets only within") != std::string::npos;
            }))
            checks.expect_errno("kill(parent, 0) from a Landlock domain", probe, errno, EPERM);
        else
            checks.expect(probe == 0, "kill(parent, 0) only asks whether it exists");
        message = checks.log;
        return checks.result();
    }));
}

TEST(Sandbox, X32AndI386SyscallsAreDenied) {
    const ChildOutcome outcome = in_child([](std::string& message) {
        const SandboxReport report = harden_before_load(SandboxPolicy{});
        if (step_missing(report, "seccomp stage 1", message)) return kSkip;
        Checks checks;
        errno = 0;
        const long x32 = ::syscall(0x40000000L | SYS_getpid);  // __X32_SYSCALL_BIT
        checks.expect_errno("x32 getpid", x32, errno, EPERM);
        // i386 getpid (20) through int 0x80: the filter sees AUDIT_ARCH_I386. Without ia32 emulation
        // the kernel answers with SIGSEGV before any filter runs; the parent skips then.
        long i386 = 20;
        asm volatile("int $0x80" : "+a"(i386) : : "memory", "r8", "r9", "r10", "r11");
        checks.expect(i386 == -EPERM, "i386 getpid returned " + std::to_string(i386) + ", wanted -EPERM");
        message = checks.log;
        return checks.result();
    });
    if (outcome.signal == SIGSEGV) GTEST_SKIP() << "int 0x80 is not available (no ia32 emulation)";
    EXPECT_CHILD_PASSES(outcome);
}

TEST(Sandbox, LimitsAndProcessFlags) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        SandboxPolicy policy;
        policy.max_open_files = 64;
        policy.max_file_bytes = 1 << 20;
        policy.cpu_seconds = 30;
        const SandboxReport report = harden_before_load(policy);
        Checks checks;
        rlimit limit{};
        ::getrlimit(RLIMIT_CORE, &limit);
        checks.expect(limit.rlim_cur == 0 && limit.rlim_max == 0, "RLIMIT_CORE is 0");
        ::getrlimit(RLIMIT_NOFILE, &limit);
        checks.expect(limit.rlim_cur == 64 && limit.rlim_max == 64, "RLIMIT_NOFILE is 64");
        ::getrlimit(RLIMIT_FSIZE, &limit);
        checks.expect(limit.rlim_cur == 1u << 20 && limit.rlim_max == 1u << 20, "RLIMIT_FSIZE is 1 MiB");
        ::getrlimit(RLIMIT_CPU, &limit);
        checks.expect(limit.rlim_cur >= 30 && limit.rlim_cur <= 31 && limit.rlim_max == limit.rlim_cur + 5,
                      "RLIMIT_CPU is 30 s from now, hard 5 s later: " + std::to_string(limit.rlim_cur));
        checks.expect(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0, "PR_GET_DUMPABLE is 0");
        checks.expect(::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1, "PR_GET_NO_NEW_PRIVS is 1");
        // The descriptor limit holds: opening stops with EMFILE below 64.
        int last_errno = 0, opened = 0;
        for (int i = 0; i < 100; ++i) {
            if (::open("/dev/null", O_RDONLY) < 0) {
                last_errno = errno;
                break;
            }
            ++opened;
        }
        checks.expect(last_errno == EMFILE && opened < 64,
                      "open stops with EMFILE below 64, opened " + std::to_string(opened));
        for (const char* step :
             {"RLIMIT_CORE", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "no_new_privs", "dumpable"})
            checks.expect(report.has_applied(step), std::string("the report lists ") + step);
        message = checks.log + report.to_json().dump(1);
        return checks.result();
    }));
}

TEST(Sandbox, WritingPastTheFileSizeLimitEndsInSigxfsz) {
    const ChildOutcome outcome = in_child([](std::string& message) {
        SandboxPolicy policy;
        policy.max_file_bytes = 4096;
        policy.scratch_dir = scratch.fresh_dir("file_size_limit").string();
        harden_before_load(policy);
        const int fd = ::open(policy.scratch_dir.c_str(), O_TMPFILE | O_RDWR, 0600);
        if (fd < 0) {
            message = std::string("O_TMPFILE in the scratch folder: ") + std::strerror(errno);
            return kSkip;
        }
        const std::string data(8192, 'x');
        const ssize_t n = ::write(fd, data.data(), data.size());
        const ssize_t more = ::write(fd, data.data(), data.size());
        message = "the writes returned " + std::to_string(n) + " and " + std::to_string(more) + " (" +
                  std::strerror(errno) + ") instead of ending the process";
        return kFail;
    });
    if (outcome.exit_code == kSkip) GTEST_SKIP() << outcome.message;
    EXPECT_EQ(outcome.signal, SIGXFSZ) << outcome.message;
}

TEST(Sandbox, CpuTimePastTheLimitEndsInSigxcpu) {
    const ChildOutcome outcome = in_child([](std::string& message) {
        SandboxPolicy policy;
        policy.cpu_seconds = 1;
        harden_before_load(policy);
        const auto start = std::chrono::steady_clock::now();
        volatile uint64_t spin = 0;
        while (std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) spin = spin + 1;
        message = "spun for 30 s of wall time without SIGXCPU";
        return kFail;
    });
    EXPECT_EQ(outcome.signal, SIGXCPU) << outcome.message;
}

TEST(Sandbox, NetworkNamespaceHasOnlyLoopback) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        const ino_t before = net_namespace_inode();
        SandboxPolicy policy;
        policy.seccomp = false;  // if_nameindex needs an AF_NETLINK socket, which stage 1 denies
        const SandboxReport report = harden_before_load(policy);
        if (step_missing(report, "network namespace", message)) return kSkip;
        Checks checks;
        checks.expect(net_namespace_inode() != before && before != 0, "/proc/self/ns/net changed");
        std::vector<std::string> names;
        if (struct if_nameindex* list = ::if_nameindex()) {
            for (struct if_nameindex* i = list; i->if_index != 0; ++i) names.push_back(i->if_name);
            ::if_freenameindex(list);
        } else {
            checks.expect(false, std::string("if_nameindex: ") + std::strerror(errno));
        }
        checks.expect(names == std::vector<std::string>{"lo"}, "if_nameindex lists only lo: " + joined(names));
        message = checks.log;
        return checks.result();
    }));
}

TEST(Sandbox, NetworkNamespaceWithTheFullPolicy) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        const ino_t before = net_namespace_inode();
        SandboxReport report = harden_before_load(SandboxPolicy{});
        harden_after_load(SandboxPolicy{}, report);
        if (step_missing(report, "network namespace", message)) return kSkip;
        Checks checks;
        checks.expect(net_namespace_inode() != before, "/proc/self/ns/net changed");
        const std::vector<std::string> names = interfaces_from_proc();
        checks.expect(names == std::vector<std::string>{"lo"}, "/proc/self/net/dev lists only lo: " + joined(names));
        message = checks.log;
        return checks.result();
    }));
}

TEST(Sandbox, WithoutRootTheNetworkNamespaceComesWithAUserNamespace) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user in the child";
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        constexpr uid_t kNobody = 65534;
        if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
            message = std::string("cannot become nobody: ") + std::strerror(errno);
            return kSkip;
        }
        ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);  // changing uid cleared it; a worker started as a user has it
        ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        const ino_t before = net_namespace_inode();
        const SandboxReport report = harden_before_load(SandboxPolicy{});
        if (step_missing(report, "network namespace", message)) return kSkip;
        Checks checks;
        checks.expect(report.applied.end() != std::find_if(report.applied.begin(), report.applied.end(),
                                                           [](const std::string& e) {
                                                               return e.find("CLONE_NEWUSER|CLONE_NEWNET") !=
                                                                      std::string::npos;
                                                           }),
                      "the report names the user namespace fallback");
        checks.expect(report.has_applied("user namespace"), "the id maps were written");
        checks.expect(::getuid() == kNobody && ::getgid() == kNobody, "uid and gid unchanged inside");
        checks.expect(net_namespace_inode() != before, "/proc/self/ns/net changed");
        checks.expect(interfaces_from_proc() == std::vector<std::string>{"lo"}, "only lo");
        int death_signal = 0;
        ::prctl(PR_GET_PDEATHSIG, &death_signal, 0, 0, 0);
        checks.expect(death_signal == SIGKILL, "PR_SET_PDEATHSIG survived the new user namespace");
        checks.expect(report.has_applied("seccomp stage 1"), "seccomp without root, thanks to no_new_privs");
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        checks.expect_errno("socket(AF_INET)", fd, errno, EPERM);
        message = checks.log + report.to_json().dump(1);
        return checks.result();
    }));
}

void* set_flag(void* flag) {
    static_cast<std::atomic<int>*>(flag)->store(1);
    return nullptr;
}

TEST(Sandbox, AfterLoadForkAndExecFailButThreadsWork) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        // A thread that exists before any hardening, like one a library starts at load time: TSYNC
        // must give it both filters.
        std::mutex mutex;
        std::condition_variable wake;
        bool go = false;
        long early_fork = 0, early_socket = 0;
        int early_fork_errno = 0, early_socket_errno = 0;
        std::thread early([&] {
            std::unique_lock<std::mutex> lock(mutex);
            wake.wait(lock, [&] { return go; });
            early_socket = ::socket(AF_INET, SOCK_STREAM, 0);
            early_socket_errno = errno;
            early_fork = ::fork();
            early_fork_errno = errno;
            if (early_fork == 0) ::_exit(kFail);
        });

        SandboxReport report = harden_before_load(SandboxPolicy{});
        harden_after_load(SandboxPolicy{}, report);
        if (report.has_applied("seccomp stage 2") == false || report.has_applied("seccomp stage 1") == false) {
            {
                std::lock_guard<std::mutex> lock(mutex);
                go = true;
            }
            wake.notify_one();
            early.join();
            step_missing(report, "seccomp stage 2", message);
            return kSkip;
        }
        Checks checks;
        {
            std::lock_guard<std::mutex> lock(mutex);
            go = true;
        }
        wake.notify_one();
        early.join();
        checks.expect_errno("socket(AF_INET) in a thread started before hardening", early_socket, early_socket_errno,
                            EPERM);
        checks.expect_errno("fork() in a thread started before hardening", early_fork, early_fork_errno, EPERM);

        errno = 0;
        pid_t pid = ::fork();
        if (pid == 0) ::_exit(kFail);
        checks.expect_errno("fork()", pid, errno, EPERM);
        errno = 0;
        long r = ::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, 0);
        if (r == 0) ::_exit(kFail);
        checks.expect_errno("clone(SIGCHLD)", r, errno, EPERM);
        errno = 0;
        r = ::syscall(SYS_vfork);
        if (r == 0) ::_exit(kFail);
        checks.expect_errno("vfork()", r, errno, EPERM);

        char* const argv[] = {const_cast<char*>("/bin/false"), nullptr};
        errno = 0;
        r = ::execve("/bin/false", argv, environ);  // on success the child exits 1: a failure
        checks.expect_errno("execve(/bin/false)", r, errno, EPERM);
        errno = 0;
        r = ::syscall(SYS_execveat, AT_FDCWD, "/bin/false", argv, environ, 0);
        checks.expect_errno("execveat(/bin/false)", r, errno, EPERM);
        pid_t spawned = 0;
        const int spawn_error = ::posix_spawn(&spawned, "/bin/false", nullptr, nullptr, argv, environ);
        checks.expect(spawn_error != 0, "posix_spawn fails");

        std::atomic<int> from_std_thread{0};
        std::thread worker([&] { from_std_thread = 1; });
        worker.join();
        checks.expect(from_std_thread == 1, "std::thread runs");
        std::atomic<int> from_pthread{0};
        pthread_t thread;
        const int created = ::pthread_create(&thread, nullptr, set_flag, &from_pthread);
        checks.expect(created == 0, std::string("pthread_create: ") + std::strerror(created));
        if (created == 0) ::pthread_join(thread, nullptr);
        checks.expect(from_pthread == 1, "the pthread ran");
        message = checks.log;
        return checks.result();
    }));
}

TEST(Sandbox, KillOnViolationEndsTheProcessWithSigsys) {
    const ChildOutcome outcome = in_child([](std::string& message) {
        SandboxPolicy policy;
        policy.kill_on_violation = true;
        const SandboxReport report = harden_before_load(policy);
        if (step_missing(report, "seccomp stage 1", message)) return kSkip;
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        message = "socket(AF_INET) returned " + std::to_string(fd) + " instead of killing";
        return kFail;
    });
    if (outcome.exit_code == kSkip) GTEST_SKIP() << outcome.message;
    EXPECT_EQ(outcome.signal, SIGSYS) << outcome.message;
}

TEST(Sandbox, KillOnViolationAfterLoadKillsAForkFromAnyThread) {
    const ChildOutcome outcome = in_child([](std::string& message) {
        SandboxPolicy policy;
        policy.kill_on_violation = true;
        SandboxReport report = harden_before_load(policy);
        harden_after_load(policy, report);
        if (step_missing(report, "seccomp stage 2", message)) return kSkip;
        std::thread([] {
            if (::fork() == 0) ::_exit(kFail);
        }).join();
        message = "fork() in a thread returned instead of killing the process";
        return kFail;
    });
    if (outcome.exit_code == kSkip) GTEST_SKIP() << outcome.message;
    EXPECT_EQ(outcome.signal, SIGSYS) << outcome.message;
}

TEST(Sandbox, DisabledPolicyAppliesNothingAndSaysSo) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        SandboxPolicy policy;
        policy.enabled = false;
        SandboxReport report = harden_before_load(policy);
        harden_after_load(policy, report);
        Checks checks;
        checks.expect(report.applied.empty(), "nothing applied");
        checks.expect(report.unavailable == std::vector<std::string>{"sandbox: disabled by policy"},
                      "the report says the sandbox is disabled");
        checks.expect(::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0, "no filter");
        checks.expect(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1, "still dumpable");
        const pid_t pid = ::fork();
        if (pid == 0) ::_exit(0);
        checks.expect(pid > 0, "fork works");
        if (pid > 0) ::waitpid(pid, nullptr, 0);
        message = checks.log;
        return checks.result();
    }));
}

TEST(Sandbox, StepsDisabledByPolicyAreReported) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        SandboxPolicy policy;
        policy.seccomp = false;
        policy.network_namespace = false;
        const ino_t before = net_namespace_inode();
        SandboxReport report = harden_before_load(policy);
        harden_after_load(policy, report);
        Checks checks;
        for (const char* entry : {"network namespace: disabled by policy", "seccomp stage 1: disabled by policy",
                                  "seccomp stage 2: disabled by policy"})
            checks.expect(
                std::find(report.unavailable.begin(), report.unavailable.end(), entry) != report.unavailable.end(),
                std::string("reported: ") + entry);
        checks.expect(::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0, "no filter");
        checks.expect(net_namespace_inode() == before, "same network namespace");
        checks.expect(report.has_applied("dumpable") && report.has_applied("RLIMIT_CORE"), "the rest applied");
        message = checks.log + report.to_json().dump(1);
        return checks.result();
    }));
}

// ---- The file system (Landlock), signals and Unix sockets towards other processes ----

constexpr uid_t kNobody = 65534;

// In the child: gives up root for nobody, keeping what a worker started as a user would have.
bool become_nobody(std::string& message) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
        message = std::string("cannot become nobody: ") + std::strerror(errno);
        return false;
    }
    ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);  // changing uid cleared it; a worker started as a user has it
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    return true;
}

// 0 when opening worked (the file is closed, and removed if this call made it), else errno.
int open_errno(const std::string& path, int flags) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    ::close(fd);
    if (flags & O_EXCL) ::unlink(path.c_str());
    return 0;
}
int create_errno(const std::string& path) { return open_errno(path, O_WRONLY | O_CREAT | O_EXCL); }
int read_errno(const std::string& path) { return open_errno(path, O_RDONLY); }
int list_errno(const std::string& path) {
    DIR* dir = ::opendir(path.c_str());
    if (!dir) return errno;
    ::closedir(dir);
    return 0;
}
std::string errno_text(int e) { return e == 0 ? "success" : std::strerror(e); }

bool landlock_scopes_signals(const SandboxReport& report) {
    for (const std::string& entry : report.applied)
        if (entry.rfind("landlock: ", 0) == 0 && entry.find("only within the domain") != std::string::npos) return true;
    return false;
}

// A folder for one test, readable and writable by nobody where that matters: scratch/ (the worker's
// own), sibling/ (writable by anyone: only Landlock stands in the way), secret.txt (readable by anyone),
// shared/readable.txt (given to the worker read-only), and a listening pathname Unix socket.
struct Territory {
    fs::path base, scratch, sibling, secret, shared, readable, socket_path;
    int listener = -1;

    explicit Territory(const std::string& name) {
        base = kreg::scratch.fresh_dir(name);
        scratch = base / "scratch";
        sibling = base / "sibling";
        shared = base / "shared";
        for (const fs::path& dir : {scratch, sibling, shared}) fs::create_directories(dir);
        secret = base / "secret.txt";
        readable = shared / "readable.txt";
        std::ofstream(secret) << "the grader's secret\n";
        std::ofstream(readable) << "the plugin\n";
        // The whole way down is open to nobody, so DAC never answers for Landlock. Only folders that lack the bit are
        // changed: an ordinary user running the test may not chmod /tmp, which has it already.
        for (fs::path p = base; p != p.root_path(); p = p.parent_path())
            if ((fs::status(p).permissions() & fs::perms::others_exec) == fs::perms::none)
                fs::permissions(p, fs::perms::others_exec, fs::perm_options::add);
        fs::permissions(sibling, fs::perms::all);
        fs::permissions(shared, fs::perms::all);
        (void)!::chown(scratch.c_str(), kNobody, kNobody);
        socket_path = base / "service.sock";
        listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_un address = unix_address();
        if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listener, 4) != 0)
            ADD_FAILURE() << "cannot listen on " << socket_path << ": " << std::strerror(errno);
        ::chmod(socket_path.c_str(), 0777);
    }
    ~Territory() { ::close(listener); }

    sockaddr_un unix_address() const {
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
        return address;
    }
    SandboxPolicy policy() const {
        SandboxPolicy policy;
        policy.scratch_dir = scratch.string();
        policy.readable_paths = {readable.string()};
        return policy;
    }
    // In the parent, after the child ended: did anyone connect?
    bool listener_saw_a_connection() const {
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) ::close(fd);
        return fd >= 0;
    }
};

// In a child hardened with territory.policy(): everything the worker may do to files, and what it may not.
void check_confined_file_system(const Territory& t, const SandboxReport& report, Checks& checks) {
    bool landlock_text = false;
    for (const std::string& entry : report.applied)
        landlock_text |= entry.rfind("landlock: ABI ", 0) == 0 &&
                         entry.find("writable: " + t.scratch.string()) != std::string::npos &&
                         entry.find(t.readable.string()) != std::string::npos;
    checks.expect(landlock_text, "the report names the ABI, the readable file and the writable folder");

    // Allowed: the scratch folder, fully; the system's folders and the readable file, to read.
    const std::string made = (t.scratch / "made.txt").string();
    int fd = ::open(made.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    checks.expect(fd >= 0, "create a file in the scratch folder: " + errno_text(errno));
    checks.expect(fd >= 0 && ::write(fd, "x", 1) == 1, "write to it");
    if (fd >= 0) ::close(fd);
    checks.expect(open_errno(made, O_WRONLY | O_TRUNC) == 0, "truncate it on open");
    checks.expect(::mkdir((t.scratch / "sub").c_str(), 0755) == 0, "mkdir in the scratch folder: " + errno_text(errno));
    checks.expect(::rename(made.c_str(), (t.scratch / "sub" / "moved.txt").c_str()) == 0,
                  "rename within the scratch folder: " + errno_text(errno));
    checks.expect(::unlink((t.scratch / "sub" / "moved.txt").c_str()) == 0, "unlink in the scratch folder");
    checks.expect(read_errno(t.readable.string()) == 0,
                  "read the readable file: " + errno_text(read_errno(t.readable)));
    checks.expect(list_errno("/usr/bin") == 0, "list /usr/bin: " + errno_text(list_errno("/usr/bin")));
    checks.expect(read_errno("/etc/passwd") == 0, "read /etc/passwd: " + errno_text(read_errno("/etc/passwd")));
    checks.expect(read_errno("/proc/self/status") == 0, "read /proc/self/status");
    checks.expect(open_errno("/dev/null", O_RDWR) == 0, "open /dev/null for writing");
    checks.expect(read_errno("/dev/urandom") == 0, "read /dev/urandom");
    checks.expect(list_errno("/dev") == 0, "list /dev");

    // Denied: writing anywhere else, reading outside the allow-list, even what DAC would allow.
    auto denied = [&](const std::string& what, int e) {
        checks.expect(e == EACCES, what + ": " + errno_text(e) + ", wanted " + std::strerror(EACCES));
    };
    const std::string name = "kreg-sandbox-test-" + std::to_string(::getpid());
    denied("create a file in /tmp", create_errno("/tmp/" + name));
    denied("create a file in the sibling folder", create_errno((t.sibling / name).string()));
    denied("create a file beside the scratch folder", create_errno((t.base / name).string()));
    denied("mkdir beside the scratch folder", ::mkdir((t.base / name).c_str(), 0755) == 0 ? 0 : errno);
    std::vector<std::string> homes = {"/root", "/home"};
    if (const char* home = ::getenv("HOME");
        home && *home && std::find(homes.begin(), homes.end(), home) == homes.end())
        homes.push_back(home);
    for (const std::string& home : homes)
        if (::access(home.c_str(), F_OK) == 0) denied("create a file in " + home, create_errno(home + "/" + name));
    if (::access("/dev/shm", F_OK) == 0) denied("create a file in /dev/shm", create_errno("/dev/shm/" + name));
    denied("read the secret", read_errno(t.secret.string()));
    denied("list the readable file's folder", list_errno(t.shared.string()));
    denied("list the folder above the scratch folder", list_errno(t.base.string()));
    denied("open /etc/passwd for writing", open_errno("/etc/passwd", O_WRONLY));
    checks.expect(::link(t.readable.c_str(), (t.scratch / "link").c_str()) != 0,
                  "link the readable file into the scratch folder");
}

TEST(Sandbox, LandlockLimitsTheFileSystemToSystemFoldersAndTheScratchFolder) {
    const Territory territory("landlock_root");
    EXPECT_CHILD_PASSES(in_child([&](std::string& message) {
        const SandboxReport report = harden_before_load(territory.policy());
        if (step_unavailable(report, "landlock", message)) return kSkip;
        Checks checks;
        check_confined_file_system(territory, report, checks);
        message = checks.log + report.to_json().dump(1);
        return checks.result();
    }));
}

TEST(Sandbox, WithoutRootLandlockAndTheFiltersStillHold) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user in the child";
    const Territory territory("landlock_nobody");
    EXPECT_CHILD_PASSES(in_child([&](std::string& message) {
        if (!become_nobody(message)) return kSkip;
        const SandboxReport report = harden_before_load(territory.policy());
        if (step_unavailable(report, "landlock", message) || step_missing(report, "seccomp stage 1", message))
            return kSkip;
        Checks checks;
        check_confined_file_system(territory, report, checks);
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const sockaddr_un address = territory.unix_address();
        const int r = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
        checks.expect_errno("connect to the parent's socket", r, errno, EPERM);
        checks.expect_call_errno(
            "fcntl(F_SETOWN, parent)", [&] { return ::fcntl(fd, F_SETOWN, ::getppid()); }, EPERM);
        checks.expect_call_errno(
            "pidfd_open(parent)", [] { return ::syscall(SYS_pidfd_open, ::getppid(), 0); }, EPERM);
        message = checks.log + report.to_json().dump(1);
        return checks.result();
    }));
    EXPECT_FALSE(territory.listener_saw_a_connection());
}

// Each call would succeed, or fail harmlessly with another errno, without the filter.
TEST(Sandbox, NoSignalOwnershipOrProcessControlTowardsOtherProcesses) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        const SandboxReport report = harden_before_load(SandboxPolicy{});
        if (step_missing(report, "seccomp stage 1", message)) return kSkip;
        Checks checks;
        const pid_t parent = ::getppid();
        constexpr pid_t kNoSuchPid = 0x7ffffff0;
        int sock[2], pipe_fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) != 0 || ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
            message = std::string("socketpair or pipe: ") + std::strerror(errno);
            return kFail;
        }
        auto denied = [&](const char* call, long r) { checks.expect_errno(call, r, errno, EPERM); };
        // SIGIO/SIGURG (or any signal with F_SETSIG) to a process the caller names.
        errno = 0;
        denied("fcntl(F_SETOWN, parent)", ::fcntl(sock[0], F_SETOWN, parent));
        denied("fcntl(F_SETOWN, -parent's group)", ::fcntl(sock[0], F_SETOWN, -::getpgid(parent)));
        f_owner_ex owner{F_OWNER_PID, parent};
        denied("fcntl(F_SETOWN_EX, parent)", ::fcntl(sock[0], F_SETOWN_EX, &owner));
        denied("fcntl(F_SETSIG, SIGKILL)", ::fcntl(sock[0], F_SETSIG, SIGKILL));
        denied("fcntl(F_SETFL, O_ASYNC)", ::fcntl(sock[0], F_SETFL, O_ASYNC | O_NONBLOCK));
        denied("fcntl(F_SETLEASE)", ::fcntl(pipe_fds[0], F_SETLEASE, F_RDLCK));
        denied("fcntl(F_NOTIFY)", ::fcntl(pipe_fds[0], F_NOTIFY, DN_MODIFY));
        const int parent_pid = parent;
        const int on = 1;
        denied("ioctl(FIOSETOWN, parent)", ::ioctl(sock[0], FIOSETOWN, &parent_pid));
        denied("ioctl(SIOCSPGRP, parent)", ::ioctl(sock[0], SIOCSPGRP, &parent_pid));
        denied("ioctl(FIOASYNC)", ::ioctl(sock[0], FIOASYNC, &on));
        // The terminal ones (on a pipe they would fail with ENOTTY).
        const char keystroke = '\n';
        denied("ioctl(TIOCSTI)", ::ioctl(pipe_fds[0], TIOCSTI, &keystroke));
        denied("ioctl(TIOCSPGRP)", ::ioctl(pipe_fds[0], TIOCSPGRP, &parent_pid));
        denied("ioctl(TIOCCONS)", ::ioctl(pipe_fds[0], TIOCCONS));
        denied("ioctl(TIOCSIG)", ::ioctl(pipe_fds[0], TIOCSIG, SIGINT));
        // What still works: other fcntl and ioctl requests.
        checks.expect(::fcntl(sock[0], F_SETFL, O_NONBLOCK) == 0, "fcntl(F_SETFL, O_NONBLOCK)");
        checks.expect(::fcntl(sock[0], F_GETOWN) == 0, "fcntl(F_GETOWN) reads no owner");
        int pending = -1;
        checks.expect(::ioctl(sock[0], FIONREAD, &pending) == 0 && pending == 0, "ioctl(FIONREAD)");

        // A handle on, or a look into, another process.
        denied("pidfd_open(parent)", ::syscall(SYS_pidfd_open, parent, 0));
        denied("pidfd_open(self)", ::syscall(SYS_pidfd_open, ::getpid(), 0));
        denied("kcmp(self, parent)", ::syscall(SYS_kcmp, ::getpid(), parent, KCMP_VM, 0, 0));
        denied("mq_notify", ::syscall(SYS_mq_notify, -1, nullptr));
        denied("fanotify_init", ::syscall(SYS_fanotify_init, 0, O_RDONLY));
        rlimit limit{};
        denied("prlimit64(parent, read)", ::syscall(SYS_prlimit64, parent, RLIMIT_NOFILE, nullptr, &limit));
        checks.expect(::syscall(SYS_prlimit64, ::getpid(), RLIMIT_NOFILE, nullptr, &limit) == 0,
                      "prlimit64(self, read)");
        void* head = nullptr;
        size_t length = 0;
        denied("get_robust_list(parent)", ::syscall(SYS_get_robust_list, parent, &head, &length));
        errno = 0;
        const long r = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, 0);
        if (r == 0) ::_exit(kFail);  // a child of the test runner: the filter let it through
        denied("clone(CLONE_PARENT)", r);

        // Priorities and placement of others (a pid that does not exist: ESRCH without the filter).
        denied("setpriority(PRIO_PROCESS, other)", ::setpriority(PRIO_PROCESS, kNoSuchPid, 0));
        denied("setpriority(PRIO_PGRP, other)", ::setpriority(PRIO_PGRP, kNoSuchPid, 0));
        denied("setpriority(PRIO_USER, root)", ::setpriority(PRIO_USER, 0x7ffffff0, 0));
        denied("ioprio_set(other)", ::syscall(SYS_ioprio_set, 1 /*IOPRIO_WHO_PROCESS*/, kNoSuchPid, 0));
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        checks.expect(::sched_getaffinity(0, sizeof cpus, &cpus) == 0, "sched_getaffinity(self)");
        denied("sched_setaffinity(other)", ::sched_setaffinity(kNoSuchPid, sizeof cpus, &cpus));
        sched_param param{};
        denied("sched_setscheduler(other)", ::sched_setscheduler(kNoSuchPid, SCHED_OTHER, &param));
        denied("sched_setparam(other)", ::sched_setparam(kNoSuchPid, &param));
        // The same on itself is fine.
        checks.expect(::setpriority(PRIO_PROCESS, 0, ::getpriority(PRIO_PROCESS, 0)) == 0, "setpriority(self)");
        checks.expect(::sched_setaffinity(0, sizeof cpus, &cpus) == 0, "sched_setaffinity(self)");
        checks.expect(::sched_setaffinity(::getpid(), sizeof cpus, &cpus) == 0, "sched_setaffinity(own pid)");
        message = checks.log;
        return checks.result();
    }));
}

// A CPU rubric's worker stays on the one CPU it was started on (SandboxPolicy::fixed_affinity): the grader reads
// its CPU time as a bound on a call's elapsed time, which holds only while its threads can never run on two CPUs
// at once. Without the fixed affinity each sched_setaffinity below succeeds (the test above shows the own ones do).
TEST(Sandbox, FixedAffinityKeepsEveryThreadOnTheCpuItStartedOn) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        cpu_set_t all;
        CPU_ZERO(&all);
        if (::sched_getaffinity(0, sizeof all, &all) != 0) {
            message = std::string("sched_getaffinity: ") + std::strerror(errno);
            return kFail;
        }
        int first = 0;
        while (!CPU_ISSET(first, &all)) ++first;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        if (::sched_setaffinity(0, sizeof one, &one) != 0) {  // as the executor starts the worker
            message = std::string("sched_setaffinity before hardening: ") + std::strerror(errno);
            return kFail;
        }
        SandboxPolicy policy;
        policy.fixed_affinity = true;
        const SandboxReport report = harden_before_load(policy);
        if (step_missing(report, "seccomp stage 1", message)) return kSkip;
        Checks checks;
        checks.expect(report.has_applied("fixed affinity"), "the report names the fixed affinity");
        checks.expect_call_errno(
            "sched_setaffinity(self, every CPU)", [&] { return ::sched_setaffinity(0, sizeof all, &all); }, EPERM);
        checks.expect_call_errno(
            "sched_setaffinity(own pid, every CPU)", [&] { return ::sched_setaffinity(::getpid(), sizeof all, &all); },
            EPERM);
        int thread_errno = 0;
        std::thread([&] { thread_errno = ::sched_setaffinity(0, sizeof all, &all) == 0 ? 0 : errno; }).join();
        checks.expect(thread_errno == EPERM, "sched_setaffinity from a new thread fails with EPERM");
        cpu_set_t now;
        CPU_ZERO(&now);
        checks.expect(::sched_getaffinity(0, sizeof now, &now) == 0 && CPU_COUNT(&now) == 1 && CPU_ISSET(first, &now),
                      "still on CPU " + std::to_string(first) + " alone");
        message = checks.log + report.to_json().dump(1);
        return checks.result();
    }));
}

// Landlock alone (no seccomp, no network namespace): its signal and abstract-socket scopes and its TCP
// rules stand on their own, so a kernel without seccomp filters still keeps the worker inside.
TEST(Sandbox, LandlockAloneKeepsSignalsSocketsAndTcpInside) {
    const std::string abstract_name = "kreg_sandbox_test_" + std::to_string(::getpid());
    const int abstract_listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un abstract{};
    abstract.sun_family = AF_UNIX;
    std::memcpy(abstract.sun_path + 1, abstract_name.data(), abstract_name.size());
    const socklen_t abstract_length = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + abstract_name.size());
    ASSERT_EQ(::bind(abstract_listener, reinterpret_cast<sockaddr*>(&abstract), abstract_length), 0)
        << std::strerror(errno);
    ASSERT_EQ(::listen(abstract_listener, 4), 0);
    const int tcp_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in tcp{};
    tcp.sin_family = AF_INET;
    tcp.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t tcp_length = sizeof tcp;
    const bool have_tcp = ::bind(tcp_listener, reinterpret_cast<sockaddr*>(&tcp), sizeof tcp) == 0 &&
                          ::listen(tcp_listener, 4) == 0 &&
                          ::getsockname(tcp_listener, reinterpret_cast<sockaddr*>(&tcp), &tcp_length) == 0;

    EXPECT_CHILD_PASSES(in_child([&](std::string& message) {
        SandboxPolicy policy;
        policy.seccomp = false;
        policy.network_namespace = false;
        const SandboxReport report = harden_before_load(policy);
        if (step_unavailable(report, "landlock", message)) return kSkip;
        if (report.has_applied("landlock") && !landlock_scopes_signals(report)) {
            message = "Landlock here has no signal scope (ABI < 6):\n" + report.to_json().dump(1);
            return kSkip;
        }
        Checks checks;
        checks.expect_call_errno(
            "kill(parent, SIGCONT)", [] { return ::kill(::getppid(), SIGCONT); }, EPERM);
        checks.expect_call_errno(
            "kill(parent, 0)", [] { return ::kill(::getppid(), 0); }, EPERM);
        checks.expect_call_errno(
            "rt_sigqueueinfo(parent)",
            [] {
                siginfo_t info{};
                info.si_code = SI_QUEUE;
                return ::syscall(SYS_rt_sigqueueinfo, ::getppid(), SIGCONT, &info);
            },
            EPERM);
        ::signal(SIGUSR1, count_signal);
        checks.expect(::raise(SIGUSR1) == 0 && signals_received.load() == 1, "raise(SIGUSR1) still arrives");
        const int unix_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        checks.expect_call_errno(
            "connect to an abstract socket outside",
            [&] { return ::connect(unix_fd, reinterpret_cast<const sockaddr*>(&abstract), abstract_length); }, EPERM);
        if (have_tcp) {
            const int tcp_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            checks.expect_call_errno(
                "connect to 127.0.0.1 over TCP",
                [&] { return ::connect(tcp_fd, reinterpret_cast<const sockaddr*>(&tcp), sizeof tcp); }, EACCES);
        }
        message = checks.log + report.to_json().dump(1);
        return checks.result();
    }));
    const int accepted = ::accept4(abstract_listener, nullptr, nullptr, SOCK_CLOEXEC);
    EXPECT_LT(accepted, 0) << "the abstract socket's listener saw a connection";
    if (have_tcp) {
        const int tcp_accepted = ::accept4(tcp_listener, nullptr, nullptr, SOCK_CLOEXEC);
        EXPECT_LT(tcp_accepted, 0) << "the TCP listener saw a connection";
        if (tcp_accepted >= 0) ::close(tcp_accepted);
    }
    if (accepted >= 0) ::close(accepted);
    ::close(abstract_listener);
    ::close(tcp_listener);
}

TEST(Sandbox, PathnameUnixSocketsOfOtherProcessesAreOutOfReach) {
    const Territory territory("unix_socket");
    EXPECT_CHILD_PASSES(in_child([&](std::string& message) {
        SandboxReport report = harden_before_load(territory.policy());
        harden_after_load(territory.policy(), report);
        if (step_missing(report, "seccomp stage 1", message)) return kSkip;
        Checks checks;
        const sockaddr_un address = territory.unix_address();
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        checks.expect(fd >= 0, std::string("socket(AF_UNIX, SOCK_STREAM): ") + std::strerror(errno));
        checks.expect_call_errno(
            "connect to a pathname socket",
            [&] { return ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address); }, EPERM);
        if (::access("/run/dbus/system_bus_socket", F_OK) == 0) {
            sockaddr_un dbus{};
            dbus.sun_family = AF_UNIX;
            std::strcpy(dbus.sun_path, "/run/dbus/system_bus_socket");
            checks.expect_call_errno(
                "connect to the D-Bus system bus",
                [&] { return ::connect(fd, reinterpret_cast<const sockaddr*>(&dbus), sizeof dbus); }, EPERM);
        }
        // The worker's own channel: a connected socketpair passing descriptors (SCM_RIGHTS) still works.
        int pair[2];
        checks.expect(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0, "socketpair(SOCK_STREAM)");
        const int passed = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        char byte = 'x';
        iovec data{&byte, 1};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        msghdr out{};
        out.msg_iov = &data;
        out.msg_iovlen = 1;
        out.msg_control = control;
        out.msg_controllen = sizeof control;
        cmsghdr* cmsg = CMSG_FIRSTHDR(&out);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(cmsg), &passed, sizeof passed);
        checks.expect(::sendmsg(pair[0], &out, 0) == 1, std::string("sendmsg(SCM_RIGHTS): ") + std::strerror(errno));
        alignas(cmsghdr) char received_control[CMSG_SPACE(sizeof(int))] = {};
        msghdr in{};
        in.msg_iov = &data;
        in.msg_iovlen = 1;
        in.msg_control = received_control;
        in.msg_controllen = sizeof received_control;
        const bool got =
            ::recvmsg(pair[1], &in, 0) == 1 && CMSG_FIRSTHDR(&in) && CMSG_FIRSTHDR(&in)->cmsg_type == SCM_RIGHTS;
        checks.expect(got, "recvmsg gets the descriptor");
        checks.expect(::send(pair[0], "y", 1, 0) == 1, "send without an address");
        checks.expect_call_errno(
            "sendto with an address",
            [&] { return ::sendto(pair[0], "z", 1, 0, reinterpret_cast<const sockaddr*>(&address), sizeof address); },
            EPERM);
        message = checks.log;
        return checks.result();
    }));
    EXPECT_FALSE(territory.listener_saw_a_connection());
}

TEST(Sandbox, AbortStillEndsAHardenedWorkerWithSigabrtAndThreadsRun) {
    const Territory territory("abort");
    const ChildOutcome outcome = in_child([&](std::string& message) {
        SandboxReport report = harden_before_load(territory.policy());
        harden_after_load(territory.policy(), report);
        if (step_missing(report, "seccomp stage 2", message) || step_unavailable(report, "landlock", message))
            return kSkip;
        std::atomic<int> ran{0};
        std::thread([&] { ran = 1; }).join();
        if (ran != 1) {
            message = "a std::thread did not run in the hardened process";
            return kFail;
        }
        std::abort();  // rt_sigprocmask and tgkill on itself, through both filters and Landlock's scope
    });
    if (outcome.exit_code == kSkip) GTEST_SKIP() << outcome.message;
    EXPECT_EQ(outcome.signal, SIGABRT) << "exit code " << outcome.exit_code << ": " << outcome.message;
}

// CUDA under both stages: the probe follows the worker's order and runs a JIT-compiled kernel from the
// main thread and from a thread started after stage 2. Exit 77 means no driver or no GPU here.
TEST(Sandbox, CudaWorksInsideTheSandbox) {
    const std::string probe = std::string(KREG_FIXTURE_DIR) + "/sandbox_probe_cuda";
    ASSERT_EQ(::access(probe.c_str(), X_OK), 0) << probe << " was not built";
    auto run = [&](const std::string& policy, std::string& output) {
        FILE* pipe = ::popen((probe + " '" + policy + "' 2>&1").c_str(), "r");
        output.clear();
        if (!pipe) return -1;
        char chunk[4096];
        size_t n;
        while ((n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) output.append(chunk, n);
        return ::pclose(pipe);
    };
    // Without the sandbox first: only a machine where CUDA works at all may skip, so that a sandbox
    // that breaks CUDA fails here instead of passing as "no GPU".
    std::string plain;
    const int plain_status = run(R"({"enabled":false})", plain);
    ASSERT_TRUE(WIFEXITED(plain_status)) << plain;
    if (WEXITSTATUS(plain_status) == kSkip) GTEST_SKIP() << plain;
    ASSERT_EQ(WEXITSTATUS(plain_status), kPass) << "CUDA fails even without the sandbox:\n" << plain;
    std::string output;
    const int status = run("{}", output);
    ASSERT_TRUE(WIFEXITED(status)) << "the probe was killed (status " << status << ")\n" << output;
    EXPECT_EQ(WEXITSTATUS(status), kPass) << "CUDA works here, but not inside the sandbox:\n" << output;
}

}  // namespace
}  // namespace kreg
