#include "common/host_info.hpp"

#include "common/field_table.hpp"
#include "platform/host.hpp"

#include <ctime>

namespace kreg {

namespace {
const auto kHostFields =
    std::make_tuple(field("hostname", &HostInfo::hostname), field("os", &HostInfo::os),
                    field("cpu_model", &HostInfo::cpu_model), field("logical_cpus", &HostInfo::logical_cpus));
}  // namespace

void to_json(nlohmann::json& j, const HostInfo& h) { j = fields_to_json(h, kHostFields); }
void from_json(const nlohmann::json& j, HostInfo& h) { fields_from_json(j, h, kHostFields); }
std::vector<std::string> host_info_keys() { return field_keys(kHostFields); }

HostInfo host_info() {
    return {platform::host_name(), platform::os_description(), platform::cpu_model(),
            static_cast<int>(platform::logical_cpus())};
}

std::string utc_timestamp_iso8601() {
    const std::time_t now = std::time(nullptr);
    const std::tm utc = platform::utc_calendar(now);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace kreg
