// `runner submit --slurm ...` and `runner grade ... --slurm ...` as library calls: submit's own options
// taken out of a command line, the folder and the job they make, the task and merge commands of a sharded
// sweep or grading run, and the submission itself (the scripts written, the array and its merge handed to
// sbatch, and with --wait followed through scontrol until the merge has ended).
#pragma once

#include "slurm/sbatch_script.hpp"

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace kreg::slurm {

// `runner submit --help`: submit's options, and what the sweep's and the grader's become.
extern const char* const kSubmitHelp;

struct SubmitOptions {
    bool slurm = false, exclusive = false, dry_run = false, wait = false, help = false;
    std::optional<std::string> partition, time_limit, slurm_dir;
    std::optional<int> gpus_per_task, shards;
};

// Takes submit's own options out of args (--name VALUE and --name=VALUE); the rest keeps its order. Throws
// std::invalid_argument naming the option (no --slurm, no --shards, --dry-run with --wait, a bad number...);
// with --help nothing else is checked.
SubmitOptions take_submit_options(const std::vector<std::string>& args, std::vector<std::string>& rest);

// The config's file name as a job name and a folder name: what is not a letter, a digit, '_', '-', '.' or
// '+' becomes '_' ("my sweep%1.json" -> my_sweep_1), so that no character of it reaches a script unchecked.
std::string job_name_of(const std::string& stem);

// DIR: --slurm-dir as given, or kreg-slurm/<name>-<UTC time> (-2, -3, ... when taken); absolute.
std::filesystem::path choose_slurm_dir(const SubmitOptions& o, const std::string& name);

// The job's Slurm requests (name kreg-<name>, --shards tasks, partition, GPUs, exclusive, time, logs in
// DIR/logs), its commands still empty.
ShardedJob base_job(const SubmitOptions& o, const std::string& name, const std::filesystem::path& dir, int gpus);

// A sweep's commands: each task runs `exe SWEEP --shard {task}/K --json DIR/shard-I-of-K.json --csv ...`, the
// merge `exe merge --expect K [--force] [--csv CSV] JSON DIR/shard-*.json`; json and csv are the merged
// report's (the last one given wins; none: DIR/<name>.json and the CSV beside it).
void add_sweep_commands(ShardedJob& job, const std::string& exe, const std::vector<std::string>& sweep,
                        const std::filesystem::path& dir, const std::string& name, const std::vector<std::string>& json,
                        const std::vector<std::string>& csv, bool force);

// A grading run's commands: each task runs `exe grade ARGS --shard {task}/K`, the merge
// `exe merge --expect K OUT OUT/shard-I-of-K...`.
void add_grade_commands(ShardedJob& job, const std::string& exe, const std::vector<std::string>& args,
                        const std::string& out_dir);

// Writes the scripts, submits the array and the merge after it, says on out how to follow and merge by hand
// (errors on err). Exit status: 0 submitted (with --wait: the merge's exit status), 2 a value no script can
// carry, 3 the folder or sbatch failed. With --dry-run prints the scripts and commands and writes nothing.
int submit_sharded_job(const ShardedJob& job, const std::filesystem::path& dir, const SubmitOptions& o,
                       const std::string& what, std::ostream& out, std::ostream& err);

}  // namespace kreg::slurm
