#include "platform/fault_watch.hpp"

#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>

namespace kreg::platform {
namespace {

std::atomic<FaultExplainer> g_explain{nullptr};
struct sigaction g_previous_segv, g_previous_bus;
stack_t g_previous_stack;

// 64 KiB of alternate signal stack: a kernel that faults after exhausting its stack is still explained.
alignas(16) unsigned char g_alt_stack[1 << 16];

// x86-64 reports in the page-fault error code whether it was a write.
FaultAccess access_of(void* context) {
#if defined(__x86_64__) && defined(REG_ERR)
    const auto* uc = static_cast<const ucontext_t*>(context);
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0 ? FaultAccess::write : FaultAccess::read;
#else
    (void)context;
    return FaultAccess::unknown;
#endif
}

void on_fault(int signo, siginfo_t* info, void* context) {
    const FaultExplainer explain = g_explain.load();
    if (explain != nullptr && explain(reinterpret_cast<uintptr_t>(info->si_addr), access_of(context))) {
        // Returning re-executes the faulting instruction, which now meets the default action.
        signal(signo, SIG_DFL);
        return;
    }
    // Not ours: the action that was there before takes it, on the same re-execution.
    sigaction(signo, signo == SIGBUS ? &g_previous_bus : &g_previous_segv, nullptr);
    if (info->si_code <= 0) raise(signo);  // sent, not a fault: it would not happen again by itself
}

}  // namespace

void end_process_on_unhandled_fault() {}

void write_stderr(const char* text) {
    size_t length = 0;
    while (text[length] != '\0') ++length;
    while (length > 0) {
        const ssize_t n = write(STDERR_FILENO, text, length);
        if (n <= 0) return;
        text += n;
        length -= size_t(n);
    }
}

void install_fault_explainer(FaultExplainer explain) {
    g_explain = explain;
    stack_t alt{};
    alt.ss_sp = g_alt_stack;
    alt.ss_size = sizeof g_alt_stack;
    sigaltstack(&alt, &g_previous_stack);
    struct sigaction action {};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &g_previous_segv);
    sigaction(SIGBUS, &action, &g_previous_bus);
}

void remove_fault_explainer() {
    sigaction(SIGSEGV, &g_previous_segv, nullptr);
    sigaction(SIGBUS, &g_previous_bus, nullptr);
    g_explain = nullptr;
    if ((g_previous_stack.ss_flags & SS_DISABLE) != 0) {
        stack_t off{};
        off.ss_flags = SS_DISABLE;
        sigaltstack(&off, nullptr);
    } else {
        sigaltstack(&g_previous_stack, nullptr);
    }
}

}  // namespace kreg::platform
