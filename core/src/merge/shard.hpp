// What a shard of a sweep or of a grading run says about itself, so that `runner merge` can check that K
// shards belong together, and say how to re-run one that is missing or unfinished.
//
// A sweep shard's report carries meta.shard (configs/schema/report.schema.json); a grading shard's folder
// carries gradebook-shard.json (gradebook_shard.hpp). Both name the slice (index of count), the identity of
// what was sliced (the whole plan's sha256, the rubric's sha256) and the command line that made it.
#pragma once

#include "report/shard_meta.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kreg {

// How many of plan_size job ids fall to shard index of count.
uint64_t jobs_in_shard(uint64_t plan_size, int index, int count);

// "shard-2-of-4": the name part a shard's outputs carry.
std::string shard_tag(int index, int count);
// A report path template with every "{shard}" replaced by tag.
std::string with_shard_tag(std::string path_template, const std::string& tag);

// argv with its --shard value (either "--shard V" or "--shard=V") set to "I/K", or "--shard I/K" appended.
std::vector<std::string> argv_with_shard(const std::vector<std::string>& argv, int index, int count);

// "cd DIR && ARGV..." with every word quoted for a POSIX shell where needed ("" cwd: no cd).
std::string shell_command(const std::string& cwd, const std::vector<std::string>& argv);

}  // namespace kreg
