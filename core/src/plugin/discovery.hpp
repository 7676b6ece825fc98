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

// The plugin the GPU's ceilings are measured with: the cuBLAS reference plugin (plugins/cublas) in the
// runner's own plugin folder, and only there. KREG_PLUGIN_PATH, --plugin-dir and --plugin are never looked
// at: a file named like it elsewhere is a user's (or an attacker's) plugin, and ceilings taken from a slow
// fake would make every row look close to the hardware's limit, and a fast fake the roofline floor that
// grading checks results against. The runner's own folder is as trusted as the runner binary itself.
inline constexpr const char* kCeilingPluginFile = "cublas_reference.so";
struct CeilingPluginSource {
    std::filesystem::path path;  // empty when there is none
    std::string unavailable;     // why, when path is empty
};
CeilingPluginSource ceiling_plugin_source(const std::filesystem::path& runner_exe);

// Splits a KREG_PLUGIN_PATH-style list ("a:b:c", empty entries ignored).
std::vector<std::filesystem::path> split_search_path(const std::string& value);

// Plugin files in search order, de-duplicated by canonical path. A directory that does not exist is
// reported in `problems` (not an error: KREG_PLUGIN_PATH may name optional folders); a file given with
// --plugin that does not exist is kept, so that loading it produces its own error row.
std::vector<std::filesystem::path> find_plugin_files(const PluginSearch& search, std::vector<std::string>& problems);

}  // namespace kreg
