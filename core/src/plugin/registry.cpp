#include "plugin/registry.hpp"

#include <algorithm>
#include <sstream>

namespace kreg {

void Registry::add(const PluginInfo& plugin) {
    plugins_.push_back(plugin);
    if (!plugin.error.empty()) {
        problems_.push_back(plugin.error);
        return;
    }
    for (const auto& k : plugin.kernels) {
        if (const RegistryEntry* first = find(k.name)) {
            problems_.push_back(plugin.path + ": duplicate kernel name '" + k.name + "' (first from " +
                                first->plugin_path + "); this one is ignored");
            continue;
        }
        entries_.push_back({k, plugin.name, plugin.version, plugin.path});
    }
}

const RegistryEntry* Registry::find(const std::string& name) const {
    for (const auto& e : entries_)
        if (e.kernel.name == name) return &e;
    return nullptr;
}

std::vector<std::string> Registry::names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.kernel.name);
    return out;
}

std::string Registry::format_table() const {
    struct Row { std::string kernel, backend, dtypes, plugin, status, description; };
    std::vector<Row> rows;
    rows.push_back({"KERNEL", "BACKEND", "DTYPES", "PLUGIN", "STATUS", "DESCRIPTION"});
    for (const auto& e : entries_) {
        const auto& k = e.kernel;
        std::string status = k.unavailable_reason.empty() ? "ready" : "unavailable: " + k.unavailable_reason;
        rows.push_back({k.name, std::string(to_string(k.backend)), describe_dtypes(k.dtypes),
                        e.plugin_name + " " + e.plugin_version, status, k.description});
    }
    size_t w[5] = {0, 0, 0, 0, 0};
    for (const auto& r : rows) {
        w[0] = std::max(w[0], r.kernel.size());
        w[1] = std::max(w[1], r.backend.size());
        w[2] = std::max(w[2], r.dtypes.size());
        w[3] = std::max(w[3], r.plugin.size());
        w[4] = std::max(w[4], std::min<size_t>(r.status.size(), 60));
    }
    std::ostringstream out;
    auto pad = [](const std::string& s, size_t width) { return s + std::string(width > s.size() ? width - s.size() : 0, ' '); };
    for (const auto& r : rows)
        out << pad(r.kernel, w[0]) << "  " << pad(r.backend, w[1]) << "  " << pad(r.dtypes, w[2]) << "  "
            << pad(r.plugin, w[3]) << "  " << pad(r.status, w[4]) << "  " << r.description << "\n";
    out << entries_.size() << " kernel(s) from " << plugins_.size() << " plugin file(s)";
    if (!problems_.empty()) {
        out << "; " << problems_.size() << " problem(s):\n";
        for (const auto& p : problems_) out << "  " << p << "\n";
    } else {
        out << "\n";
    }
    return out.str();
}

nlohmann::json Registry::to_json() const {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& e : entries_) {
        nlohmann::json k = e.kernel;
        k["plugin"] = e.plugin_name;
        k["plugin_version"] = e.plugin_version;
        k["plugin_path"] = e.plugin_path;
        kernels.push_back(std::move(k));
    }
    return {{"kernels", kernels}, {"plugins", plugins_}, {"problems", problems_}};
}

}  // namespace kreg
