// SandboxPolicy as JSON, so the runner can hand a worker its policy on the command line.
#pragma once

#include "sandbox/sandbox.hpp"

#include <nlohmann/json.hpp>

namespace kreg {
void to_json(nlohmann::json& j, const SandboxPolicy& p);
void from_json(const nlohmann::json& j, SandboxPolicy& p);  // missing keys keep their defaults
}  // namespace kreg
