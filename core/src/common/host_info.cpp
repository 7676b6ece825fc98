#include "common/host_info.hpp"

#include "platform/host.hpp"

#include <ctime>

namespace kreg {

nlohmann::json host_info() {
    return {{"hostname", platform::host_name()},
            {"os", platform::os_description()},
            {"cpu_model", platform::cpu_model()},
            {"logical_cpus", platform::logical_cpus()}};
}

std::string utc_timestamp_iso8601() {
    const std::time_t now = std::time(nullptr);
    const std::tm utc = platform::utc_calendar(now);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace kreg
