// meta.shard of a sweep shard's report: what `runner merge` checks K shards against (merge/shard.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace kreg {

struct SweepShardMeta {
    int index = 1, count = 1;   // slice index (1-based) of count: the jobs whose id % count == index - 1
    uint64_t plan_size = 0;     // jobs in the whole plan (every shard's ids are below it)
    std::string plan_sha256;    // of the whole plan (every job, before slicing): the same in every shard
    std::string config_sha256;  // of meta.config as resolved (the config after command-line overrides)
    std::string cwd;            // where it ran: its argv is re-run from there
};
nlohmann::json to_json(const SweepShardMeta& m);
void to_json(nlohmann::json& j, const SweepShardMeta& m);
// Throws std::invalid_argument naming the JSON path under meta.shard and what is wrong.
SweepShardMeta sweep_shard_meta_from_json(const nlohmann::json& j);
void from_json(const nlohmann::json& j, SweepShardMeta& m);

}  // namespace kreg
