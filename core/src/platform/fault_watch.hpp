// Explaining a memory fault before it ends the process (measure/guard_pages.hpp): POSIX, SIGSEGV and
// SIGBUS handlers on an alternate stack; Windows, a vectored exception handler for access violations.
#pragma once

#include <cstdint>

namespace kreg::platform {

enum class FaultAccess { read, write, unknown };

// Runs in the fault's context (a signal handler, or a vectored exception handler): it may only read
// atomics and call write_stderr. true: the fault was explained, and the process dies of it as it would
// have without the watch; false: not one of the caller's, handed to what was there before.
using FaultExplainer = bool (*)(uintptr_t address, FaultAccess access);

// One explainer at a time; install replaces nothing (the caller guarantees a single watch), remove puts
// back what was there before install.
void install_fault_explainer(FaultExplainer explain);
void remove_fault_explainer();

// For a worker: a fault this process does not handle ends it at once, with the fault as its end (POSIX:
// the default action already does; Windows: an unhandled-exception filter that terminates the process with
// the exception's code, before any error report or debugger, which wine would otherwise start and wait in).
void end_process_on_unhandled_fault();

// Writes text to stderr with the one system call that is safe in a fault handler.
void write_stderr(const char* text);

}  // namespace kreg::platform
