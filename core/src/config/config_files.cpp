// Finding and reading config files: path resolution, JSON syntax errors with line and column, and keys
// given twice (which nlohmann::json would silently resolve to the last one).
#include "config/json_node.hpp"
#include "config/sweep_config.hpp"

#include "common/suggest.hpp"

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
            case E::object_start:
                frames_.push_back({false, 0, {}, {}});
                break;
            case E::array_start:
                frames_.push_back({true, 0, {}, {}});
                break;
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
            case E::value:
                element_done();
                break;
        }
        return true;
    }
    const std::optional<std::string>& duplicate() const { return duplicate_; }
    // The pointer of the value being read when the parser stopped.
    std::string pointer() const {
        std::string path;
        for (const auto& f : frames_)
            path += "/" + (f.is_array ? std::to_string(f.index) : config_detail::escape_pointer_token(f.key));
        return path;
    }

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
        throw ConfigError(file, "",
                          "invalid JSON at " + line_and_column(text, e.byte) + ": " + syntax_detail(e.what()));
    } catch (const nlohmann::json::out_of_range& e) {
        // 406: a number beyond a double's range (1e999, -1e999, 400 digits). nlohmann gives no position
        // here, but the parser's events say which value it was reading.
        const std::string what = e.what();
        const auto quote = what.find('\'');
        const std::string token = quote == std::string::npos ? "" : what.substr(quote + 1, what.size() - quote - 2);
        std::string literal;
        if (!token.empty()) literal = " '" + (token.size() > 40 ? token.substr(0, 37) + "..." : token) + "'";
        // Where, when the literal is written only once in the file.
        const auto at = token.empty() ? std::string::npos : text.find(token);
        if (at != std::string::npos && text.find(token, at + 1) == std::string::npos)
            literal += " at " + line_and_column(text, at + 1);
        throw ConfigError(file, duplicates.pointer(),
                          "number out of range" + literal + ": it does not fit in a double (largest about 1.8e308)");
    } catch (const nlohmann::json::exception& e) {
        throw ConfigError(file, duplicates.pointer(), "invalid JSON: " + syntax_detail(e.what()));
    }
    if (duplicates.duplicate())
        throw ConfigError(file, *duplicates.duplicate(), "key given more than once in the same object");
    return doc;
}
}  // namespace config_detail

SweepConfig load_sweep_config(const fs::path& path) {
    return parse_sweep_config(config_detail::read_json_document(path, "config"), path.string());
}

namespace {
// Files a misspelt path may have meant, each as the user would type it (relative to base): those in the
// folder the path names, and, under the configs folder, every file a few levels down.
void collect_near_files(const fs::path& base, const fs::path& arg, bool recurse, std::vector<std::string>& out) {
    std::error_code ec;
    fs::path folder = base / arg.parent_path();
    if (folder.empty()) folder = ".";
    if (fs::is_directory(folder, ec))
        for (const auto& entry : fs::directory_iterator(folder, ec))
            if (entry.is_regular_file(ec)) out.push_back((arg.parent_path() / entry.path().filename()).string());
    if (!recurse || base.empty() || !fs::is_directory(base, ec)) return;
    constexpr std::size_t kMaxFiles = 5000;  // a suggestion is not worth a long walk
    fs::recursive_directory_iterator it(base, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end && out.size() < kMaxFiles; it.increment(ec)) {
        if (it.depth() > 3) it.disable_recursion_pending();
        if (it->is_regular_file(ec)) out.push_back(it->path().lexically_relative(base).string());
    }
}
}  // namespace

fs::path resolve_config_path(const std::string& arg, const fs::path& configs_dir, const std::string& kind) {
    if (arg.empty()) throw ConfigError(std::string(kCommandLineSource), "--" + kind, "the " + kind + " path is empty");
    std::vector<fs::path> candidates{fs::path(arg)};
    const bool search_configs = fs::path(arg).is_relative() && !configs_dir.empty();
    if (search_configs) candidates.push_back(configs_dir / arg);

    std::string tried;
    for (const auto& candidate : candidates) {
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) return candidate;
        const fs::path shown = fs::absolute(candidate, ec);
        tried += "\n  " + (ec ? candidate : shown).lexically_normal().string();
        if (fs::is_directory(candidate, ec)) tried += " (a directory)";
    }
    std::vector<std::string> near;
    collect_near_files(fs::path(), fs::path(arg), false, near);
    if (search_configs) collect_near_files(configs_dir, fs::path(arg), true, near);
    throw ConfigError(arg, "", "no such " + kind + " file" + did_you_mean(arg, near) + "; tried:" + tried);
}

}  // namespace kreg
