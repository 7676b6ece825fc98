#include "config/json_node.hpp"

#include "common/suggest.hpp"

#include <cmath>

namespace kreg::config_detail {
namespace {
// Short rendering of a value for messages; long ones are cut.
std::string excerpt(const nlohmann::json& value) {
    std::string text = value.dump();
    constexpr std::size_t kMax = 40;
    if (text.size() > kMax) text = text.substr(0, kMax - 3) + "...";
    return text;
}

bool is_integral(const nlohmann::json& value) {
    if (value.is_number_integer()) return true;  // signed and unsigned
    if (!value.is_number_float()) return false;
    const double d = value.get<double>();
    return std::isfinite(d) && d == std::floor(d);
}
}  // namespace

std::string why_not_file_stem(std::string_view name) {
    if (name.empty()) return "must not be an empty string";
    if (name.size() > 128) return "must be at most 128 characters, got " + std::to_string(name.size());
    if (name.front() == '.') return "must not start with '.'";
    for (char c : name) {
        if (c == '/' || c == '\\') return "must not contain '/' or '\\'";
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "must not contain control characters";
    }
    return "";
}

std::string type_name(const nlohmann::json& value) {
    switch (value.type()) {
        case nlohmann::json::value_t::object:
            return "object";
        case nlohmann::json::value_t::array:
            return "array";
        case nlohmann::json::value_t::string:
            return "string";
        case nlohmann::json::value_t::boolean:
            return "boolean";
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned:
            return "integer";
        case nlohmann::json::value_t::number_float:
            return is_integral(value) ? "integer" : "number";
        case nlohmann::json::value_t::null:
            return "null";
        default:
            return "invalid value";
    }
}

std::string escape_pointer_token(std::string_view token) {
    std::string out;
    for (char c : token) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

void Node::fail(const std::string& message) const { throw ConfigError(file(), path_, message); }

void Node::fail_type(std::string_view expected) const {
    std::string found = type_name(value());
    if (!value().is_object() && !value().is_array()) found += " " + excerpt(value());
    fail("expected " + std::string(expected) + ", found " + found);
}

std::optional<Node> Node::find(std::string_view key) const {
    const auto it = value().find(key);
    if (it == value().end()) return std::nullopt;
    return Node(*it, file(), path_ + "/" + escape_pointer_token(key));
}

Node Node::element(std::size_t index) const {
    return Node(value().at(index), file(), path_ + "/" + std::to_string(index));
}

void Node::expect_object_with_keys(const std::vector<std::string>& allowed) const {
    if (!value().is_object()) fail_type("object");
    for (const auto& [key, member] : value().items()) {
        bool known = false;
        for (const auto& name : allowed) known = known || name == key;
        if (!known)
            throw ConfigError(file(), path_ + "/" + escape_pointer_token(key),
                              "unknown key '" + key + "'" + did_you_mean(key, allowed));
    }
}

void Node::expect_non_empty_array(std::string_view of_what) const {
    if (!value().is_array()) fail_type("array of " + std::string(of_what));
    if (value().empty()) fail("must not be empty; list one or more " + std::string(of_what));
}

int64_t Node::as_int(std::string_view what, int64_t min, int64_t max) const {
    if (!is_integral(value())) fail_type("integer");
    // Compare as long double so that values outside int64 are reported rather than wrapped.
    long double v;
    if (value().is_number_unsigned())
        v = static_cast<long double>(value().get<uint64_t>());
    else if (value().is_number_integer())
        v = static_cast<long double>(value().get<int64_t>());
    else
        v = static_cast<long double>(value().get<double>());
    if (v < static_cast<long double>(min))
        fail(std::string(what) + " must be >= " + std::to_string(min) + ", got " + value().dump());
    if (v > static_cast<long double>(max))
        fail(std::string(what) + " must be <= " + std::to_string(max) + ", got " + value().dump());
    return value().is_number_float() ? static_cast<int64_t>(value().get<double>()) : value().get<int64_t>();
}

uint64_t Node::as_uint64(std::string_view what) const {
    if (!is_integral(value())) fail_type("integer");
    if (value().is_number_unsigned()) return value().get<uint64_t>();
    if (value().is_number_integer()) {
        const int64_t v = value().get<int64_t>();
        if (v < 0) fail(std::string(what) + " must be >= 0, got " + std::to_string(v));
        return static_cast<uint64_t>(v);
    }
    const double d = value().get<double>();
    if (d < 0) fail(std::string(what) + " must be >= 0, got " + value().dump());
    if (d >= 18446744073709551616.0) fail(std::string(what) + " must be < 2^64, got " + value().dump());
    return static_cast<uint64_t>(d);
}

double Node::as_positive_number(std::string_view what) const {
    if (!value().is_number()) fail_type("number");
    const double v = value().get<double>();
    // Only a document built in code can hold one: the reader rejects 1e999 with its position.
    if (!std::isfinite(v)) fail("number out of range: " + std::string(what) + " must be a finite number");
    if (!(v > 0)) fail(std::string(what) + " must be > 0, got " + value().dump());
    return v;
}

bool Node::as_bool() const {
    if (!value().is_boolean()) fail_type("boolean (true or false)");
    return value().get<bool>();
}

std::string Node::as_string() const {
    if (!value().is_string()) fail_type("string");
    return value().get<std::string>();
}

std::string Node::as_non_empty_string() const {
    std::string s = as_string();
    if (s.empty()) fail("must not be an empty string");
    return s;
}

}  // namespace kreg::config_detail

namespace kreg::config_detail {

std::string Node::as_file_stem() const {
    const std::string s = as_string();
    if (const std::string why = why_not_file_stem(s); !why.empty())
        fail(value().dump() + " is not a safe file name: it names files in the output folder and " + why);
    return s;
}

std::string Node::as_kernel_name(std::string_view what) const {
    const std::string s = as_string();
    if (s.empty()) fail("must not be an empty string: " + std::string(what) + "s are never empty");
    if (s.size() > 128) fail(std::string(what) + " is longer than 128 characters, which no kernel name is");
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '.';
        if (!ok)
            fail(std::string(what) + " " + value().dump() +
                 " can never match a kernel: kernel names have only letters, digits, '_', '-' and '.'");
    }
    return s;
}

}  // namespace kreg::config_detail
