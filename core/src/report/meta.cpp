#include "report/meta.hpp"

#include "common/host_info.hpp"

// Set by core/src/report/CMakeLists.txt on this file only, so that a new commit rebuilds nothing else.
#ifndef KREG_GIT_SHA
#define KREG_GIT_SHA "unknown"
#endif

namespace kreg {

const char* kreg_git_sha() { return KREG_GIT_SHA; }

void to_json(nlohmann::json& j, const PluginFacts& p) {
    j = {{"path", p.path},
         {"name", p.name},
         {"version", p.version},
         {"sha256", p.sha256},
         {"abi_major", p.abi_major},
         {"abi_minor", p.abi_minor},
         {"load_error", p.load_error.empty() ? nlohmann::json() : nlohmann::json(p.load_error)}};
}

nlohmann::json make_report_meta(const MetaInputs& in) {
    return {{"schema_version", kReportSchemaVersion},
            {"kreg_version", KREG_VERSION},
            {"git_sha", kreg_git_sha()},
            {"argv", in.argv},
            {"timestamp", utc_timestamp_iso8601()},
            {"host", host_info()},
            {"gpu", in.gpu},
            {"plugins", in.plugins},
            {"config", in.config},
            {"seed", in.seed}};
}

}  // namespace kreg
