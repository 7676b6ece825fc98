// Where plugins come from: the runner's own plugin folder, KREG_PLUGIN_PATH, --plugin-dir and --plugin.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kreg {

struct PluginSearch {
    std::vector<std::filesystem::path> directories;  // scanned for *.so (not recursively), in order
    std::vector<std::filesystem::path> files;        // taken as given, even without the .so suffix
};

// The default plugin folder of a runner executable: <exe_dir>/../lib/kreg/plugins (same layout in the
// build tree and the install tree).
std::filesystem::path default_plugin_dir(const std::filesystem::path& runner_exe);

// Splits a KREG_PLUGIN_PATH-style list ("a:b:c", empty entries ignored).
std::vector<std::filesystem::path> split_search_path(const std::string& value);

// Plugin files in search order, de-duplicated by canonical path. A directory that does not exist is
// reported in `problems` (not an error: KREG_PLUGIN_PATH may name optional folders); a file given with
// --plugin that does not exist is kept, so that loading it produces its own error row.
std::vector<std::filesystem::path> find_plugin_files(const PluginSearch& search, std::vector<std::string>& problems);

}  // namespace kreg
