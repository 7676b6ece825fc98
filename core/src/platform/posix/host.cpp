#include "platform/host.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string_view>

namespace kreg::platform {
namespace {

std::string trimmed(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return "";
    return std::string(s.substr(first, s.find_last_not_of(" \t\r") - first + 1));
}

}  // namespace

// x86 names the CPU in "model name"; other architectures use other keys, tried in this order.
std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line, fallback;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = trimmed(std::string_view(line).substr(0, colon));
        const std::string value = trimmed(std::string_view(line).substr(colon + 1));
        if (value.empty()) continue;
        if (key == "model name") return value;
        if (fallback.empty() && (key == "Hardware" || key == "Processor" || key == "cpu model" || key == "cpu"))
            fallback = value;
    }
    return fallback.empty() ? "unknown" : fallback;
}

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "unknown";
    return name;
}

std::string os_description() {
    utsname u{};
    if (uname(&u) != 0) return "unknown";
    return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

long logical_cpus() {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? cpus : 0;
}

std::tm utc_calendar(std::time_t when) {
    std::tm utc{};
    gmtime_r(&when, &utc);
    return utc;
}

long process_id() { return long(getpid()); }

std::filesystem::path executable_path() {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : self;
}

bool process_running(long pid) {
    if (pid <= 0 || ::kill(pid_t(pid), 0) != 0) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    const auto paren = text.rfind(')');
    return paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] != 'Z';
}

uint64_t data_limit_bytes() {
    rlimit data{};
    if (::getrlimit(RLIMIT_DATA, &data) != 0 || data.rlim_cur == RLIM_INFINITY) return 0;
    return uint64_t(data.rlim_cur);
}

bool running_as_root() { return ::geteuid() == 0; }

void forbid_inspection() { ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

void ignore_broken_pipes() { ::signal(SIGPIPE, SIG_IGN); }

}  // namespace kreg::platform
