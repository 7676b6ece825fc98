// Finding and reading config files: path resolution, JSON syntax errors with line and column, and keys
// given twice (which nlohmann::json would silently resolve to the last one).
#include "config/json_node.hpp"
#include "config/sweep_config.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace kreg {
namespace fs = std::filesystem;

namespace {
std::string read_file(const fs::path& path, const std::string& kind) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw ConfigError(path.string(), "", "is a directory, not a " + kind + " file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(path.string(), "", std::string("cannot open: ") + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw ConfigError(path.string(), "", "cannot read");
    return text.str();
}

// nlohmann's parse_error::byte is the 1-based index of the character it stopped at.
std::string line_and_column(const std::string& text, std::size_t byte) {
    const std::size_t stop = std::min(byte == 0 ? 0 : byte - 1, text.size());
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < stop; ++i)
        if (text[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
    return "line " + std::to_string(line) + ", column " + std::to_string(stop - line_start + 1);
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at ...: " prefix.
std::string syntax_detail(const std::string& what) {
    const auto at = what.find(": ");
    return at == std::string::npos ? what : what.substr(at + 2);
}

// Follows the parser's events to know the JSON pointer of each key, and remembers the first repeated one.
class DuplicateKeyFinder {
public:
    bool on_event(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        switch (event) {
            case E::object_start: frames_.push_back({false, 0, {}, {}}); break;
            case E::array_start: frames_.push_back({true, 0, {}, {}}); break;
            case E::key: {
                Frame& top = frames_.back();
                top.key = parsed.get<std::string>();
                if (!top.keys.insert(top.key).second && !duplicate_) duplicate_ = pointer();
                break;
            }
            case E::object_end:
            case E::array_end:
                frames_.pop_back();
                element_done();
                break;
            case E::value: element_done(); break;
        }
        return true;
    }
    const std::optional<std::string>& duplicate() const { return duplicate_; }

private:
    struct Frame {
        bool is_array;
        std::size_t index;
        std::set<std::string> keys;
        std::string key;
    };
    void element_done() {
        if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    }
    std::string pointer() const {
        std::string path;
        for (const auto& f : frames_)
            path += "/" + (f.is_array ? std::to_string(f.index) : config_detail::escape_pointer_token(f.key));
        return path;
    }
    std::vector<Frame> frames_;
    std::optional<std::string> duplicate_;
};
}  // namespace

namespace config_detail {
nlohmann::json read_json_document(const fs::path& path, const std::string& kind) {
    const std::string file = path.string();
    const std::string text = read_file(path, kind);
    DuplicateKeyFinder duplicates;
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text, [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
            return duplicates.on_event(event, parsed);
        });
    } catch (const nlohmann::json::parse_error& e) {
        throw ConfigError(file, "", "invalid JSON at " + line_and_column(text, e.byte) + ": " + syntax_detail(e.what()));
    }
    if (duplicates.duplicate())
        throw ConfigError(file, *duplicates.duplicate(), "key given more than once in the same object");
    return doc;
}
}  // namespace config_detail

SweepConfig load_sweep_config(const fs::path& path) {
    return parse_sweep_config(config_detail::read_json_document(path, "config"), path.string());
}

fs::path resolve_config_path(const std::string& arg, const fs::path& configs_dir) {
    if (arg.empty()) throw ConfigError(std::string(kCommandLineSource), "--config", "the config path is empty");
    std::vector<fs::path> candidates{fs::path(arg)};
    if (fs::path(arg).is_relative() && !configs_dir.empty()) candidates.push_back(configs_dir / arg);

    std::string tried;
    for (const auto& candidate : candidates) {
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) return candidate;
        const fs::path shown = fs::absolute(candidate, ec);
        tried += "\n  " + (ec ? candidate : shown).lexically_normal().string();
        if (fs::is_directory(candidate, ec)) tried += " (a directory)";
    }
    throw ConfigError(arg, "", "config file not found; tried:" + tried);
}

}  // namespace kreg
