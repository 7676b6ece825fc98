// The meta block of a report: everything needed to understand, reproduce and trust its rows later
// (schema version, kreg version and commit, command line, host, device, plugin versions and hashes).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kreg {

// Semver of the report layout (meta, records, summary, CSV columns). Bump the major version when a
// field is removed or changes meaning, the minor version when one is added.
inline constexpr const char* kReportSchemaVersion = "1.1.0";

// What the report says about one plugin the run tried to load.
struct PluginFacts {
    std::string path, name, version, sha256;
    int abi_major = 0, abi_minor = 0;
    std::string load_error;  // empty when it loaded
};
void to_json(nlohmann::json& j, const PluginFacts& p);  // load_error is null when empty

struct MetaInputs {
    std::vector<std::string> argv;
    nlohmann::json config;
    uint64_t seed = 0;
    std::vector<PluginFacts> plugins;
    nlohmann::json gpu;  // null when there is none
};

// {"schema_version", "kreg_version", "git_sha", "argv", "timestamp" (now, UTC), "host", "gpu",
//  "plugins", "config", "seed"}.
nlohmann::json make_report_meta(const MetaInputs& in);

// The commit kreg was configured from ("unknown" outside a git checkout). Fixed at configure time.
const char* kreg_git_sha();

}  // namespace kreg
