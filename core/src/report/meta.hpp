// The meta block of a report: everything needed to understand, reproduce and trust its rows later
// (schema version, kreg version and commit, command line, host, device, plugin versions and hashes).
// Typed: ReportMeta is the one place its keys are spelled (meta.cpp's field table), for writing a report,
// for reading one back (--resume, runner merge) and for the test that holds it to report.schema.json.
#pragma once

#include "common/gpu_info.hpp"
#include "common/host_info.hpp"
#include "report/shard_meta.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// Semver of the report layout (meta, records, summary, CSV columns). Bump the major version when a
// field is removed or changes meaning, the minor version when one is added.
inline constexpr const char* kReportSchemaVersion = "1.2.0";

// What the report says about one plugin the run tried to load.
struct PluginFacts {
    std::string path, name, version, sha256;
    int abi_major = 0, abi_minor = 0;
    std::string load_error;  // empty when it loaded
};
void to_json(nlohmann::json& j, const PluginFacts& p);  // load_error is null when empty
void from_json(const nlohmann::json& j, PluginFacts& p);

// meta.progress: how far the sweep got when the report was rendered (ReportWriter sets it at each render).
struct ReportProgress {
    uint64_t planned = 0, done = 0;
    bool complete = false;
    std::string journal;  // the journal the rows were kept in
};
void to_json(nlohmann::json& j, const ReportProgress& p);
void from_json(const nlohmann::json& j, ReportProgress& p);

// One entry of meta.devices (runner --devices): a GPU the CUDA rows ran on.
struct ReportDevice {
    int ordinal = 0;  // as the runner saw it
    std::string uuid;
    std::optional<GpuInfo> gpu;
};
void to_json(nlohmann::json& j, const ReportDevice& d);
void from_json(const nlohmann::json& j, ReportDevice& d);

// One entry of meta.operations: what the operation table (common/operations.def) says of an operation, so that
// a tool reading the report learns its shape keys and its rate column from the report, not from a copy of the
// table (since schema 1.2.0; earlier reports lack it).
struct OperationFacts {
    std::string name;
    std::vector<std::string> keys;  // the row's shape keys in order ("m", "n", "k"; "n"; "m", "n", "block")
    std::string rate;               // the row's rate field: "gflops" (bound by the FLOP peak) or "gbps" (by the copy)
};
void to_json(nlohmann::json& j, const OperationFacts& o);
void from_json(const nlohmann::json& j, OperationFacts& o);
std::vector<std::string> operation_facts_keys();
// Every operation of the table, in its order.
std::vector<OperationFacts> operation_facts();

struct ReportMeta {
    std::string schema_version = kReportSchemaVersion;
    std::string kreg_version, git_sha;
    std::vector<std::string> argv;
    std::string timestamp;  // UTC, ISO 8601
    HostInfo host;
    std::optional<GpuInfo> gpu;  // null when no CUDA row ran
    std::vector<PluginFacts> plugins;
    nlohmann::json config;  // the sweep config as parsed (an array of them for a config of several parts)
    uint64_t seed = 0;
    std::optional<ReportProgress> progress;  // absent until rendered
    std::optional<SweepShardMeta> shard;     // --shard I/K only
    std::vector<ReportDevice> devices;       // --devices only; absent when empty
    nlohmann::json merged_from;              // runner merge only: the shards it was made from
    std::vector<OperationFacts> operations;  // the operation table's facts (make_report_meta fills it)
};
void to_json(nlohmann::json& j, const ReportMeta& m);
// Reads a report's or journal's meta (one made by an earlier kreg too: a key it lacks keeps its default).
// Throws std::invalid_argument naming the key whose value has the wrong type ("/gpu/ceilings/size: ...").
void from_json(const nlohmann::json& j, ReportMeta& m);

// The keys ReportMeta, ReportProgress and ReportDevice write (for the schema test).
std::vector<std::string> report_meta_keys();
std::vector<std::string> report_progress_keys();
std::vector<std::string> report_device_keys();
std::vector<std::string> plugin_facts_keys();

struct MetaInputs {
    std::vector<std::string> argv;
    nlohmann::json config;
    uint64_t seed = 0;
    std::vector<PluginFacts> plugins;
    std::optional<GpuInfo> gpu;  // none when there is none
};

// The meta of a new report: schema_version, kreg_version, git_sha, timestamp (now, UTC) and host filled in.
ReportMeta make_report_meta(const MetaInputs& in);

// The commit kreg was configured from ("unknown" outside a git checkout). Fixed at configure time.
const char* kreg_git_sha();

}  // namespace kreg
