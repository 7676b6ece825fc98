// What a sandbox applied and what it could not: the report, on every system (sandbox.hpp).
#include "sandbox/sandbox.hpp"

namespace kreg {

bool SandboxReport::has_applied(std::string_view step) const {
    for (const std::string& entry : applied) {
        const std::string_view name = std::string_view(entry).substr(0, entry.find(": "));
        if (name == step) return true;
    }
    return false;
}

nlohmann::json SandboxReport::to_json() const { return {{"applied", applied}, {"unavailable", unavailable}}; }

SandboxReport SandboxReport::from_json(const nlohmann::json& j) {
    SandboxReport report;
    report.applied = j.value("applied", std::vector<std::string>{});
    report.unavailable = j.value("unavailable", std::vector<std::string>{});
    return report;
}

}  // namespace kreg
