// A process's number as the system gives it, in headers that every build compiles: POSIX's pid_t is an int and
// Windows' process id a DWORD, and MSVC has no pid_t at all. One signed 64-bit type holds both (and -1 for "none");
// the POSIX sources convert to pid_t where they call the system.
#pragma once

#include <cstdint>

namespace kreg::platform {

using ProcessId = std::int64_t;

}  // namespace kreg::platform
