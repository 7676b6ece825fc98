// A record's evidence as the report writes it: tests assert on the JSON, so every assertion on an extra
// also checks its serialization (common/record_extras.hpp).
#pragma once

#include "common/job.hpp"

#include <nlohmann/json.hpp>

namespace kreg {
inline nlohmann::json extra_json(const Record& r) { return r.extra; }
}  // namespace kreg
