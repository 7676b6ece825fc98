#include "report/meta.hpp"

#include "common/field_table.hpp"
#include "common/host_info.hpp"
#include "common/operation_table.hpp"

// Set by core/src/report/CMakeLists.txt on this file only, so that a new commit rebuilds nothing else.
#ifndef KREG_GIT_SHA
#define KREG_GIT_SHA "unknown"
#endif

namespace kreg {
namespace {

// PluginFacts' load_error is written as null when empty, which a field table cannot say of a string.
struct PluginFactsJson {
    std::string path, name, version, sha256;
    int abi_major = 0, abi_minor = 0;
    std::optional<std::string> load_error;
};
const auto kPluginFields =
    std::make_tuple(field("path", &PluginFactsJson::path), field("name", &PluginFactsJson::name),
                    field("version", &PluginFactsJson::version), field("sha256", &PluginFactsJson::sha256),
                    field("abi_major", &PluginFactsJson::abi_major), field("abi_minor", &PluginFactsJson::abi_minor),
                    field("load_error", &PluginFactsJson::load_error));

const auto kProgressFields =
    std::make_tuple(field("planned", &ReportProgress::planned), field("done", &ReportProgress::done),
                    field("complete", &ReportProgress::complete), field("journal", &ReportProgress::journal));

const auto kDeviceFields = std::make_tuple(field("ordinal", &ReportDevice::ordinal), field("uuid", &ReportDevice::uuid),
                                           field("gpu", &ReportDevice::gpu));

const auto kOperationFields = std::make_tuple(
    field("name", &OperationFacts::name), field("keys", &OperationFacts::keys), field("rate", &OperationFacts::rate));

const auto kMetaFields = std::make_tuple(
    field("schema_version", &ReportMeta::schema_version), field("kreg_version", &ReportMeta::kreg_version),
    field("git_sha", &ReportMeta::git_sha), field("argv", &ReportMeta::argv),
    field("timestamp", &ReportMeta::timestamp), field("host", &ReportMeta::host), field("gpu", &ReportMeta::gpu),
    field("plugins", &ReportMeta::plugins), field("config", &ReportMeta::config), field("seed", &ReportMeta::seed),
    field("progress", &ReportMeta::progress, Absent::omit), field("shard", &ReportMeta::shard, Absent::omit),
    field("devices", &ReportMeta::devices, Absent::omit), field("merged_from", &ReportMeta::merged_from, Absent::omit),
    field("operations", &ReportMeta::operations, Absent::omit));

}  // namespace

const char* kreg_git_sha() { return KREG_GIT_SHA; }

void to_json(nlohmann::json& j, const PluginFacts& p) {
    const PluginFactsJson w{p.path,
                            p.name,
                            p.version,
                            p.sha256,
                            p.abi_major,
                            p.abi_minor,
                            p.load_error.empty() ? std::nullopt : std::optional<std::string>(p.load_error)};
    j = fields_to_json(w, kPluginFields);
}

void from_json(const nlohmann::json& j, PluginFacts& p) {
    PluginFactsJson r;
    fields_from_json(j, r, kPluginFields);
    p = {r.path, r.name, r.version, r.sha256, r.abi_major, r.abi_minor, r.load_error.value_or("")};
}

void to_json(nlohmann::json& j, const ReportProgress& p) { j = fields_to_json(p, kProgressFields); }
void from_json(const nlohmann::json& j, ReportProgress& p) { fields_from_json(j, p, kProgressFields); }
void to_json(nlohmann::json& j, const ReportDevice& d) { j = fields_to_json(d, kDeviceFields); }
void from_json(const nlohmann::json& j, ReportDevice& d) { fields_from_json(j, d, kDeviceFields); }
void to_json(nlohmann::json& j, const ReportMeta& m) { j = fields_to_json(m, kMetaFields); }
void from_json(const nlohmann::json& j, ReportMeta& m) { fields_from_json(j, m, kMetaFields); }

std::vector<std::string> report_meta_keys() { return field_keys(kMetaFields); }
std::vector<std::string> report_progress_keys() { return field_keys(kProgressFields); }
std::vector<std::string> report_device_keys() { return field_keys(kDeviceFields); }
std::vector<std::string> plugin_facts_keys() { return field_keys(kPluginFields); }
void to_json(nlohmann::json& j, const OperationFacts& o) { j = fields_to_json(o, kOperationFields); }
void from_json(const nlohmann::json& j, OperationFacts& o) { fields_from_json(j, o, kOperationFields); }
std::vector<std::string> operation_facts_keys() { return field_keys(kOperationFields); }

std::vector<OperationFacts> operation_facts() {
    std::vector<OperationFacts> out;
    for (Operation op : all_operations()) {
        const OperationRow& row = operation_row(op);
        OperationFacts facts{std::string(to_string(op)), {}, row.rate_field()};
        for (const ShapeKeyDef& key : row.shape_keys()) facts.keys.emplace_back(key.name);
        out.push_back(std::move(facts));
    }
    return out;
}

ReportMeta make_report_meta(const MetaInputs& in) {
    ReportMeta m;
    m.kreg_version = KREG_VERSION;
    m.git_sha = kreg_git_sha();
    m.argv = in.argv;
    m.timestamp = utc_timestamp_iso8601();
    m.host = host_info();
    m.gpu = in.gpu;
    m.plugins = in.plugins;
    m.config = in.config;
    m.seed = in.seed;
    m.operations = operation_facts();
    return m;
}

}  // namespace kreg
