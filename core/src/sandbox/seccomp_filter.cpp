#include "sandbox/seccomp_filter.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <vector>

#if defined(__x86_64__) && !defined(__ILP32__)
#define KREG_SECCOMP_X86_64 1
#endif

namespace kreg {

#ifdef KREG_SECCOMP_X86_64
namespace {

// The syscall number bit of the x32 ABI: x32 calls arrive with AUDIT_ARCH_X86_64 and nr | this bit, so
// a filter that only compares numbers would miss them. No legitimate x86_64 code uses them: deny all.
constexpr uint32_t kX32SyscallBit = 0x40000000u;

constexpr uint32_t kNamespaceCloneFlags =
    CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP;
// CLONE_PARENT makes the new process a child of the runner, which would reap (and count) a stranger.
constexpr uint32_t kStage1DeniedCloneFlags = kNamespaceCloneFlags | CLONE_PARENT;

// The low 32 bits of argument i (x86_64 is little-endian); the kernel reads flags and domains as int.
constexpr uint32_t arg_low(int i) { return uint32_t(offsetof(seccomp_data, args) + 8 * i); }
constexpr uint32_t arg_high(int i) { return arg_low(i) + 4; }

// Stage 1: calls that reach outside the process (other processes, the kernel, the host's mounts and
// namespaces, the network) or undo the other steps (raising rlimits, becoming dumpable again).
const int kStage1Denied[] = {
    __NR_ptrace,
    __NR_process_vm_readv,
    __NR_process_vm_writev,
    __NR_pidfd_getfd,
    __NR_process_madvise,
    __NR_mount,
    __NR_umount2,
    __NR_pivot_root,
    __NR_chroot,
    __NR_fsopen,
    __NR_fsconfig,
    __NR_fsmount,
    __NR_fspick,
    __NR_move_mount,
    __NR_open_tree,
    __NR_mount_setattr,
    __NR_open_by_handle_at,
    __NR_unshare,
    __NR_setns,
    __NR_bpf,
    __NR_perf_event_open,
    __NR_userfaultfd,
    __NR_kexec_load,
    __NR_kexec_file_load,
    __NR_init_module,
    __NR_finit_module,
    __NR_delete_module,
    __NR_reboot,
    __NR_swapon,
    __NR_swapoff,
    __NR_acct,
    __NR_quotactl,
    __NR_syslog,
    __NR_iopl,
    __NR_ioperm,
    __NR_settimeofday,
    __NR_clock_settime,
    __NR_sethostname,
    __NR_setdomainname,
    __NR_keyctl,
    __NR_add_key,
    __NR_request_key,
    // io_uring executes socket, open and other operations without passing through this filter.
    __NR_io_uring_setup,
    __NR_io_uring_enter,
    __NR_io_uring_register,
    __NR_setrlimit,
    // Staying in the worker's process group is what lets the runner kill everything a plugin started.
    __NR_setsid,
    __NR_setpgid,
    // Signals to other processes: see the kill rule below; these cannot be checked by pid (a pidfd
    // names its process by descriptor, so pidfd_open goes too). mq_notify and fanotify (CAP_SYS_ADMIN,
    // which a root worker has) would let the plugin be notified of, or hold up, what others do.
    __NR_tkill,
    __NR_pidfd_send_signal,
    __NR_pidfd_open,
    __NR_mq_notify,
    __NR_fanotify_init,
    // Compares the open files and memory of two processes: a probe into the runner.
    __NR_kcmp,
    // Reaching a service through a pathname Unix socket (D-Bus, systemd, nscd, a grader's own socket):
    // the network namespace does not separate those. The worker's channel to the runner is a socketpair
    // inherited connected. Also the connect of the CUDA driver's MPS client (/tmp/nvidia-mps/control),
    // which then sees EPERM instead of ENOENT: CUDA's context is created after this stage, check it there.
    __NR_connect,
};

const int kStage2Denied[] = {__NR_fork, __NR_vfork, __NR_execve, __NR_execveat};

class BpfProgram {
public:
    explicit BpfProgram(uint32_t violation) : violation_(violation) {}

    void stmt(uint16_t code, uint32_t k) { code_.push_back(BPF_STMT(code, k)); }
    void jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { code_.push_back(BPF_JUMP(code, k, jt, jf)); }
    void ret(uint32_t action) { stmt(BPF_RET | BPF_K, action); }
    void deny() { ret(violation_); }
    void allow() { ret(SECCOMP_RET_ALLOW); }
    void load(uint32_t offset) { stmt(BPF_LD | BPF_W | BPF_ABS, offset); }

    // Every filter starts the same way: a foreign architecture (i386 through int 0x80) and the x32 ABI
    // are violations; afterwards the accumulator holds the syscall number.
    void prologue() {
        load(offsetof(seccomp_data, arch));
        jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
        deny();
        load(offsetof(seccomp_data, nr));
        jump(BPF_JMP | BPF_JGE | BPF_K, kX32SyscallBit, 0, 1);
        deny();
    }
    // With the syscall number in the accumulator.
    void return_for(int nr, uint32_t action) {
        jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, 1);
        ret(action);
    }
    // Starts a block for one syscall that ends in returns on every path; the block is `length`
    // instructions long and may overwrite the accumulator.
    void begin_block(int nr, uint8_t length) { jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, length); }

    sock_fprog fprog() { return {static_cast<unsigned short>(code_.size()), code_.data()}; }

private:
    uint32_t violation_;
    std::vector<sock_filter> code_;
};

// nr(..., arg pid_arg, ...) only on this process: pid 0 or own_pid. When which_arg >= 0, that argument
// must also equal which_value (the "a process, not a group or a user" selector of setpriority and
// ioprio_set). Thread ids other than the main thread's are refused too: the filter cannot tell them apart
// from another process's pid, and nothing the worker runs is known to need them.
void only_own_process(BpfProgram& p, uint32_t violation, uint32_t own_pid, int nr, int pid_arg, int which_arg = -1,
                      uint32_t which_value = 0) {
    const bool which = which_arg >= 0;
    p.begin_block(nr, which ? 7 : 5);
    if (which) {
        p.load(arg_low(which_arg));
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, which_value, 0, 3);
    }
    p.load(arg_low(pid_arg));
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0);
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, own_pid, 1, 0);
    p.ret(violation);
    p.allow();
}

// nr(...) with one of values in argument arg (compared as the kernel's 32-bit unsigned int) is denied.
void deny_values(BpfProgram& p, int nr, int arg, const std::vector<uint32_t>& values) {
    const uint8_t n = uint8_t(values.size());
    p.begin_block(nr, uint8_t(n + 3));
    p.load(arg_low(arg));
    for (uint8_t i = 1; i <= n; ++i) p.jump(BPF_JMP | BPF_JEQ | BPF_K, values[i - 1], uint8_t(n + 1 - i), 0);
    p.allow();
    p.deny();
}

// nr(...) with a non-NULL pointer in argument arg is denied.
void deny_unless_null(BpfProgram& p, int nr, int arg) {
    p.begin_block(nr, 6);
    p.load(arg_low(arg));
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3);
    p.load(arg_high(arg));
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
    p.allow();
    p.deny();
}

// socket(domain, type, ...) and socketpair(...): AF_UNIX, and only SOCK_STREAM or SOCK_SEQPACKET. A
// datagram socket (SOCK_DGRAM, or SOCK_RAW, which AF_UNIX turns into one) can sendmsg to any pathname
// socket through msg_name, which lives in memory the filter cannot read; connection-oriented ones refuse
// an address on send (EISCONN, EOPNOTSUPP, or ignore it), and connect is denied.
void only_unix_streams(BpfProgram& p, int nr) {
    p.begin_block(nr, 8);
    p.load(arg_low(0));
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 5);
    p.load(arg_low(1));
    p.stmt(BPF_ALU | BPF_AND | BPF_K, 0xf);  // the kernel's SOCK_TYPE_MASK; the rest is NONBLOCK/CLOEXEC
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 1, 0);
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, SOCK_SEQPACKET, 0, 1);
    p.allow();
    p.deny();
}

// The facilities that make the kernel signal a process the caller names, other than kill and friends:
// fcntl F_SETOWN/F_SETOWN_EX (SIGIO/SIGURG to any pid or group), F_SETSIG, F_SETLEASE (also holds up
// another process's open), F_NOTIFY, and O_ASYNC through F_SETFL; and their ioctl twins plus the
// terminal ones (TIOCSTI and TIOCLINUX type into a terminal, TIOCSIG signals a pty's foreground group,
// TIOCSPGRP/TIOCCONS/TIOCSETD/TIOCVHANGUP take a terminal over). Only these request numbers: CUDA
// lives on ioctl (/dev/nvidia*), whose requests are all 'F' (0x46) type numbers.
void no_signal_ownership(BpfProgram& p) {
    p.begin_block(__NR_fcntl, 11);
    p.load(arg_low(1));
    const uint32_t owner_commands[] = {F_SETOWN, F_SETOWN_EX, F_SETSIG, F_SETLEASE, F_NOTIFY};
    for (uint8_t i = 1; i <= 5; ++i) p.jump(BPF_JMP | BPF_JEQ | BPF_K, owner_commands[i - 1], uint8_t(9 - i), 0);
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, F_SETFL, 0, 2);
    p.load(arg_low(2));
    p.jump(BPF_JMP | BPF_JSET | BPF_K, O_ASYNC, 1, 0);
    p.allow();
    p.deny();
    deny_values(p, __NR_ioctl, 1,
                {FIOSETOWN, SIOCSPGRP, FIOASYNC, TIOCSPGRP, TIOCSTI, TIOCCONS, TIOCLINUX, TIOCSETD, uint32_t(TIOCSIG),
                 TIOCVHANGUP});
}

// Signals only to this process (or its own group): a worker running as root could otherwise kill the
// runner, other workers or, with kill(-1, ...), every process on the machine. Signal 0 (an existence
// check) goes anywhere. own_pid is the worker's, read when the filter is built.
void only_own_signals(BpfProgram& p, uint32_t violation, uint32_t own_pid) {
    const uint32_t own_group = uint32_t(-int32_t(own_pid));
    p.begin_block(__NR_kill, 8);  // kill(pid, sig)
    p.load(arg_low(1));
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0);
    p.load(arg_low(0));
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0);
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, own_pid, 2, 0);
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, own_group, 1, 0);
    p.ret(violation);
    p.allow();
    // tgkill(tgid, tid, sig), rt_sigqueueinfo(tgid, ...), rt_tgsigqueueinfo(tgid, tid, ...)
    for (int nr : {__NR_tgkill, __NR_rt_sigqueueinfo, __NR_rt_tgsigqueueinfo}) {
        p.begin_block(nr, 4);
        p.load(arg_low(0));
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, own_pid, 0, 1);
        p.allow();
        p.ret(violation);
    }
}

BpfProgram build_filter(FilterStage stage, uint32_t violation, bool fixed_affinity) {
    BpfProgram p(violation);
    p.prologue();
    // Before the own-process rule below: with a fixed affinity not even the worker's own threads may move.
    if (stage == FilterStage::before_load && fixed_affinity) p.return_for(__NR_sched_setaffinity, violation);
    // clone3 passes its flags in memory the filter cannot read; ENOSYS makes glibc fall back to clone.
    p.return_for(__NR_clone3, SECCOMP_RET_ERRNO | ENOSYS);
    if (stage == FilterStage::before_load) {
        for (int nr : kStage1Denied) p.return_for(nr, violation);
        only_unix_streams(p, __NR_socket);
        only_unix_streams(p, __NR_socketpair);
        // sendto(fd, buf, len, flags, dest_addr, addrlen): no destination of its own (connect is denied).
        deny_unless_null(p, __NR_sendto, 4);
        // clone(flags, ...): no new namespaces (unshare is denied above, this is the same door).
        p.begin_block(__NR_clone, 4);
        p.load(arg_low(0));
        p.jump(BPF_JMP | BPF_JSET | BPF_K, kStage1DeniedCloneFlags, 0, 1);
        p.deny();
        p.allow();
        // prlimit64(pid, resource, new_limit, old_limit): of this process only; reading is fine, setting is not.
        const uint32_t own_pid = uint32_t(::getpid());
        p.begin_block(__NR_prlimit64, 10);
        p.load(arg_low(0));
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0);
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, own_pid, 1, 0);
        p.deny();
        p.load(arg_low(2));
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3);
        p.load(arg_high(2));
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
        p.allow();
        p.deny();
        // prctl(PR_SET_DUMPABLE, ...) would undo the dumpable step.
        p.begin_block(__NR_prctl, 4);
        p.load(arg_low(0));
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_DUMPABLE, 0, 1);
        p.deny();
        p.allow();
        only_own_signals(p, violation, own_pid);
        no_signal_ownership(p);
        // Scheduling, I/O priority, affinity and memory placement of other processes: a root worker could
        // starve or pin the runner or a neighbour being measured.
        only_own_process(p, violation, own_pid, __NR_setpriority, 1, 0, PRIO_PROCESS);
        only_own_process(p, violation, own_pid, __NR_ioprio_set, 1, 0, IOPRIO_WHO_PROCESS);
        for (int nr : {__NR_sched_setaffinity, __NR_sched_setscheduler, __NR_sched_setparam, __NR_sched_setattr,
                       __NR_migrate_pages, __NR_move_pages, __NR_get_robust_list})
            only_own_process(p, violation, own_pid, nr, 0);
    } else {
        for (int nr : kStage2Denied) p.return_for(nr, violation);
        // clone(flags, ...): threads (CLONE_THREAD) only; CUDA and std::thread need them.
        p.begin_block(__NR_clone, 4);
        p.load(arg_low(0));
        p.jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
        p.allow();
        p.deny();
    }
    p.allow();
    return p;
}

long seccomp_call(unsigned operation, unsigned flags, void* args) {
    return ::syscall(__NR_seccomp, operation, flags, args);
}

// SECCOMP_RET_KILL_PROCESS is Linux 4.14; before it only the offending thread could be killed.
uint32_t kill_action(std::string& note) {
    uint32_t action = SECCOMP_RET_KILL_PROCESS;
    if (seccomp_call(SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0) return SECCOMP_RET_KILL_PROCESS;
    note = " (SECCOMP_RET_KILL_PROCESS unavailable: kills the calling thread only)";
    return SECCOMP_RET_KILL_THREAD;
}

std::string describe(FilterStage stage, const std::string& action) {
    if (stage == FilterStage::before_load)
        return std::to_string(std::size(kStage1Denied)) +
               " syscalls (ptrace, process_vm_*, mounts, unshare/setns, bpf, perf_event_open, modules, kexec, "
               "reboot, swap, keyrings, userfaultfd, io_uring, setrlimit, pidfd_open, kcmp, mq_notify, "
               "fanotify_init, connect, ...), socket() and socketpair() other than AF_UNIX stream/seqpacket, "
               "sendto() with an address, clone() with namespace flags or CLONE_PARENT, prlimit64() setting a "
               "limit or naming another process, prctl(PR_SET_DUMPABLE), setsid, setpgid, signals to other "
               "processes, fcntl() F_SETOWN/F_SETOWN_EX/F_SETSIG/F_SETLEASE/F_NOTIFY/O_ASYNC, ioctl() "
               "FIOSETOWN/SIOCSPGRP/FIOASYNC/TIOCSPGRP/TIOCSTI/TIOCCONS/TIOCLINUX/TIOCSETD/TIOCSIG/TIOCVHANGUP, "
               "setpriority/ioprio_set/sched_set*/migrate_pages/move_pages/get_robust_list on another process -> " +
               action + "; clone3 -> ENOSYS; i386 and x32 syscalls -> " + action;
    return "fork, vfork, execve, execveat, clone() without CLONE_THREAD -> " + action +
           "; clone3 -> ENOSYS; i386 and x32 syscalls -> " + action;
}

}  // namespace

FilterOutcome install_seccomp_filter(FilterStage stage, bool kill_on_violation, bool fixed_affinity) {
    FilterOutcome out;
    std::string note;
    const uint32_t violation = kill_on_violation ? kill_action(note) : (SECCOMP_RET_ERRNO | EPERM);
    const std::string action = (kill_on_violation ? "SIGSYS" : "EPERM") + note;
    BpfProgram program = build_filter(stage, violation, fixed_affinity);
    sock_fprog prog = program.fprog();
    const std::string affinity = stage == FilterStage::before_load && fixed_affinity
                                     ? "; sched_setaffinity of any thread, its own included -> " + action
                                     : "";

    const long r = seccomp_call(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    if (r == 0) {
        out.installed = true;
        out.detail = describe(stage, action) + affinity + "; all threads";
        return out;
    }
    if (r > 0) {  // the id of a thread that cannot be synchronised (it runs another filter)
        out.detail = "seccomp(SECCOMP_FILTER_FLAG_TSYNC): thread " + std::to_string(r) + " has a different filter";
        return out;
    }
    if (errno != ENOSYS) {
        out.detail = std::string("seccomp(SECCOMP_SET_MODE_FILTER): ") + std::strerror(errno);
        return out;
    }
    // Linux < 3.17: no seccomp() and no TSYNC. Threads started before this call are not covered.
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
        out.detail = std::string("prctl(PR_SET_SECCOMP): ") + std::strerror(errno);
        return out;
    }
    out.installed = true;
    out.detail =
        describe(stage, action) + affinity + "; calling thread and its future threads only (no seccomp() syscall)";
    return out;
}

#else  // not x86_64

FilterOutcome install_seccomp_filter(FilterStage, bool, bool) {
    return {false, "no filter is written for this architecture (only x86_64, AUDIT_ARCH_X86_64)"};
}

#endif

}  // namespace kreg
