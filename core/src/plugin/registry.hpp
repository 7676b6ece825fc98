// The registry: the single list of kernels, built from what workers read out of each plugin. Menus,
// sweeps, tables and docs all come from it.
#pragma once

#include "plugin/kernel_meta.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// How `runner --list` prints: which kernels, and how wide.
struct ListOptions {
    std::optional<std::vector<std::string>> only;  // these kernels (in registry order); all when unset
    bool wide = false;                             // every cell whole, however long the line
    std::size_t width = 120;                       // the line length a table that is not wide keeps to
};

struct RegistryEntry {
    KernelMeta kernel;
    std::string plugin_name;
    std::string plugin_version;
    std::string plugin_path;
};

class Registry {
public:
    // Adds a plugin's kernels. A kernel whose name is already taken is not added; the problem is
    // recorded, naming both files. A plugin with an error contributes no kernels, only its problem.
    void add(const PluginInfo& plugin);

    const std::vector<RegistryEntry>& entries() const { return entries_; }
    const std::vector<PluginInfo>& plugins() const { return plugins_; }
    // One line per plugin that failed to load and per rejected duplicate, each naming the file.
    const std::vector<std::string>& problems() const { return problems_; }

    const RegistryEntry* find(const std::string& name) const;
    std::vector<std::string> names() const;

    // The `runner --list` table. Unless wide, no line is longer than options.width: a kernel's status is
    // "ready" or "unavailable [N]", reason N printed once under the table (wrapped), and a description that
    // does not fit ends in "...". Plugin problems follow, wrapped likewise.
    std::string format_table(const ListOptions& options = {}) const;
    // The `runner --list --format json` document: every plugin and problem, the kernels of options.only.
    nlohmann::json to_json(const ListOptions& options = {}) const;

private:
    std::vector<RegistryEntry> entries_;
    std::vector<PluginInfo> plugins_;
    std::vector<std::string> problems_;
};

}  // namespace kreg
