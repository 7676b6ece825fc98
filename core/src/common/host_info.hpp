// Facts about the machine a report was produced on, for the report's meta block.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kreg {

// The machine a report was made on (meta.host). Written with these keys; read leniently (a key an older report
// lacks keeps its default) and strictly about types.
struct HostInfo {
    std::string hostname;
    std::string os;         // uname's sysname, release and machine (Windows: its version)
    std::string cpu_model;  // /proc/cpuinfo's model name (Windows: the registry's)
    int logical_cpus = 0;
};
void to_json(nlohmann::json& j, const HostInfo& h);
void from_json(const nlohmann::json& j, HostInfo& h);
std::vector<std::string> host_info_keys();

// This machine's. Never throws: a fact that cannot be read is "unknown" (or 0 for the CPU count).
HostInfo host_info();

// The current time in UTC as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_timestamp_iso8601();

}  // namespace kreg
