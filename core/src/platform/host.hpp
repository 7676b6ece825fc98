// Facts about the machine a report was made on (common/host_info.hpp), and the calendar in UTC.
#pragma once

#include <cstdint>
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
// This process's cap on its data segment (RLIMIT_DATA) in bytes: 0 when there is none (Windows has none).
uint64_t data_limit_bytes();
// Whether this process runs as the superuser (POSIX: effective uid 0; Windows: never said, false).
bool running_as_root();
// For a process that holds secrets (the grader's seed): no core file, and no other process of the same user
// may attach to it or read its memory (POSIX: PR_SET_DUMPABLE 0 on Linux; Windows: nothing here).
void forbid_inspection();
// A write to a pipe whose reader is gone fails with EPIPE instead of ending the process (POSIX: SIGPIPE ignored;
// Windows has no SIGPIPE).
void ignore_broken_pipes();

}  // namespace kreg::platform
