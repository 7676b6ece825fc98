// One table of (JSON key, member) per record struct, from which its to_json, its from_json and the list of its
// keys all come, so that a field is declared once (google/benchmark's Run, nvbench's named summaries).
//
//   inline constexpr auto kFields = std::make_tuple(field("name", &Gpu::name),
//                                                   field("why", &Gpu::why, Absent::omit));
//   void to_json(json& j, const Gpu& g) { j = fields_to_json(g, kFields); }
//
// An absent value (an empty std::optional, a null json; with Absent::omit also an empty container) is
// written as null, or left out with Absent::omit. Reading is lenient about what is missing (a report made
// before a field existed keeps its default) and strict about types: a key of the wrong type throws
// std::invalid_argument naming its key.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace kreg {

enum class Absent { null, omit };

template <class S, class T>
struct Field {
    const char* key;
    T S::*member;
    Absent absent;
};

template <class S, class T>
constexpr Field<S, T> field(const char* key, T S::*member, Absent absent = Absent::null) {
    return {key, member, absent};
}

namespace field_detail {

template <class T>
bool is_absent(const T&) {
    return false;
}
template <class T>
bool is_absent(const std::optional<T>& v) {
    return !v;
}
inline bool is_absent(const nlohmann::json& j) { return j.is_null(); }

template <class T>
bool is_empty(const T& v) {
    return is_absent(v);
}
template <class K, class V>
bool is_empty(const std::map<K, V>& v) {
    return v.empty();
}
template <class T>
bool is_empty(const std::vector<T>& v) {
    return v.empty();
}

template <class T>
nlohmann::json value_of(const T& v) {
    return nlohmann::json(v);
}
template <class T>
nlohmann::json value_of(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

template <class T>
void read_value(const nlohmann::json& j, T& out) {
    j.get_to(out);
}
template <class T>
void read_value(const nlohmann::json& j, std::optional<T>& out) {
    out = j.get<T>();
}

template <class S, class T>
void put(nlohmann::json& j, const S& s, const Field<S, T>& f) {
    const T& v = s.*f.member;
    if (f.absent == Absent::omit && is_empty(v)) return;
    j[f.key] = value_of(v);
}

template <class S, class T>
void take(const nlohmann::json& j, S& s, const Field<S, T>& f) {
    const auto it = j.find(f.key);
    if (it == j.end() || it->is_null()) return;
    try {
        read_value(*it, s.*f.member);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("/") + f.key + e.what());
    } catch (const std::exception& e) {
        throw std::invalid_argument(std::string("/") + f.key + ": " + e.what());
    }
}

}  // namespace field_detail

// The JSON object of s: one key per field of the table.
template <class S, class... T>
nlohmann::json fields_to_json(const S& s, const std::tuple<Field<S, T>...>& table) {
    nlohmann::json j = nlohmann::json::object();
    std::apply([&](const auto&... f) { (field_detail::put(j, s, f), ...); }, table);
    return j;
}

// Reads every key of the table that j has and is not null; keys j lacks keep s's value. Keys the table does not
// name are ignored (a later kreg's report). Throws std::invalid_argument "/key: ..." on a value of the wrong type.
template <class S, class... T>
void fields_from_json(const nlohmann::json& j, S& s, const std::tuple<Field<S, T>...>& table) {
    if (!j.is_object()) throw std::invalid_argument(": expected an object, found " + j.dump());
    std::apply([&](const auto&... f) { (field_detail::take(j, s, f), ...); }, table);
}

// The keys of the table, in its order: what a schema's properties must name.
template <class S, class... T>
std::vector<std::string> field_keys(const std::tuple<Field<S, T>...>& table) {
    std::vector<std::string> keys;
    std::apply([&](const auto&... f) { (keys.push_back(f.key), ...); }, table);
    return keys;
}

}  // namespace kreg
