#include "compare/report_rows.hpp"

#include "common/types.hpp"
#include "config/json_node.hpp"
#include "config/sweep_config.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <tuple>

namespace kreg {
namespace {

using nlohmann::json;

std::string type_name(const json& v) {
    return v.is_number_integer() || v.is_number_unsigned() ? "integer" : v.type_name();
}

const json& field(const json& record, const std::string& file, const std::string& at, const char* key) {
    const auto it = record.find(key);
    if (it == record.end()) throw ConfigError(file, at, std::string("missing key '") + key + "'");
    return *it;
}

std::string string_field(const json& record, const std::string& file, const std::string& at, const char* key) {
    const json& v = field(record, file, at, key);
    if (!v.is_string()) throw ConfigError(file, at + "/" + key, "expected a string, got " + type_name(v));
    return v.get<std::string>();
}

int64_t size_field(const json& record, const std::string& file, const std::string& at, const char* key) {
    const json& v = field(record, file, at, key);
    if (!v.is_number_integer() && !v.is_number_unsigned())
        throw ConfigError(file, at + "/" + key, "expected an integer, got " + type_name(v));
    // nlohmann reads non-negative integers as unsigned: compare those as unsigned, so 2^64-1 is not -1.
    const bool in_range = v.is_number_unsigned()
                              ? v.get<uint64_t>() >= 1 && v.get<uint64_t>() <= uint64_t(kMaxDimension)
                              : v.get<int64_t>() >= 1 && v.get<int64_t>() <= kMaxDimension;
    if (!in_range)
        throw ConfigError(file, at + "/" + key,
                          "size must be from 1 to " + std::to_string(kMaxDimension) + ", got " + v.dump());
    return v.get<int64_t>();
}

std::string params_of(const json& record, const std::string& file, const std::string& at) {
    json params = json::object();
    if (const auto it = record.find("params"); it != record.end() && !it->is_null()) {
        if (!it->is_object()) throw ConfigError(file, at + "/params", "expected an object, got " + type_name(*it));
        params = *it;
    }
    if (const auto extra = record.find("extra"); extra != record.end() && extra->is_object())
        if (const auto warm = extra->find("warm_cache"); warm != extra->end() && *warm == json(true))
            params["warm_cache"] = true;  // only when on: the default (cold) is no parameter, as on CPU rows
    // A kernel time (CUPTI) is not an event time: the launch gap is in one and not the other, so a row timed
    // one way never meets a row timed the other (it would read as a speed-up of up to a third at small shapes).
    if (const auto timer = record.find("timer"); timer != record.end() && *timer == json("cupti"))
        params["timer"] = "cupti";
    return params.empty() ? "" : params.dump();  // nlohmann's objects are ordered by key: canonical
}

std::vector<double> samples_of(const json& record, const std::string& file, const std::string& at) {
    std::vector<double> samples;
    const auto it = record.find("samples_ms");
    if (it == record.end() || it->is_null()) return samples;
    if (!it->is_array())
        throw ConfigError(file, at + "/samples_ms", "expected an array of numbers, got " + type_name(*it));
    for (std::size_t i = 0; i < it->size(); ++i) {
        const json& v = (*it)[i];
        const std::string where = at + "/samples_ms/" + std::to_string(i);
        if (!v.is_number()) throw ConfigError(file, where, "expected a number, got " + type_name(v));
        const double ms = v.get<double>();
        if (!std::isfinite(ms) || ms < 0)
            throw ConfigError(file, where, "a time must be a finite number >= 0, got " + v.dump());
        samples.push_back(ms);
    }
    return samples;
}

std::string meta_string(const json& meta, const char* key) {
    const auto it = meta.find(key);
    return it != meta.end() && it->is_string() ? it->get<std::string>() : "";
}

// meta.plugins: each loaded plugin's path, name and sha256. A record names its plugin by plugin_path (and
// plugin, its name): by path first, by name only when every build of that name had one hash. Entries that
// are not objects or lack a hash are left out: an old or hand-made report simply has no hashes.
struct PluginHashes {
    std::map<std::string, std::string> by_path, by_name;
    std::map<std::string, bool> name_ambiguous;
    std::string of(const json& record) const {
        if (const auto path = record.find("plugin_path"); path != record.end() && path->is_string())
            if (const auto it = by_path.find(path->get<std::string>()); it != by_path.end()) return it->second;
        if (const auto name = record.find("plugin"); name != record.end() && name->is_string())
            if (const auto it = by_name.find(name->get<std::string>());
                it != by_name.end() && !name_ambiguous.count(it->first))
                return it->second;
        return "";
    }
};

PluginHashes plugin_hashes(const json& meta) {
    PluginHashes hashes;
    const auto plugins = meta.find("plugins");
    if (plugins == meta.end() || !plugins->is_array()) return hashes;
    for (const json& p : *plugins) {
        if (!p.is_object()) continue;
        const std::string sha = meta_string(p, "sha256");
        if (sha.empty()) continue;
        if (const std::string path = meta_string(p, "path"); !path.empty()) hashes.by_path[path] = sha;
        if (const std::string name = meta_string(p, "name"); !name.empty()) {
            const auto [it, inserted] = hashes.by_name.emplace(name, sha);
            if (!inserted && it->second != sha) hashes.name_ambiguous[name] = true;
        }
    }
    return hashes;
}

}  // namespace

bool operator<(const RowKey& a, const RowKey& b) {
    return std::tie(a.kernel, a.m, a.n, a.k, a.dtype, a.params) < std::tie(b.kernel, b.m, b.n, b.k, b.dtype, b.params);
}
bool operator==(const RowKey& a, const RowKey& b) {
    return std::tie(a.kernel, a.m, a.n, a.k, a.dtype, a.params) == std::tie(b.kernel, b.m, b.n, b.k, b.dtype, b.params);
}

std::string shape_text(const RowKey& key) {
    return std::to_string(key.m) + "x" + std::to_string(key.n) + "x" + std::to_string(key.k);
}

std::string params_text(const RowKey& key) {
    if (key.params.empty()) return "";
    std::string out;
    const json params = json::parse(key.params);  // named: items() only refers to it
    for (const auto& [name, value] : params.items())
        out += (out.empty() ? "" : ",") + name + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    return out;
}

ReportFile read_report_rows(const std::filesystem::path& path) {
    ReportFile report;
    report.path = path.string();
    const std::string& file = report.path;
    const json doc = config_detail::read_json_document(path, "report");
    if (!doc.is_object()) throw ConfigError(file, "", "a kreg report is a JSON object, got " + type_name(doc));
    PluginHashes hashes;
    if (const auto meta = doc.find("meta"); meta != doc.end() && meta->is_object()) {
        report.timestamp = meta_string(*meta, "timestamp");
        report.git_sha = meta_string(*meta, "git_sha");
        report.kreg_version = meta_string(*meta, "kreg_version");
        hashes = plugin_hashes(*meta);
        report.synthetic = meta->value("synthetic", json(false)) == json(true);
        // meta.progress (planned, done, complete) says whether the sweep was interrupted: rows it never
        // reached are missing from it for that reason, not because they went away.
        if (const auto progress = meta->find("progress"); progress != meta->end() && progress->is_object()) {
            if (const auto c = progress->find("complete"); c != progress->end() && c->is_boolean())
                report.complete = c->get<bool>();
            if (const auto p = progress->find("planned"); p != progress->end() && p->is_number_unsigned())
                report.planned = p->get<std::size_t>();
        }
        if (const auto gpu = meta->find("gpu"); gpu != meta->end() && gpu->is_object())
            if (const auto facts = gpu->find("facts"); facts != gpu->end() && facts->is_object())
                report.gpu_name = meta_string(*facts, "name");
    }
    const auto records = doc.find("records");
    if (records == doc.end()) throw ConfigError(file, "", "no 'records': not a kreg report");
    if (!records->is_array()) throw ConfigError(file, "/records", "expected an array, got " + type_name(*records));
    std::map<RowKey, std::size_t> first_index;
    for (std::size_t i = 0; i < records->size(); ++i) {
        const json& rec = (*records)[i];
        const std::string at = "/records/" + std::to_string(i);
        if (!rec.is_object()) throw ConfigError(file, at, "expected an object, got " + type_name(rec));
        ReportRow row;
        row.index = i;
        row.key.kernel = string_field(rec, file, at, "kernel");
        row.key.m = size_field(rec, file, at, "m");
        row.key.n = size_field(rec, file, at, "n");
        row.key.k = size_field(rec, file, at, "k");
        row.key.dtype = string_field(rec, file, at, "dtype");
        if (!parse_dtype(row.key.dtype))
            throw ConfigError(file, at + "/dtype", "unknown dtype '" + row.key.dtype + "'");
        row.key.params = params_of(rec, file, at);
        row.status = string_field(rec, file, at, "status");
        if (!parse_row_status(row.status))
            throw ConfigError(file, at + "/status", "unknown status '" + row.status + "'");
        if (const auto reason = rec.find("reason"); reason != rec.end() && reason->is_string()) row.reason = *reason;
        row.samples_ms = samples_of(rec, file, at);
        row.plugin_sha256 = hashes.of(rec);
        if (const auto timer = rec.find("timer"); timer != rec.end() && timer->is_string()) row.timer = *timer;
        if (row.status == "ok" && row.samples_ms.empty())
            throw ConfigError(file, at + "/samples_ms", "an ok row without timing samples: nothing to compare");
        const auto [it, inserted] = first_index.emplace(row.key, i);
        if (!inserted)
            throw ConfigError(file, at,
                              "the same row as /records/" + std::to_string(it->second) + " (" + row.key.kernel + " " +
                                  shape_text(row.key) + " " + row.key.dtype + "): a report has each row once");
        report.rows.push_back(std::move(row));
    }
    return report;
}

}  // namespace kreg
