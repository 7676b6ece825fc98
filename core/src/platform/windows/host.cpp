#include "platform/host.hpp"

#include "platform/windows/text.hpp"

namespace kreg::platform {

std::string host_name() {
    wchar_t name[MAX_COMPUTERNAME_LENGTH + 1] = {};
    DWORD size = MAX_COMPUTERNAME_LENGTH + 1;
    if (!GetComputerNameW(name, &size) || size == 0) return "unknown";
    return windows::narrow(std::wstring_view(name, size));
}

// RtlGetVersion tells the truth where GetVersionEx answers what the program's manifest asked for.
std::string os_description() {
    using RtlGetVersion = LONG(WINAPI*)(OSVERSIONINFOW*);
    OSVERSIONINFOW version{};
    version.dwOSVersionInfoSize = sizeof(version);
    const HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    const auto get =
        ntdll ? reinterpret_cast<RtlGetVersion>(reinterpret_cast<void*>(GetProcAddress(ntdll, "RtlGetVersion")))
              : nullptr;
    if (get == nullptr || get(&version) != 0) return "Windows";
    SYSTEM_INFO info;
    GetNativeSystemInfo(&info);
    const char* machine = info.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_AMD64   ? "x86_64"
                          : info.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "aarch64"
                                                                                        : "unknown";
    return "Windows " + std::to_string(version.dwMajorVersion) + "." + std::to_string(version.dwMinorVersion) + "." +
           std::to_string(version.dwBuildNumber) + " " + machine;
}

std::string cpu_model() {
    wchar_t name[256] = {};
    DWORD bytes = sizeof(name) - sizeof(wchar_t);
    if (RegGetValueW(HKEY_LOCAL_MACHINE, L"HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0", L"ProcessorNameString",
                     RRF_RT_REG_SZ, nullptr, name, &bytes) != ERROR_SUCCESS)
        return "unknown";
    std::string model = windows::narrow(name);
    const auto first = model.find_first_not_of(' ');
    return first == std::string::npos ? "unknown" : model.substr(first, model.find_last_not_of(' ') - first + 1);
}

long logical_cpus() { return long(GetActiveProcessorCount(ALL_PROCESSOR_GROUPS)); }

std::tm utc_calendar(std::time_t when) {
    std::tm utc{};
    gmtime_s(&utc, &when);
    return utc;
}

long process_id() { return long(GetCurrentProcessId()); }

std::filesystem::path executable_path() {
    std::wstring name(MAX_PATH, L'\0');
    for (;;) {
        const DWORD n = GetModuleFileNameW(nullptr, name.data(), DWORD(name.size()));
        if (n == 0) return {};
        if (n < name.size()) return std::filesystem::path(name.substr(0, n));
        name.resize(name.size() * 2);
    }
}

bool process_running(long pid) {
    const HANDLE process = OpenProcess(SYNCHRONIZE, FALSE, DWORD(pid));
    if (process == nullptr) return false;
    const bool running = WaitForSingleObject(process, 0) == WAIT_TIMEOUT;
    CloseHandle(process);
    return running;
}

uint64_t data_limit_bytes() { return 0; }

bool running_as_root() { return false; }

void forbid_inspection() {}

void ignore_broken_pipes() {}

}  // namespace kreg::platform
