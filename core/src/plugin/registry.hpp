// The registry: the single list of kernels, built from what workers read out of each plugin. Menus,
// sweeps, tables and docs all come from it.
#pragma once

#include "plugin/kernel_meta.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kreg {

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

    std::string format_table() const;  // the `runner --list` table
    nlohmann::json to_json() const;    // the `runner --list --format json` document

private:
    std::vector<RegistryEntry> entries_;
    std::vector<PluginInfo> plugins_;
    std::vector<std::string> problems_;
};

}  // namespace kreg
