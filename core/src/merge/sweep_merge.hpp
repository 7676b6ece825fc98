// `runner merge` for sweeps: K shard reports (runner --shard I/K) checked against each other and made into
// one report in the format of a single run (configs/schema/report.schema.json), its meta saying which
// shards it was merged from. Each shard is read from its journal, the record of every row it finished, so
// a shard whose runner died before its last render still merges.
#pragma once

#include "common/baseline.hpp"
#include "common/job.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// One reason merge refuses. Every message starts with the file it is about.
struct MergeProblem {
    enum class Kind {
        mismatch,    // unreadable, not a shard, shards that do not belong together, a duplicate: exit 2
        incomplete,  // a shard missing or unfinished: exit 3, with the command that re-runs it
    };
    Kind kind = Kind::mismatch;
    std::string message;
    std::string rerun;  // the shell command that makes or finishes the shard ("" for a mismatch)
};

struct SweepMerge {
    std::vector<MergeProblem> problems;  // empty: the merge may be written
    // The merged report, when problems is empty.
    nlohmann::json meta;    // the first shard's meta: argv without --shard, no meta.shard, meta.merged_from
    nlohmann::json header;  // the merged journal's header (as a single run's: argv, cwd, planned, plan_sha256...)
    Baseline baseline;
    std::vector<Record> records;  // every job of the plan once, by job id
};

// Reads and checks the shard reports (each a .json report or its .journal.jsonl).
SweepMerge merge_sweep_shards(int expect, const std::vector<std::filesystem::path>& reports);

// Writes the merged report: its journal next to json (journal_path_for), then the JSON and the CSV,
// rendered as a single run renders them. Overwrites only with force; throws std::runtime_error naming
// the file otherwise, and when a write fails.
void write_sweep_merge(const SweepMerge& merge, const std::filesystem::path& json, const std::filesystem::path& csv,
                       bool force);

// A report's "baseline" (null, a kernel name, or {dtype: kernel}) back as a Baseline; throws
// std::invalid_argument saying what is wrong.
Baseline baseline_from_json(const nlohmann::json& j);

}  // namespace kreg
