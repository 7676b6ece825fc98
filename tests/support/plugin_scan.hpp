// Every plugin of a folder, loaded by the runner's own loader (kreg::LoadedPlugin): the GPU tests see
// exactly the kernels the runner sees, with its validation and its normalisation of older structs (a 1.0
// plugin's kernel infos are shorter, so indexing its array with this build's sizeof would read garbage).
// Plugins are loaded once and never unloaded: kernels' static state (CUDA modules, cuBLAS handles) must
// outlive every test.
#pragma once

#include "plugin/loader.hpp"

#include <kreg/abi.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace kreg::test {

struct ScannedKernel {
    const kreg_kernel_info* info;  // normalised by the loader; lives as long as the process
    std::string plugin_file;
};

struct PluginScan {
    std::vector<ScannedKernel> kernels;  // every kernel of every plugin that loaded, in file order
    std::vector<std::string> load_errors;
};

inline PluginScan scan_plugins(const std::filesystem::path& dir) {
    static std::deque<LoadedPlugin> keep_loaded;  // a deque never moves its elements
    PluginScan out;
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
        if (entry.path().extension() == ".so") files.push_back(entry.path());
    if (ec) out.load_errors.push_back("cannot list " + dir.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        try {
            const LoadedPlugin& plugin = keep_loaded.emplace_back(LoadedPlugin::load(file));
            for (const kreg_kernel_info& k : plugin.kernels()) out.kernels.push_back({&k, file.string()});
        } catch (const PluginLoadError& e) {
            out.load_errors.push_back(e.what());
        }
    }
    return out;
}

}  // namespace kreg::test
