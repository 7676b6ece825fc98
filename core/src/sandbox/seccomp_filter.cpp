#include "sandbox/seccomp_filter.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
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

constexpr uint32_t kNamespaceCloneFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                          CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP;

// The low 32 bits of argument i (x86_64 is little-endian); the kernel reads flags and domains as int.
constexpr uint32_t arg_low(int i) { return uint32_t(offsetof(seccomp_data, args) + 8 * i); }
constexpr uint32_t arg_high(int i) { return arg_low(i) + 4; }

// Stage 1: calls that reach outside the process (other processes, the kernel, the host's mounts and
// namespaces, the network) or undo the other steps (raising rlimits, becoming dumpable again).
const int kStage1Denied[] = {
    __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_pidfd_getfd, __NR_process_madvise,
    __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_fsopen, __NR_fsconfig, __NR_fsmount,
    __NR_fspick, __NR_move_mount, __NR_open_tree, __NR_mount_setattr, __NR_open_by_handle_at,
    __NR_unshare, __NR_setns,
    __NR_bpf, __NR_perf_event_open, __NR_userfaultfd,
    __NR_kexec_load, __NR_kexec_file_load, __NR_init_module, __NR_finit_module, __NR_delete_module,
    __NR_reboot, __NR_swapon, __NR_swapoff, __NR_acct, __NR_quotactl, __NR_syslog, __NR_iopl, __NR_ioperm,
    __NR_settimeofday, __NR_clock_settime, __NR_sethostname, __NR_setdomainname,
    __NR_keyctl, __NR_add_key, __NR_request_key,
    // io_uring executes socket, open and other operations without passing through this filter.
    __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
    __NR_setrlimit,
    // Staying in the worker's process group is what lets the runner kill everything a plugin started.
    __NR_setsid, __NR_setpgid,
    // Signals to other processes: see the kill rule below; these two cannot be checked by pid.
    __NR_tkill, __NR_pidfd_send_signal,
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

BpfProgram build_filter(FilterStage stage, uint32_t violation) {
    BpfProgram p(violation);
    p.prologue();
    // clone3 passes its flags in memory the filter cannot read; ENOSYS makes glibc fall back to clone.
    p.return_for(__NR_clone3, SECCOMP_RET_ERRNO | ENOSYS);
    if (stage == FilterStage::before_load) {
        for (int nr : kStage1Denied) p.return_for(nr, violation);
        // socket(domain, ...): only AF_UNIX (socketpair is left alone, it only makes AF_UNIX pairs).
        p.begin_block(__NR_socket, 4);
        p.load(arg_low(0));
        p.jump(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
        p.allow();
        p.deny();
        // clone(flags, ...): no new namespaces (unshare is denied above, this is the same door).
        p.begin_block(__NR_clone, 4);
        p.load(arg_low(0));
        p.jump(BPF_JMP | BPF_JSET | BPF_K, kNamespaceCloneFlags, 0, 1);
        p.deny();
        p.allow();
        // prlimit64(pid, resource, new_limit, old_limit): reading is fine, setting is not.
        p.begin_block(__NR_prlimit64, 6);
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
        only_own_signals(p, violation, uint32_t(::getpid()));
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

long seccomp_call(unsigned operation, unsigned flags, void* args) { return ::syscall(__NR_seccomp, operation, flags, args); }

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
               "reboot, swap, keyrings, userfaultfd, io_uring, setrlimit, ...), socket() other than AF_UNIX, "
               "clone() with namespace flags, prlimit64() setting a limit, prctl(PR_SET_DUMPABLE), setsid, setpgid, "
               "signals to other processes -> " +
               action + "; clone3 -> ENOSYS; i386 and x32 syscalls -> " + action;
    return "fork, vfork, execve, execveat, clone() without CLONE_THREAD -> " + action +
           "; clone3 -> ENOSYS; i386 and x32 syscalls -> " + action;
}

}  // namespace

FilterOutcome install_seccomp_filter(FilterStage stage, bool kill_on_violation) {
    FilterOutcome out;
    std::string note;
    const uint32_t violation = kill_on_violation ? kill_action(note) : (SECCOMP_RET_ERRNO | EPERM);
    const std::string action = (kill_on_violation ? "SIGSYS" : "EPERM") + note;
    BpfProgram program = build_filter(stage, violation);
    sock_fprog prog = program.fprog();

    const long r = seccomp_call(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    if (r == 0) {
        out.installed = true;
        out.detail = describe(stage, action) + "; all threads";
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
    out.detail = describe(stage, action) + "; calling thread and its future threads only (no seccomp() syscall)";
    return out;
}

#else  // not x86_64

FilterOutcome install_seccomp_filter(FilterStage, bool) {
    return {false, "no filter is written for this architecture (only x86_64, AUDIT_ARCH_X86_64)"};
}

#endif

}  // namespace kreg
