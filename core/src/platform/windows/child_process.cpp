#include "platform/child_process.hpp"

#include "platform/windows/text.hpp"

#include <chrono>
#include <stdexcept>
#include <vector>

namespace kreg::platform {

struct ChildProcess::State {
    HANDLE process = nullptr;
    HANDLE job = nullptr;  // KILL_ON_JOB_CLOSE: closing it ends the child and everything it started
    HANDLE in = nullptr, out = nullptr, err = nullptr;
    DWORD pid = 0;
    std::string out_buffer, err_tail;
    bool killed = false;
    std::optional<ChildExit> exit;
};

namespace {

void close_handle(HANDLE& h) {
    if (h != nullptr && h != INVALID_HANDLE_VALUE) CloseHandle(h);
    h = nullptr;
}

// One argument as the Microsoft C runtime's command-line parser reads it back (CommandLineToArgvW rules):
// quoted when it holds a space, a tab or a quote or is empty; backslashes doubled before a quote.
std::wstring quoted(const std::wstring& arg) {
    if (!arg.empty() && arg.find_first_of(L" \t\"") == std::wstring::npos) return arg;
    std::wstring out = L"\"";
    size_t backslashes = 0;
    for (const wchar_t c : arg) {
        if (c == L'\\') {
            ++backslashes;
            continue;
        }
        out.append(c == L'"' ? 2 * backslashes + 1 : backslashes, L'\\');
        backslashes = 0;
        out += c;
    }
    out.append(2 * backslashes, L'\\');
    return out + L"\"";
}

std::string fault_name(DWORD code) {
    switch (code) {
        case 0xC0000005:
            return "EXCEPTION_ACCESS_VIOLATION";
        case 0xC00000FD:
            return "EXCEPTION_STACK_OVERFLOW";
        case 0xC000001D:
            return "EXCEPTION_ILLEGAL_INSTRUCTION";
        case 0xC0000094:
            return "EXCEPTION_INT_DIVIDE_BY_ZERO";
        case 0xC000008E:
            return "EXCEPTION_FLT_DIVIDE_BY_ZERO";
        case 0xC0000096:
            return "EXCEPTION_PRIV_INSTRUCTION";
        case 0xC0000006:
            return "EXCEPTION_IN_PAGE_ERROR";
        case 0xC0000409:
            return "STATUS_STACK_BUFFER_OVERRUN (a fail-fast, e.g. abort)";
        case 0xC0000017:
            return "STATUS_NO_MEMORY";
        case 0x80000003:
            return "EXCEPTION_BREAKPOINT";
        default:
            break;
    }
    if ((code & 0xF0000000u) == 0xC0000000u) {
        char hex[16];
        snprintf(hex, sizeof(hex), "0x%08lX", static_cast<unsigned long>(code));
        return std::string("exception ") + hex;
    }
    return "";
}

// Reads what is there on pipe without blocking; false once the writer is gone (and nothing is left).
bool read_available(HANDLE pipe, std::string& into) {
    DWORD available = 0;
    if (!PeekNamedPipe(pipe, nullptr, 0, nullptr, &available, nullptr)) return false;
    while (available > 0) {
        char chunk[65536];
        DWORD got = 0;
        if (!ReadFile(pipe, chunk, DWORD(std::min<size_t>(available, sizeof(chunk))), &got, nullptr) || got == 0)
            return false;
        into.append(chunk, got);
        available -= std::min(available, got);
    }
    return true;
}

void keep_tail(std::string& tail) {
    if (tail.size() > kStderrTailBytes) tail.erase(0, tail.size() - kStderrTailBytes);
}

HANDLE make_job(const ChildLimits& limits, const std::string& program) {
    const HANDLE job = CreateJobObjectW(nullptr, nullptr);
    if (job == nullptr)
        throw std::runtime_error("cannot start '" + program +
                                 "': CreateJobObject: " + windows::error_text(GetLastError()));
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION info{};
    // KILL_ON_JOB_CLOSE: the runner dying takes its workers along. DIE_ON_UNHANDLED_EXCEPTION: a crash
    // ends the process at once instead of waiting on an error-report dialog.
    info.BasicLimitInformation.LimitFlags =
        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
    if (limits.memory_bytes > 0) {
        info.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_MEMORY;
        info.JobMemoryLimit = SIZE_T(limits.memory_bytes);
    }
    if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &info, sizeof(info))) {
        const DWORD error = GetLastError();
        CloseHandle(job);
        throw std::runtime_error("cannot start '" + program + "': the job's limits: " + windows::error_text(error));
    }
    return job;
}

}  // namespace

ChildProcess::ChildProcess() = default;
ChildProcess::ChildProcess(std::unique_ptr<State> state) : state_(std::move(state)) {}
ChildProcess::ChildProcess(ChildProcess&& other) noexcept = default;
ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        if (state_ && !state_->exit) {
            kill_tree();
            wait();
        }
        state_ = std::move(other.state_);
    }
    return *this;
}
ChildProcess::~ChildProcess() {
    if (state_ && !state_->exit) {
        kill_tree();
        wait();
    }
}

ChildProcess ChildProcess::start(const std::filesystem::path& exe, const std::vector<std::string>& args,
                                 const ChildLimits& limits) {
    const std::string program = exe.string();
    auto state = std::make_unique<State>();
    // The child's ends are inheritable, the parent's are not.
    SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
    HANDLE child_in = nullptr, child_out = nullptr, child_err = nullptr;
    if (!CreatePipe(&child_in, &state->in, &inherit, 0) || !CreatePipe(&state->out, &child_out, &inherit, 0) ||
        !CreatePipe(&state->err, &child_err, &inherit, 0))
        throw std::runtime_error("cannot start '" + program + "': pipes: " + windows::error_text(GetLastError()));
    SetHandleInformation(state->in, HANDLE_FLAG_INHERIT, 0);
    SetHandleInformation(state->out, HANDLE_FLAG_INHERIT, 0);
    SetHandleInformation(state->err, HANDLE_FLAG_INHERIT, 0);

    std::wstring command_line = quoted(exe.wstring());
    for (const std::string& a : args) command_line += L" " + quoted(windows::widen(a));
    // The child inherits its three pipe ends and nothing else (PROC_THREAD_ATTRIBUTE_HANDLE_LIST): without the
    // list it would get every inheritable handle of this process, the runner's own stdout among them, and a
    // process it leaves behind would hold that open.
    HANDLE inherited[3] = {child_in, child_out, child_err};
    SIZE_T list_bytes = 0;
    InitializeProcThreadAttributeList(nullptr, 1, 0, &list_bytes);
    std::vector<unsigned char> list_storage(list_bytes);
    auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(list_storage.data());
    if (!InitializeProcThreadAttributeList(attributes, 1, 0, &list_bytes) ||
        !UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited, sizeof(inherited),
                                   nullptr, nullptr))
        throw std::runtime_error("cannot start '" + program +
                                 "': its handle list: " + windows::error_text(GetLastError()));
    STARTUPINFOEXW startup{};
    startup.StartupInfo.cb = sizeof(startup);
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    startup.StartupInfo.hStdInput = child_in;
    startup.StartupInfo.hStdOutput = child_out;
    startup.StartupInfo.hStdError = child_err;
    startup.lpAttributeList = attributes;
    PROCESS_INFORMATION info{};
    // No error dialog for a crash or a missing DLL: the child inherits this error mode.
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
    const BOOL created = CreateProcessW(exe.c_str(), command_line.data(), nullptr, nullptr, TRUE,
                                        CREATE_SUSPENDED | CREATE_NO_WINDOW | EXTENDED_STARTUPINFO_PRESENT, nullptr,
                                        nullptr, &startup.StartupInfo, &info);
    const DWORD create_error = GetLastError();
    DeleteProcThreadAttributeList(attributes);
    CloseHandle(child_in);
    CloseHandle(child_out);
    CloseHandle(child_err);
    if (!created) throw std::runtime_error("cannot start '" + program + "': " + windows::error_text(create_error));
    state->process = info.hProcess;
    state->pid = info.dwProcessId;
    try {
        state->job = make_job(limits, program);
    } catch (...) {
        TerminateProcess(info.hProcess, 1);
        CloseHandle(info.hThread);
        throw;
    }
    // In the job before it runs a single instruction, so whatever it starts is in the job too.
    if (!AssignProcessToJobObject(state->job, info.hProcess)) {
        const DWORD error = GetLastError();
        TerminateProcess(info.hProcess, 1);
        CloseHandle(info.hThread);
        throw std::runtime_error("cannot start '" + program + "': its job: " + windows::error_text(error));
    }
    ResumeThread(info.hThread);
    CloseHandle(info.hThread);
    return ChildProcess(std::move(state));
}

bool ChildProcess::write_line(std::string_view line) {
    if (!state_ || state_->in == nullptr) return false;
    std::string text(line);
    text += '\n';
    std::string_view left = text;
    while (!left.empty()) {
        DWORD written = 0;
        if (!WriteFile(state_->in, left.data(), DWORD(left.size()), &written, nullptr) || written == 0) return false;
        left.remove_prefix(written);
    }
    return true;
}

// Anonymous pipes cannot be waited on with a timeout, so the wait polls: PeekNamedPipe on both pipes, then
// a short sleep (1 ms at first, up to 10 ms while nothing comes).
ChildProcess::Read ChildProcess::read_line(std::string& line, double timeout_s) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::duration<double>(timeout_s);
    State& s = *state_;
    DWORD nap_ms = 1;
    for (;;) {
        const size_t newline = s.out_buffer.find('\n');
        if (newline != std::string::npos) {
            line = s.out_buffer.substr(0, newline);
            s.out_buffer.erase(0, newline + 1);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            return line.size() > kMaxChildLineBytes ? Read::too_long : Read::line;
        }
        if (s.out_buffer.size() > kMaxChildLineBytes) return Read::too_long;
        if (s.out == nullptr) return Read::closed;
        const size_t before = s.out_buffer.size() + s.err_tail.size();
        if (s.err != nullptr && !read_available(s.err, s.err_tail)) close_handle(s.err);
        keep_tail(s.err_tail);
        if (!read_available(s.out, s.out_buffer)) close_handle(s.out);
        if (s.out_buffer.size() + s.err_tail.size() != before || s.out == nullptr) {
            nap_ms = 1;
            continue;
        }
        if (clock::now() >= deadline) return Read::timed_out;
        Sleep(nap_ms);
        nap_ms = std::min<DWORD>(nap_ms * 2, 10);
    }
}

void ChildProcess::kill_tree() {
    if (!state_ || state_->exit || state_->job == nullptr) return;
    TerminateJobObject(state_->job, 1);
    state_->killed = true;
}

ChildExit ChildProcess::wait() {
    State& s = *state_;
    if (s.exit) return *s.exit;
    close_handle(s.in);
    WaitForSingleObject(s.process, INFINITE);
    DWORD code = 0;
    GetExitCodeProcess(s.process, &code);
    if (s.err != nullptr) read_available(s.err, s.err_tail);
    keep_tail(s.err_tail);
    ChildExit exit;
    exit.killed = s.killed;
    if (!s.killed) {
        exit.exit_code = int(code);
        exit.fault = fault_name(code);
    }
    close_handle(s.out);
    close_handle(s.err);
    close_handle(s.process);
    close_handle(s.job);  // anything the child left running goes with the job
    s.exit = exit;
    return exit;
}

long ChildProcess::pid() const { return state_ ? long(state_->pid) : -1; }

std::string ChildProcess::stderr_tail() const { return state_ ? state_->err_tail : std::string(); }

}  // namespace kreg::platform
