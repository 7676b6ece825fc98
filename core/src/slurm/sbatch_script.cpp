#include "sbatch_script.hpp"

#include <sstream>

namespace kreg::slurm {
namespace {

bool shell_safe(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string("_-+=./,:@%").find(c) != std::string::npos;
}

// A word of the task command: literal parts quoted, the shard index as "${SLURM_ARRAY_TASK_ID}" (the
// array runs tasks 1..K, so the task id is the shard index itself).
std::string task_word(const std::string& word) {
    std::string out;
    size_t start = 0;
    for (;;) {
        const size_t at = word.find(kTaskIndex, start);
        const std::string literal = word.substr(start, at == std::string::npos ? std::string::npos : at - start);
        if (!literal.empty()) out += shell_quote(literal);
        if (at == std::string::npos) break;
        out += "\"${SLURM_ARRAY_TASK_ID}\"";
        start = at + std::string(kTaskIndex).size();
    }
    return out.empty() ? "''" : out;
}

void common_directives(std::ostringstream& s, const ShardedJob& job, const std::string& name) {
    s << "#SBATCH --job-name=" << shell_quote(name) << "\n";
    if (job.partition) s << "#SBATCH --partition=" << shell_quote(*job.partition) << "\n";
    if (job.time_limit) s << "#SBATCH --time=" << shell_quote(*job.time_limit) << "\n";
    s << "#SBATCH --chdir=" << shell_quote(job.workdir.string()) << "\n";
}

}  // namespace

std::string shell_quote(const std::string& text) {
    if (text.empty()) return "''";
    bool safe = true;
    for (char c : text) safe = safe && shell_safe(c);
    if (safe) return text;
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

std::string command_line(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& word : argv) out += (out.empty() ? "" : " ") + shell_quote(word);
    return out;
}

std::filesystem::path task_log(const ShardedJob& job, const std::string& task) {
    return job.log_dir / ("shard-" + task + "-of-" + std::to_string(job.tasks) + ".log");
}

std::filesystem::path merge_log(const ShardedJob& job) { return job.log_dir / "merge.log"; }

std::string array_script(const ShardedJob& job) {
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# Written by kreg's runner: one array task per shard; task I runs shard I of " << job.tasks << ".\n"
      << "# Submit by hand: sbatch " << "THIS_FILE; run one shard again: sbatch --array=I THIS_FILE\n";
    common_directives(s, job, job.name);
    s << "#SBATCH --array=1-" << job.tasks << "\n"
      << "#SBATCH --ntasks=1\n";
    if (job.gpus_per_task > 0) s << "#SBATCH --gres=gpu:" << job.gpus_per_task << "\n";
    if (job.exclusive) s << "#SBATCH --exclusive\n";
    // %a is the array task id: one log per shard, the same name when the shard runs again.
    s << "#SBATCH --output=" << shell_quote(task_log(job, "%a").string()) << "\n\n";
    s << "exec";
    for (const auto& word : job.task_command) s << " " << task_word(word);
    s << "\n";
    return s.str();
}

std::string merge_script(const ShardedJob& job) {
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# Written by kreg's runner: merges the " << job.tasks << " shards once every array task has ended.\n";
    common_directives(s, job, job.name + "-merge");
    s << "#SBATCH --ntasks=1\n"
      << "#SBATCH --output=" << shell_quote(merge_log(job).string()) << "\n\n"
      << "exec " << command_line(job.merge_command) << "\n";
    return s.str();
}

std::vector<std::string> sbatch_array_command(const std::filesystem::path& script) {
    return {"sbatch", "--parsable", script.string()};
}

std::vector<std::string> sbatch_merge_command(const std::filesystem::path& script, const std::string& array_job_id) {
    return {"sbatch", "--parsable", "--dependency=afterany:" + array_job_id, script.string()};
}

}  // namespace kreg::slurm
