#include "plugin/discovery.hpp"

#include "common/library_format.hpp"

#include <algorithm>
#include <set>

namespace kreg {

std::filesystem::path default_plugin_dir(const std::filesystem::path& runner_exe) {
    return (runner_exe.parent_path() / ".." / "lib" / "kreg" / "plugins").lexically_normal();
}

CeilingPluginSource ceiling_plugin_source(const std::filesystem::path& runner_exe) {
    const std::filesystem::path file = default_plugin_dir(runner_exe) / kCeilingPluginFile;
    std::error_code ec;
    if (std::filesystem::is_regular_file(file, ec)) return {file, ""};
    return {{},
            "the runner's own plugin folder has no cuBLAS plugin (" + file.string() +
                ": not found; it is built only with the CUDA toolkit): GEMM ceilings not measured"};
}

std::vector<std::filesystem::path> split_search_path(const std::string& value) {
    std::vector<std::filesystem::path> out;
    size_t start = 0;
    while (start <= value.size()) {
        const size_t end = value.find(':', start);
        const std::string part = value.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!part.empty()) out.emplace_back(part);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

namespace {

// What a .dll or .dylib in a plugin folder is, and what to build instead.
std::string foreign_file_advice(const std::filesystem::path& file) {
    const std::string advice = foreign_library_advice(library_format(file));
    return advice.empty() ? "named like another system's library, and this runner loads only " +
                                std::string(native_plugin_suffix()) + " files"
                          : advice;
}

}  // namespace

std::vector<std::filesystem::path> find_plugin_files(const PluginSearch& search, std::vector<std::string>& problems) {
    std::vector<std::filesystem::path> out;
    std::set<std::filesystem::path> seen;
    auto add = [&](const std::filesystem::path& file) {
        std::error_code ec;
        auto key = std::filesystem::weakly_canonical(file, ec);
        if (ec) key = std::filesystem::absolute(file);
        if (seen.insert(key).second) out.push_back(key);
    };
    for (const auto& dir : search.directories) {
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec)) {
            problems.push_back(dir.string() + ": plugin directory does not exist");
            continue;
        }
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
            if (entry.is_directory()) continue;
            if (entry.path().extension() == native_plugin_suffix()) files.push_back(entry.path());
            // Another system's plugin is not loaded, but not passed over in silence either.
            else if (has_foreign_library_suffix(entry.path()))
                problems.push_back(entry.path().string() + ": not loaded: " + foreign_file_advice(entry.path()));
        }
        std::sort(files.begin(), files.end());
        for (const auto& f : files) add(f);
    }
    for (const auto& f : search.files) add(f);
    return out;
}

}  // namespace kreg
