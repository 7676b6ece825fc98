// A small sweep for the Windows tests: every plugin listed, then every kernel of it run at one shape, each
// in a child of its own (plugin_probe) with a time limit, so that a plugin that crashes or hangs becomes a
// row and the sweep goes on. It is what the runner's worker protocol does, reduced to what the platform
// layer gives on Windows today; the runner itself does not build there yet (docs/WINDOWS.md).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace kreg::windows_test {

struct SweepRow {
    std::string plugin;     // the file
    std::string kernel;     // "" for a plugin that did not list
    std::string status;     // a RowStatus name: ok, wrong_result, failed, crashed, timeout, ...
    std::string reason;     // what the child said, or how it ended; with its stderr's last line for a crash
    nlohmann::json record;  // the child's Record, when it sent one
};

// probe: plugin_probe; shape m = n = k; each child gets timeout_s.
std::vector<SweepRow> sweep(const std::filesystem::path& probe, const std::vector<std::filesystem::path>& plugins,
                            int64_t size, double timeout_s);

// {"rows":[...]}, written with platform::replace_file.
void write_report(const std::filesystem::path& path, const std::vector<SweepRow>& rows);

}  // namespace kreg::windows_test
