// The two sbatch scripts of a sharded run on Slurm: a job array with one task per shard, and a merge job
// that Slurm starts once every task has ended (`--dependency=afterany:<array id>`, so a failed or killed
// shard still gets its merge, which then names what is missing and how to re-run it).
//
// Every Slurm request is an #SBATCH line of the script, so a script written by --dry-run is what
// `sbatch SCRIPT` submits by hand, and one task of it runs again with `sbatch --array=I SCRIPT`.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kreg::slurm {

// In a word of ArrayJob::task_command, replaced by the task's shard index (1..tasks) when it runs.
inline constexpr const char* kTaskIndex = "{task}";

// What the two scripts ask of Slurm and run.
struct ShardedJob {
    std::string name;                        // job name, e.g. kreg-cpu
    int tasks = 1;                           // K: array tasks 1..K, one per shard
    std::optional<std::string> partition;    // --partition
    int gpus_per_task = 1;                   // --gres=gpu:N; 0 asks for no GPU (a CPU-only sweep)
    bool exclusive = false;                  // --exclusive: no other job on a node while a shard is timed
    std::optional<std::string> time_limit;   // --time, in any format sbatch takes
    std::filesystem::path workdir;           // --chdir: relative paths of the commands resolve here
    std::filesystem::path log_dir;           // each task's and the merge's stdout+stderr
    std::vector<std::string> task_command;   // argv of one shard; kTaskIndex in a word is its index
    std::vector<std::string> merge_command;  // argv of the merge, run once every task has ended
};

// `text` as one POSIX shell word: as it is when it holds only safe characters, else in single quotes.
std::string shell_quote(const std::string& text);
// `text` as one bash word on one line: shell_quote, or $'...' (every control character as an escape) when
// text holds a newline or another control character, so no word of a script's command can split its line.
std::string script_word(const std::string& text);

// A value the scripts cannot carry: option() is the command-line option it came from ("--partition",
// "--time", "--slurm-dir", ...), for a message that says what to change (and exit status 2).
class ScriptValueError : public std::invalid_argument {
public:
    ScriptValueError(std::string option, const std::string& message)
        : std::invalid_argument(option + ": " + message), option_(std::move(option)) {}
    const std::string& option() const { return option_; }

private:
    std::string option_;
};

// Checks every value an #SBATCH line of the scripts would carry, field by field: the partition (a list of
// names: letters, digits, '_', '-', '.', ','), the time limit (one of sbatch's formats: M, M:S, H:M:S,
// D-H, D-H:M, D-H:M:S, UNLIMITED), the job name (letters, digits, '_', '-', '.', '+'), the working folder
// and the log folder (no control character, which would end the #SBATCH line; the log folder no backslash,
// which turns sbatch's %-patterns off). Throws ScriptValueError naming the option. The commands are never
// refused: script_word keeps each of their words on its line.
void check_script_values(const ShardedJob& job);

// The job array script: #SBATCH lines, then `exec` of the task command for this task's shard. Both
// scripts call check_script_values first. #SBATCH values are written for sbatch's own parser (in double
// quotes, with a backslash before each backslash, '"', '\'' and '#'), a '%' of the log folder as "%%"
// (sbatch expands %-patterns in --output); commands are bash words (script_word).
std::string array_script(const ShardedJob& job);
// The merge job's script (no GPU, never exclusive: it only reads reports).
std::string merge_script(const ShardedJob& job);

// Where the logs go (the names the scripts give sbatch's --output), for messages.
std::filesystem::path task_log(const ShardedJob& job, const std::string& task);  // task: "1".."K" or "%a"
std::filesystem::path merge_log(const ShardedJob& job);

// The sbatch command lines: the array, and the merge held until every array task has ended.
std::vector<std::string> sbatch_array_command(const std::filesystem::path& script);
std::vector<std::string> sbatch_merge_command(const std::filesystem::path& script, const std::string& array_job_id);

// argv as one shell command line (each word quoted as needed).
std::string command_line(const std::vector<std::string>& argv);

}  // namespace kreg::slurm
