#include "common/host_info.hpp"

#include "common/text.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>

namespace kreg {
namespace {

// x86 names the CPU in "model name"; other architectures use other keys, tried in this order.
std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line, fallback;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key(trim(line.substr(0, colon), " \t\r"));
        const std::string value(trim(line.substr(colon + 1), " \t\r"));
        if (value.empty()) continue;
        if (key == "model name") return value;
        if (fallback.empty() && (key == "Hardware" || key == "Processor" || key == "cpu model" || key == "cpu"))
            fallback = value;
    }
    return fallback.empty() ? "unknown" : fallback;
}

std::string hostname() {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "unknown";
    return name;
}

std::string os_description() {
    utsname u{};
    if (uname(&u) != 0) return "unknown";
    return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

}  // namespace

nlohmann::json host_info() {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return {{"hostname", hostname()},
            {"os", os_description()},
            {"cpu_model", cpu_model()},
            {"logical_cpus", cpus > 0 ? cpus : 0}};
}

std::string utc_timestamp_iso8601() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace kreg
