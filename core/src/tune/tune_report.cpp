#include "tune/tune_report.hpp"

#include "common/sha256.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace kreg::tune {
namespace {
using json = nlohmann::json;

[[noreturn]] void refuse(const std::string& path, const std::string& why) { throw TuneError(path + ": " + why); }

std::string string_at(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// "records/3 (cpu_naive 64x64x64 fp32)": where a row is, in words a reader finds it by.
std::string row_name(std::size_t index, const json& record) {
    std::ostringstream out;
    out << "records/" << index << " (" << string_at(record, "kernel");
    if (record.contains("m") && record.contains("n") && record.contains("k"))
        out << " " << record["m"].dump() << "x" << record["n"].dump() << "x" << record["k"].dump();
    out << " " << string_at(record, "dtype") << ")";
    return out.str();
}

bool positive_number(const json& value) {
    return value.is_number() && std::isfinite(value.get<double>()) && value.get<double>() > 0;
}

void read_meta(const json& doc, TuneReport& report, const std::string& expected_kreg_version) {
    const std::string& path = report.path;
    const json& meta = doc["meta"];
    if (meta.value("synthetic", json(false)) == json(true))
        refuse(path, "a synthetic report (meta.synthetic): its rows were not measured");
    const auto progress = meta.find("progress");
    if (progress == meta.end() || !progress->is_object() || !progress->contains("complete"))
        refuse(path, "does not say the sweep completed (no meta.progress.complete); tune reads finished sweeps only");
    if ((*progress)["complete"] != json(true))
        refuse(path, "incomplete: the sweep was interrupted (" + progress->value("done", json(0)).dump() + " of " +
                         progress->value("planned", json(0)).dump() +
                         " jobs done); finish it with `runner --resume` first");
    report.kreg_version = string_at(meta, "kreg_version");
    if (report.kreg_version != expected_kreg_version)
        refuse(path, "made by kreg " + (report.kreg_version.empty() ? std::string("(unknown)") : report.kreg_version) +
                         ", this runner is kreg " + expected_kreg_version + ": measure again with this build");
    const json& baseline = doc.contains("baseline") ? doc["baseline"] : json();
    if (baseline.is_object()) {
        for (auto it = baseline.begin(); it != baseline.end(); ++it)
            if (it->is_string()) report.reference_by_dtype[it.key()] = it->get<std::string>();
    } else if (baseline.is_string()) {
        report.reference_by_dtype["*"] = baseline.get<std::string>();
    }
}

// meta.plugins: "path:<path>" -> sha256, and "name:<name>" -> sha256 where one build of that name was loaded.
std::map<std::string, std::string> plugin_hashes(const json& meta) {
    std::map<std::string, std::string> hashes;
    std::map<std::string, std::set<std::string>> builds_by_name;
    const auto plugins = meta.find("plugins");
    if (plugins == meta.end() || !plugins->is_array()) return hashes;
    for (const json& plugin : *plugins) {
        if (!plugin.is_object() || string_at(plugin, "sha256").empty()) continue;
        hashes["path:" + string_at(plugin, "path")] = string_at(plugin, "sha256");
        builds_by_name[string_at(plugin, "name")].insert(string_at(plugin, "sha256"));
    }
    for (const auto& [name, builds] : builds_by_name)
        if (builds.size() == 1) hashes["name:" + name] = *builds.begin();
    return hashes;
}

void read_record(const json& record, std::size_t index, const std::map<std::string, std::string>& hashes,
                 const std::string& gpu_name, TuneReport& report) {
    const std::string& path = report.path;
    const std::string where = row_name(index, record);
    if (!record.is_object()) refuse(path, "records/" + std::to_string(index) + ": not an object");
    if (record.contains("operation")) return;  // a transpose row: nothing a GEMM table is built from
    for (const char* key : {"kernel", "dtype", "status", "backend"})
        if (string_at(record, key).empty()) refuse(path, where + ": no " + key);
    for (const char* key : {"m", "n", "k"})
        if (!record.contains(key) || !record[key].is_number_integer() || record[key].get<int64_t>() < 1)
            refuse(path, where + ": " + key + " is not an integer >= 1");
    const std::string kernel = string_at(record, "kernel"), status = string_at(record, "status");
    const std::string backend = string_at(record, "backend");
    if (backend != "cpu" && backend != "cuda") refuse(path, where + ": unknown backend '" + backend + "'");
    const std::string device = backend == "cpu" ? "cpu" : gpu_name;
    if (device.empty()) refuse(path, where + ": a CUDA row, but the report names no GPU (meta.gpu.facts.name)");
    const std::string dtype = string_at(record, "dtype");

    auto sha = hashes.find("path:" + string_at(record, "plugin_path"));
    if (sha == hashes.end()) sha = hashes.find("name:" + string_at(record, "plugin"));
    if (sha == hashes.end())
        refuse(path, where + ": meta.plugins has no sha256 for its plugin, so its build cannot be told apart");
    if (const auto [it, added] = report.kernel_sha256.emplace(kernel, sha->second); !added && it->second != sha->second)
        refuse(path, where + ": kernel " + kernel + " ran from two plugin builds in one report");

    if (record.contains("extra") && record["extra"].is_object() && record["extra"].contains("variant"))
        report.dispatching_kernels.insert(kernel);
    if (status == "wrong_result" || status == "crashed" || status == "timeout" || status == "failed")
        report.failed_kernels[device + "/" + dtype].insert(kernel);
    if (status != "ok") return;
    // Verified: the runner compared the output with the reference and recorded the tolerance it held it to.
    if (!record.contains("tolerance") || !record["tolerance"].is_number() || !record.contains("max_rel_err") ||
        !record["max_rel_err"].is_number())
        refuse(path, where + ": ok but not verified (no tolerance and max_rel_err: measured with --no-verify?)");
    if (!(record["max_rel_err"].get<double>() <= record["tolerance"].get<double>()))
        refuse(path, where + ": ok, but its max_rel_err is above its tolerance");
    const json stats = record.value("stats", json::object());
    if (!stats.is_object() || !positive_number(stats.value("median_ms", json())))
        refuse(path, where + ": ok but without a positive stats.median_ms");
    report.rows.push_back(MeasuredRow{kernel, device, dtype, record["m"].get<int64_t>(), record["n"].get<int64_t>(),
                                      record["k"].get<int64_t>(), stats["median_ms"].get<double>(), index});
}

}  // namespace

TuneReport read_tune_report(const std::filesystem::path& file, const std::string& expected_kreg_version) {
    TuneReport report;
    report.path = file.string();
    std::ifstream in(file, std::ios::binary);
    if (!in) refuse(report.path, "cannot be read");
    std::ostringstream contents;
    contents << in.rdbuf();
    const std::string text = contents.str();
    report.sha256 = sha256_hex(text);
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        refuse(report.path, std::string("not valid JSON: ") + e.what());
    }
    if (!doc.is_object() || !doc.contains("meta") || !doc["meta"].is_object() || !doc.contains("records") ||
        !doc["records"].is_array() || !doc["meta"].contains("schema_version"))
        refuse(report.path, "not a kreg report (a report has meta with schema_version, and records)");
    read_meta(doc, report, expected_kreg_version);
    const json& meta = doc["meta"];
    std::string gpu_name;
    if (meta.contains("gpu") && meta["gpu"].is_object() && meta["gpu"].contains("facts") &&
        meta["gpu"]["facts"].is_object())
        gpu_name = string_at(meta["gpu"]["facts"], "name");
    const auto hashes = plugin_hashes(meta);
    const json& records = doc["records"];
    for (std::size_t i = 0; i < records.size(); ++i) read_record(records[i], i, hashes, gpu_name, report);
    if (report.rows.empty()) refuse(report.path, "has no ok, verified GEMM row to tune from");
    return report;
}

}  // namespace kreg::tune
