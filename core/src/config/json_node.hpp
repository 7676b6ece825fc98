// Internal to the config parser: a JSON value together with the file it came from and its JSON pointer,
// so that every check can fail with a ConfigError that says where.
#pragma once

#include "config/sweep_config.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::config_detail {

// "object", "array", "string", "boolean", "integer", "number" or "null".
std::string type_name(const nlohmann::json& value);
// RFC 6901 escaping of one reference token ('~' -> "~0", '/' -> "~1").
std::string escape_pointer_token(std::string_view token);

// "" when name is a safe file name stem (see Node::as_file_stem), else why not.
std::string why_not_file_stem(std::string_view name);

// Reads a JSON file for a config-like document (kind: "config", "rubric"): a missing or unreadable file,
// a directory, a syntax error (with line and column) and a key given twice in one object all throw
// ConfigError naming the file. A number too large for a double (1e999, -1e999, an integer of 400 digits)
// is a ConfigError at the JSON pointer of that number: "number out of range ...".
nlohmann::json read_json_document(const std::filesystem::path& path, const std::string& kind);

class Node {
public:
    Node(const nlohmann::json& value, const std::string& file, std::string path)
        : value_(&value), file_(&file), path_(std::move(path)) {}

    const nlohmann::json& value() const { return *value_; }
    const std::string& path() const { return path_; }
    const std::string& file() const { return *file_; }

    [[noreturn]] void fail(const std::string& message) const;
    // "expected <expected>, found <type> <value>".
    [[noreturn]] void fail_type(std::string_view expected) const;

    // The member, if present (the caller has made sure this is an object).
    std::optional<Node> find(std::string_view key) const;
    Node element(std::size_t index) const;

    // Fails unless this is an object; then fails on the first key not in allowed, with a suggestion.
    void expect_object_with_keys(const std::vector<std::string>& allowed) const;
    // Fails unless this is an array with at least one element.
    void expect_non_empty_array(std::string_view of_what) const;

    // Integer checks accept integral JSON numbers too (1024.0). what names the value in range errors:
    // "<what> must be >= <min>, got <v>".
    int64_t as_int(std::string_view what, int64_t min, int64_t max) const;
    uint64_t as_uint64(std::string_view what) const;
    double as_positive_number(std::string_view what) const;
    bool as_bool() const;
    std::string as_string() const;            // any string
    std::string as_non_empty_string() const;  // fails on ""
    // A name that becomes part of a file name in an output folder: non-empty, at most 128 characters, no
    // '/', '\\' or control characters, not starting with '.' (so also never "." or "..").
    std::string as_file_stem() const;
    // A kernel name as a plugin may declare one (the loader's rule: letters, digits, '_', '-', '.'; at most
    // 128), so that a rubric never names a kernel that can never exist. what names the value in messages.
    std::string as_kernel_name(std::string_view what) const;

private:
    const nlohmann::json* value_;
    const std::string* file_;
    std::string path_;
};

}  // namespace kreg::config_detail
