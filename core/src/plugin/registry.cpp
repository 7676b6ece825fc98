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

namespace {
bool listed(const ListOptions& options, const std::string& name) {
    return !options.only || std::find(options.only->begin(), options.only->end(), name) != options.only->end();
}

// text cut to at most max bytes, ending in "..." when cut, never inside a UTF-8 sequence.
std::string fit(const std::string& text, std::size_t max) {
    if (text.size() <= max) return text;
    if (max < 3) return std::string(max, '.');
    std::size_t cut = max - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return text.substr(0, cut) + "...";
}

// prefix + text as lines of at most width bytes, broken at spaces; continuation lines are indented by indent
// spaces. A word longer than a line (a path) is cut where it must be.
std::string wrapped(const std::string& prefix, const std::string& text, std::size_t width, std::size_t indent) {
    std::vector<std::string> lines{prefix};
    bool has_word = false;  // on the last line
    const auto new_line = [&] {
        lines.push_back(std::string(indent, ' '));
        has_word = false;
    };
    std::istringstream words(text);
    std::string word;
    while (words >> word) {
        if (has_word && lines.back().size() + 1 + word.size() > width) new_line();
        while (lines.back().size() + (has_word ? 1 : 0) + word.size() > width) {
            if (has_word) new_line();
            const std::size_t room = width > lines.back().size() ? width - lines.back().size() : 1;
            if (word.size() <= room) break;
            lines.back() += word.substr(0, room);
            word.erase(0, room);
            new_line();
        }
        lines.back() += (has_word ? " " : "") + word;
        has_word = true;
    }
    std::string out;
    for (const auto& line : lines)
        if (line.find_first_not_of(' ') != std::string::npos) out += line + "\n";
    return out;
}
}  // namespace

std::string Registry::format_table(const ListOptions& options) const {
    struct Row {
        std::string kernel, backend, dtypes, plugin, status, description;
    };
    std::vector<Row> rows;
    rows.push_back({"KERNEL", "BACKEND", "DTYPES", "PLUGIN", "STATUS", "DESCRIPTION"});
    std::vector<std::string> reasons;  // unavailable reasons, each once, numbered from 1 under the table
    std::size_t shown = 0;
    for (const auto& e : entries_) {
        const auto& k = e.kernel;
        if (!listed(options, k.name)) continue;
        ++shown;
        std::string status = "ready";
        if (!k.unavailable_reason.empty()) {
            if (options.wide) {
                status = "unavailable: " + k.unavailable_reason;
            } else {
                auto at = std::find(reasons.begin(), reasons.end(), k.unavailable_reason);
                if (at == reasons.end()) at = reasons.insert(reasons.end(), k.unavailable_reason);
                status = "unavailable [" + std::to_string(at - reasons.begin() + 1) + "]";
            }
        }
        rows.push_back({k.name, std::string(to_string(k.backend)), describe_dtypes(k.dtypes),
                        e.plugin_name + " " + e.plugin_version, status, k.description});
    }
    std::size_t w[5] = {0, 0, 0, 0, 0};
    for (const auto& r : rows) {
        w[0] = std::max(w[0], r.kernel.size());
        w[1] = std::max(w[1], r.backend.size());
        w[2] = std::max(w[2], r.dtypes.size());
        w[3] = std::max(w[3], r.plugin.size());
        w[4] = std::max(w[4], std::min<std::size_t>(r.status.size(), 60));
    }
    std::ostringstream out;
    auto pad = [](const std::string& s, std::size_t width) {
        return s + std::string(width > s.size() ? width - s.size() : 0, ' ');
    };
    for (const auto& r : rows) {
        std::string line = pad(r.kernel, w[0]) + "  " + pad(r.backend, w[1]) + "  " + pad(r.dtypes, w[2]) + "  " +
                           pad(r.plugin, w[3]) + "  " + pad(r.status, w[4]) + "  ";
        if (options.wide) {
            line += r.description;
        } else {
            // The description takes what is left of the line; a line already too long (a kernel name of 128
            // characters) is cut as a whole.
            line = line.size() < options.width ? line + fit(r.description, options.width - line.size()) : line;
            line = fit(line.substr(0, line.find_last_not_of(' ') + 1), options.width);
        }
        out << line.substr(0, line.find_last_not_of(' ') + 1) << "\n";
    }
    for (std::size_t i = 0; i < reasons.size(); ++i) {
        const std::string note = "[" + std::to_string(i + 1) + "] unavailable: " + reasons[i];
        out << wrapped("", note, options.width, 4);
    }
    out << shown << " kernel(s)";
    if (options.only) out << " of " << entries_.size();
    out << " from " << plugins_.size() << " plugin file(s)";
    if (!problems_.empty()) {
        out << "; " << problems_.size() << " problem(s):\n";
        for (const auto& p : problems_) out << (options.wide ? "  " + p + "\n" : wrapped("  ", p, options.width, 4));
    } else {
        out << "\n";
    }
    return out.str();
}

nlohmann::json Registry::to_json(const ListOptions& options) const {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& e : entries_) {
        if (!listed(options, e.kernel.name)) continue;
        nlohmann::json k = e.kernel;
        k["plugin"] = e.plugin_name;
        k["plugin_version"] = e.plugin_version;
        k["plugin_path"] = e.plugin_path;
        kernels.push_back(std::move(k));
    }
    return {{"kernels", kernels}, {"plugins", plugins_}, {"problems", problems_}};
}

}  // namespace kreg
