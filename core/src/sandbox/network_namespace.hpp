// A private network namespace for the worker: only a loopback interface, which stays down. As root
// unshare(CLONE_NEWNET) is enough; otherwise a new user namespace comes with it, with the caller's own
// uid and gid mapped so that getuid() and file ownership look unchanged.
#pragma once

#include "sandbox/sandbox.hpp"

namespace kreg {

// Must run before the process stops being dumpable (the id maps of /proc/self would belong to root) and
// before seccomp stage 1 (which denies unshare). Keeps PR_SET_PDEATHSIG, which a new user namespace clears.
void enter_network_namespace(SandboxReport& report);

}  // namespace kreg
