// A dispatch table as every dispatch plugin reads it (docs/DISPATCH.md, configs/schema/dispatch-table.schema.json).
//
// `runner tune` writes the table from verified reports; a dispatch plugin compiles it in as a string and, per
// call, picks the entry for the device it runs on and the call's dtype, then the first rule whose m/n/k ranges
// hold the call's shape, else the entry's fallback. Header-only (nlohmann/json) so a plugin needs no kreg
// library: the plugin .so stays self-contained inside the grader's sandbox.
//
// Parsing is strict because a table steers every call of a graded kernel: a misspelt key ("M" for "m") would
// otherwise widen a rule to every shape. Every error names the table's origin and the JSON path.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kreg::dispatch {

constexpr const char* kTableKind = "kreg-dispatch-table";
constexpr int kTableVersion = 1;
// The variable that replaces a plugin's embedded table with a file (tests, engineers trying a new table).
constexpr const char* kTableOverrideVariable = "KREG_DISPATCH_TABLE";

// A malformed table; what() names the origin (a file or "embedded table of <plugin>") and the JSON path.
struct TableError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// An inclusive range of one dimension. hi unset: no upper bound (the class reaches past the largest shape
// measured, so the table generalises upwards).
struct DimRange {
    int64_t lo = 1;
    std::optional<int64_t> hi;
    bool contains(int64_t value) const { return value >= lo && (!hi || value <= *hi); }
};

// Where a rule's choice was measured: the report and the shape whose row decided it.
struct RuleSource {
    std::string report;
    int64_t m = 0, n = 0, k = 0;
};

struct Rule {
    std::optional<DimRange> m, n, k;  // unset: any value
    std::string kernel;
    std::optional<double> ratio;  // time(reference) / time(kernel) at the source shape; unset: not measured
    std::optional<std::string> reference;
    std::optional<RuleSource> source;
    std::optional<std::string> shape_class;  // "class": a readable name of the region, informational

    bool matches(int64_t m_value, int64_t n_value, int64_t k_value) const {
        return (!m || m->contains(m_value)) && (!n || n->contains(n_value)) && (!k || k->contains(k_value));
    }
};

// The rules of one (device, dtype).
struct Entry {
    std::string device;  // the report's device name ("NVIDIA H200"); "cpu" for CPU kernels
    std::string dtype;   // "fp32", "tf32", "bf16", "fp16"
    std::string fallback;
    std::vector<Rule> rules;  // ordered, first match wins
};

struct Table {
    std::string origin;  // where it was read from, for messages and the row's evidence
    std::string kreg_version;
    std::vector<Entry> entries;

    // The entry for (device, dtype), or nullptr: the plugin then uses its own documented fallback.
    const Entry* find(const std::string& device, const std::string& dtype) const {
        for (const Entry& entry : entries)
            if (entry.device == device && entry.dtype == dtype) return &entry;
        return nullptr;
    }
};

// What a plugin decided for one call: the kernel and why, in words fit for the row's evidence.
struct Choice {
    std::string kernel;
    int rule_index = -1;  // -1: the entry's fallback
    std::string reason;   // "rule 2 (m 1..1)", "fallback of cpu/fp32: no rule matches 3x3x3"
};

inline Choice choose(const Entry& entry, int64_t m, int64_t n, int64_t k) {
    for (size_t i = 0; i < entry.rules.size(); ++i) {
        if (!entry.rules[i].matches(m, n, k)) continue;
        std::string reason = "rule " + std::to_string(i);
        if (entry.rules[i].shape_class) reason += " (" + *entry.rules[i].shape_class + ")";
        return Choice{entry.rules[i].kernel, int(i), reason};
    }
    return Choice{entry.fallback, -1,
                  "fallback of " + entry.device + "/" + entry.dtype + ": no rule matches " + std::to_string(m) + "x" +
                      std::to_string(n) + "x" + std::to_string(k)};
}

namespace detail {

[[noreturn]] inline void fail(const std::string& origin, const std::string& path, const std::string& what) {
    throw TableError(origin + ": " + (path.empty() ? std::string("/") : path) + ": " + what);
}

inline void only_keys(const nlohmann::json& object, const std::set<std::string>& allowed, const std::string& origin,
                      const std::string& path) {
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (allowed.count(it.key())) continue;
        std::string list;
        for (const std::string& key : allowed) list += (list.empty() ? "" : ", ") + key;
        fail(origin, path + "/" + it.key(), "unknown key (known: " + list + ")");
    }
}

inline const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& origin,
                                    const std::string& path) {
    auto it = object.find(key);
    if (it == object.end()) fail(origin, path + "/" + key, "missing");
    return *it;
}

inline std::string text(const nlohmann::json& value, const std::string& origin, const std::string& path) {
    if (!value.is_string() || value.get<std::string>().empty()) fail(origin, path, "expected a non-empty string");
    return value.get<std::string>();
}

inline int64_t whole(const nlohmann::json& value, const std::string& origin, const std::string& path) {
    if (!value.is_number_integer()) fail(origin, path, "expected an integer");
    return value.get<int64_t>();
}

inline DimRange dim_range(const nlohmann::json& value, const std::string& origin, const std::string& path) {
    if (!value.is_array() || value.size() != 2)
        fail(origin, path, "expected [lo, hi] (inclusive; hi null for no upper bound)");
    DimRange range;
    range.lo = whole(value[0], origin, path + "/0");
    if (range.lo < 1) fail(origin, path + "/0", "lo must be >= 1");
    if (!value[1].is_null()) {
        range.hi = whole(value[1], origin, path + "/1");
        if (*range.hi < range.lo) fail(origin, path, "hi is below lo");
    }
    return range;
}

inline Rule rule(const nlohmann::json& value, const std::string& origin, const std::string& path) {
    if (!value.is_object()) fail(origin, path, "expected an object");
    only_keys(value, {"m", "n", "k", "kernel", "ratio", "reference", "source", "class"}, origin, path);
    Rule r;
    if (value.contains("m")) r.m = dim_range(value["m"], origin, path + "/m");
    if (value.contains("n")) r.n = dim_range(value["n"], origin, path + "/n");
    if (value.contains("k")) r.k = dim_range(value["k"], origin, path + "/k");
    r.kernel = text(member(value, "kernel", origin, path), origin, path + "/kernel");
    if (value.contains("ratio") && !value["ratio"].is_null()) {
        if (!value["ratio"].is_number() || value["ratio"].get<double>() <= 0)
            fail(origin, path + "/ratio", "expected a positive number or null");
        r.ratio = value["ratio"].get<double>();
    }
    if (value.contains("reference")) r.reference = text(value["reference"], origin, path + "/reference");
    if (value.contains("class")) r.shape_class = text(value["class"], origin, path + "/class");
    if (value.contains("source")) {
        const nlohmann::json& source = value["source"];
        const std::string source_path = path + "/source";
        if (!source.is_object()) fail(origin, source_path, "expected an object");
        only_keys(source, {"report", "m", "n", "k"}, origin, source_path);
        r.source = RuleSource{text(member(source, "report", origin, source_path), origin, source_path + "/report"),
                              whole(member(source, "m", origin, source_path), origin, source_path + "/m"),
                              whole(member(source, "n", origin, source_path), origin, source_path + "/n"),
                              whole(member(source, "k", origin, source_path), origin, source_path + "/k")};
    }
    return r;
}

inline Entry entry(const nlohmann::json& value, const std::string& origin, const std::string& path) {
    if (!value.is_object()) fail(origin, path, "expected an object");
    // "classes" describes the class model tune used (informational, see docs/DISPATCH.md).
    only_keys(value, {"device", "dtype", "fallback", "rules", "classes"}, origin, path);
    Entry e;
    e.device = text(member(value, "device", origin, path), origin, path + "/device");
    e.dtype = text(member(value, "dtype", origin, path), origin, path + "/dtype");
    if (e.dtype != "fp32" && e.dtype != "tf32" && e.dtype != "bf16" && e.dtype != "fp16")
        fail(origin, path + "/dtype", "unknown dtype \"" + e.dtype + "\" (fp32, tf32, bf16, fp16)");
    e.fallback = text(member(value, "fallback", origin, path), origin, path + "/fallback");
    const nlohmann::json& rules = member(value, "rules", origin, path);
    if (!rules.is_array()) fail(origin, path + "/rules", "expected an array");
    for (size_t i = 0; i < rules.size(); ++i)
        e.rules.push_back(rule(rules[i], origin, path + "/rules/" + std::to_string(i)));
    return e;
}

}  // namespace detail

// Parses a table. origin names it in every message ("table.json", "embedded table of cpu_dispatch").
inline Table parse_table(const std::string& json_text, const std::string& origin) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(json_text);
    } catch (const nlohmann::json::parse_error& e) {
        throw TableError(origin + ": not valid JSON: " + e.what());
    }
    if (!doc.is_object()) detail::fail(origin, "", "expected an object");
    detail::only_keys(doc, {"kind", "version", "made_by", "tables"}, origin, "");
    if (detail::member(doc, "kind", origin, "") != kTableKind)
        detail::fail(origin, "/kind", std::string("expected \"") + kTableKind + "\" (is this a dispatch table?)");
    const nlohmann::json& version = detail::member(doc, "version", origin, "");
    if (!version.is_number_integer() || version.get<int64_t>() != kTableVersion)
        detail::fail(origin, "/version",
                     "this reader knows version " + std::to_string(kTableVersion) + ", found " + version.dump());
    Table table;
    table.origin = origin;
    if (doc.contains("made_by") && doc["made_by"].is_object() && doc["made_by"].contains("kreg_version") &&
        doc["made_by"]["kreg_version"].is_string())
        table.kreg_version = doc["made_by"]["kreg_version"].get<std::string>();
    const nlohmann::json& tables = detail::member(doc, "tables", origin, "");
    if (!tables.is_array()) detail::fail(origin, "/tables", "expected an array");
    for (size_t i = 0; i < tables.size(); ++i) {
        const std::string path = "/tables/" + std::to_string(i);
        Entry e = detail::entry(tables[i], origin, path);
        if (table.find(e.device, e.dtype))
            detail::fail(origin, path,
                         "a second entry for " + e.device + "/" + e.dtype + " (one per device and dtype)");
        table.entries.push_back(std::move(e));
    }
    return table;
}

// The table a plugin uses: the file KREG_DISPATCH_TABLE names when it is set, else the embedded one.
// The override is read here, in the plugin; inside the grader's sandbox it is unset and nothing is opened.
inline Table load_active_table(const std::string& embedded_json, const std::string& embedded_origin) {
    const char* override_path = std::getenv(kTableOverrideVariable);
    if (override_path == nullptr || *override_path == '\0') return parse_table(embedded_json, embedded_origin);
    const std::string origin = std::string(kTableOverrideVariable) + "=" + override_path;
    std::ifstream in(override_path, std::ios::binary);
    if (!in) throw TableError(origin + ": cannot be opened");
    std::ostringstream contents;
    contents << in.rdbuf();
    return parse_table(contents.str(), origin);
}

}  // namespace kreg::dispatch
