// Facts about the machine a report was produced on, for the report's meta block.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace kreg {

// {"hostname", "os" (uname sysname, release and machine), "cpu_model" (/proc/cpuinfo), "logical_cpus"}.
// Never throws: a fact that cannot be read is "unknown" (or 0 for the CPU count).
nlohmann::json host_info();

// The current time in UTC as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_timestamp_iso8601();

}  // namespace kreg
