// Facts about the machine a report was made on (common/host_info.hpp), and the calendar in UTC.
#pragma once

#include <ctime>
#include <filesystem>
#include <string>

namespace kreg::platform {

std::string host_name();       // "unknown" when the system does not say
std::string os_description();  // "Linux 6.1.0-13-amd64 x86_64", "Windows 10.0.19045 x86_64"
std::string cpu_model();       // "AMD EPYC 7B13", or "unknown"
long logical_cpus();           // online logical CPUs, 0 when unknown
std::tm utc_calendar(std::time_t when);
long process_id();
// The running program's own file (POSIX: /proc/self/exe; Windows: GetModuleFileName); empty if unknown.
std::filesystem::path executable_path();
// Whether the process numbered pid still runs (a zombie does not).
bool process_running(long pid);

}  // namespace kreg::platform
