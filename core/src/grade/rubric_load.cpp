// load_rubric: reading a rubric file with the same guarantees as load_sweep_config (unreadable files,
// JSON syntax errors with line and column, keys given twice). The reading helpers of config_files.cpp are
// private to it, so the small part needed here is restated; hoisting both into config_detail would let
// them share one copy.
#include "config/json_node.hpp"
#include "grade/rubric.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace kreg {
namespace fs = std::filesystem;

namespace {
std::string read_rubric_text(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw ConfigError(path.string(), "", "is a directory, not a rubric file");
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

// Tracks the JSON pointer through the parser's events and remembers the first key repeated in an object
// (nlohmann::json would silently keep the last value).
class RepeatedKeyFinder {
public:
    void on_event(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        if (event == E::object_start || event == E::array_start) {
            frames_.push_back({event == E::array_start, 0, {}, {}});
        } else if (event == E::key) {
            Frame& top = frames_.back();
            top.key = parsed.get<std::string>();
            if (!top.keys.insert(top.key).second && !repeated_) repeated_ = pointer();
        } else {  // object_end, array_end, value
            if (event != E::value) frames_.pop_back();
            if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
        }
    }
    const std::optional<std::string>& repeated() const { return repeated_; }

private:
    struct Frame {
        bool is_array;
        std::size_t index;
        std::set<std::string> keys;
        std::string key;
    };
    std::string pointer() const {
        std::string path;
        for (const auto& f : frames_)
            path += "/" + (f.is_array ? std::to_string(f.index) : config_detail::escape_pointer_token(f.key));
        return path;
    }
    std::vector<Frame> frames_;
    std::optional<std::string> repeated_;
};
}  // namespace

Rubric load_rubric(const fs::path& path) {
    const std::string file = path.string();
    const std::string text = read_rubric_text(path);
    RepeatedKeyFinder repeated;
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text, [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
            repeated.on_event(event, parsed);
            return true;
        });
    } catch (const nlohmann::json::parse_error& e) {
        const std::string what = e.what();
        const auto detail_at = what.find(": ");
        throw ConfigError(file, "",
                          "invalid JSON at " + line_and_column(text, e.byte) + ": " +
                              (detail_at == std::string::npos ? what : what.substr(detail_at + 2)));
    }
    if (repeated.repeated())
        throw ConfigError(file, *repeated.repeated(), "key given more than once in the same object");
    return parse_rubric(doc, file);
}

}  // namespace kreg
