// The file system a sandboxed process may see, enforced by the kernel's Landlock LSM (Linux >= 5.13,
// `man 7 landlock`): no root and no mount namespace needed, and a raw syscall cannot go around it.
//
//   read (files, folders, execute)   beneath the system folders that exist: /usr /lib /lib32 /lib64
//                                     /libx32 /bin /sbin /etc /opt /proc /sys; and each of
//                                     policy.readable_paths (a file gets only read and execute)
//   list only                         /dev (its entries; not the files beneath it, so no raw disks, no
//                                     /dev/shm, no terminals)
//   read, write, ioctl                the device files /dev/null /dev/zero /dev/full /dev/random
//                                     /dev/urandom, every /dev/nvidia* character device and those one
//                                     level below a /dev/nvidia* folder (/dev/nvidia-caps/...)
//   everything                        beneath policy.scratch_dir ("" : nowhere)
//
// Everything else (/tmp, /home, /root, /run, /var, /dev/shm, the repository) is out of reach. Beyond the
// file system, on ABI >= 4 every TCP bind and connect is denied, and on ABI >= 6 the process can neither
// signal nor connect to an abstract Unix socket of a process outside its Landlock domain (the runner,
// the grader, anything on the machine).
//
// Landlock restricts the calling thread and the threads and children it starts afterwards, never threads
// that already exist (ABI < 8 has no TSYNC); the applied text says how many other threads were left out.
#pragma once

#include <string>

#include "sandbox/sandbox.hpp"

namespace kreg {

struct LandlockOutcome {
    bool applied = false;
    int abi = 0;         // the kernel's Landlock ABI version; 0 when there is none
    std::string detail;  // "ABI 7, read-only: ..., writable: <scratch>", or why nothing was applied
};

// Restricts the calling thread (and what it starts later) by policy.scratch_dir and
// policy.readable_paths; ignores policy.landlock and policy.enabled, which are the caller's to check.
// Needs no_new_privs (or CAP_SYS_ADMIN). Uses only the policy, so it suits a forked child before exec
// (a sandboxed build passes its build folder as scratch_dir). Irreversible when applied.
LandlockOutcome apply_landlock(const SandboxPolicy& policy);

// The highest Landlock ABI the running kernel supports; 0 when Landlock is missing or disabled.
int landlock_abi();

}  // namespace kreg
