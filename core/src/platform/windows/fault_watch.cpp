#include "platform/fault_watch.hpp"

#include <windows.h>

#include <atomic>

namespace kreg::platform {
namespace {

std::atomic<FaultExplainer> g_explain{nullptr};
PVOID g_handler = nullptr;

// First in line for every exception of the process. An access violation in a watched region is
// explained and then left to go on (EXCEPTION_CONTINUE_SEARCH): nothing handles it, and the process
// ends with EXCEPTION_ACCESS_VIOLATION as it would have without the watch.
LONG CALLBACK on_exception(EXCEPTION_POINTERS* pointers) {
    const EXCEPTION_RECORD* record = pointers->ExceptionRecord;
    const FaultExplainer explain = g_explain.load();
    if (explain == nullptr || record->ExceptionCode != EXCEPTION_ACCESS_VIOLATION || record->NumberParameters < 2)
        return EXCEPTION_CONTINUE_SEARCH;
    // ExceptionInformation[0]: 0 read, 1 write, 8 execute (DEP); [1]: the address.
    const ULONG_PTR kind = record->ExceptionInformation[0];
    const FaultAccess access = kind == 1 ? FaultAccess::write : kind == 0 ? FaultAccess::read : FaultAccess::unknown;
    explain(uintptr_t(record->ExceptionInformation[1]), access);
    return EXCEPTION_CONTINUE_SEARCH;
}

LONG WINAPI end_with_the_fault(EXCEPTION_POINTERS* pointers) {
    TerminateProcess(GetCurrentProcess(), UINT(pointers->ExceptionRecord->ExceptionCode));
    return EXCEPTION_EXECUTE_HANDLER;
}

}  // namespace

void end_process_on_unhandled_fault() {
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
    SetUnhandledExceptionFilter(end_with_the_fault);
}

void write_stderr(const char* text) {
    size_t length = 0;
    while (text[length] != '\0') ++length;
    DWORD written = 0;
    WriteFile(GetStdHandle(STD_ERROR_HANDLE), text, DWORD(length), &written, nullptr);
}

void install_fault_explainer(FaultExplainer explain) {
    g_explain = explain;
    g_handler = AddVectoredExceptionHandler(1, on_exception);
}

void remove_fault_explainer() {
    if (g_handler != nullptr) RemoveVectoredExceptionHandler(g_handler);
    g_handler = nullptr;
    g_explain = nullptr;
}

}  // namespace kreg::platform
