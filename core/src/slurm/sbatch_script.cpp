#include "sbatch_script.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <regex>
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
        if (!literal.empty()) out += script_word(literal);
        if (at == std::string::npos) break;
        out += "\"${SLURM_ARRAY_TASK_ID}\"";
        start = at + std::string(kTaskIndex).size();
    }
    return out.empty() ? "''" : out;
}

bool has_control_character(const std::string& text) {
    return std::any_of(text.begin(), text.end(), [](char c) { return (unsigned char)c < 0x20 || c == 0x7f; });
}

bool only_of(const std::string& text, const char* extra) {
    return std::all_of(text.begin(), text.end(), [&](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::strchr(extra, c) != nullptr;
    });
}

// sbatch's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S (each a run of digits), or UNLIMITED/INFINITE.
bool is_time_limit(const std::string& text) {
    static const std::regex kFormats("[0-9]+(:[0-9]+){0,2}|[0-9]+-[0-9]+(:[0-9]+){0,2}|UNLIMITED|INFINITE",
                                     std::regex::icase);
    return text.size() <= 32 && std::regex_match(text, kFormats);
}

// Printed in messages: the value with its control characters visible.
std::string shown(const std::string& text) {
    std::string out;
    for (char c : text) {
        if ((unsigned char)c < 0x20 || c == 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", (unsigned char)c);
            out += escaped;
        } else {
            out += c;
        }
    }
    return "'" + out + "'";
}

// A value of an #SBATCH line as sbatch reads it back (its parser, src/sbatch/opt.c: a backslash takes the
// next character as it is, quotes group, an unquoted '#' starts a comment, the line ends at '\n'): plain
// when it holds only safe characters, else in double quotes with a backslash before '\\', '"', '\'' and '#'.
// check_script_values has made sure there is no control character.
std::string sbatch_value(const std::string& text) {
    if (!text.empty() && only_of(text, "_-+=./,:@%")) return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '\\' || c == '"' || c == '\'' || c == '#') out += '\\';
        out += c;
    }
    return out + "\"";
}

// An --output file name pattern: sbatch expands %-patterns there, so a '%' of the folder is "%%".
std::string output_pattern(const std::filesystem::path& log_dir, const std::string& file_pattern) {
    std::string dir;
    for (char c : log_dir.string()) dir += c == '%' ? std::string("%%") : std::string(1, c);
    return sbatch_value((std::filesystem::path(dir) / file_pattern).string());
}

void common_directives(std::ostringstream& s, const ShardedJob& job, const std::string& name) {
    s << "#SBATCH --job-name=" << sbatch_value(name) << "\n";
    if (job.partition) s << "#SBATCH --partition=" << sbatch_value(*job.partition) << "\n";
    if (job.time_limit) s << "#SBATCH --time=" << sbatch_value(*job.time_limit) << "\n";
    s << "#SBATCH --chdir=" << sbatch_value(job.workdir.string()) << "\n";
}

}  // namespace

std::string shell_quote(const std::string& text) {
    if (text.empty()) return "''";
    bool safe = true;
    for (char c : text) safe = safe && shell_safe(c);
    if (safe) return text;
    std::string out = "'";
    for (char c : text) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string script_word(const std::string& text) {
    if (!has_control_character(text)) return shell_quote(text);
    // bash's $'...': a backslash escape for every control character, '\\' and '\''; the rest as it is.
    std::string out = "$'";
    for (char c : text) {
        if (c == '\\' || c == '\'') {
            out += '\\';
            out += c;
        } else if ((unsigned char)c < 0x20 || c == 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", (unsigned char)c);
            out += escaped;
        } else {
            out += c;
        }
    }
    return out + "'";
}

void check_script_values(const ShardedJob& job) {
    if (job.partition && (job.partition->empty() || job.partition->size() > 200 || !only_of(*job.partition, "_-.,")))
        throw ScriptValueError("--partition", "partition " + shown(*job.partition) +
                                                  " is not a partition name (letters, digits, '_', '-', '.'; several "
                                                  "separated by ',')");
    if (job.time_limit && !is_time_limit(*job.time_limit))
        throw ScriptValueError("--time",
                               "time limit " + shown(*job.time_limit) +
                                   " is not one of sbatch's formats: minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S "
                                   "or UNLIMITED");
    if (job.name.empty() || job.name.size() > 200 || !only_of(job.name, "_-.+"))
        throw ScriptValueError("--config", "job name " + shown(job.name) +
                                               " (made from the config's file name) holds other characters than "
                                               "letters, digits, '_', '-', '.' and '+'");
    if (has_control_character(job.workdir.string()))
        throw ScriptValueError("working directory", shown(job.workdir.string()) +
                                                        " holds a control character, which no #SBATCH line can carry; "
                                                        "submit from another folder");
    if (has_control_character(job.log_dir.string()) || job.log_dir.string().find('\\') != std::string::npos)
        throw ScriptValueError("--slurm-dir", "the log folder " + shown(job.log_dir.string()) +
                                                  " holds a control character or a backslash, which sbatch's --output "
                                                  "cannot take; give another --slurm-dir");
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
    check_script_values(job);
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# Written by kreg's runner: one array task per shard; task I runs shard I of " << job.tasks << ".\n"
      << "# Submit by hand: sbatch "
      << "THIS_FILE; run one shard again: sbatch --array=I THIS_FILE\n";
    common_directives(s, job, job.name);
    s << "#SBATCH --array=1-" << job.tasks << "\n"
      << "#SBATCH --ntasks=1\n";
    if (job.gpus_per_task > 0) s << "#SBATCH --gres=gpu:" << job.gpus_per_task << "\n";
    if (job.exclusive) s << "#SBATCH --exclusive\n";
    // %a is the array task id: one log per shard, the same name when the shard runs again.
    s << "#SBATCH --output=" << output_pattern(job.log_dir, task_log(job, "%a").filename().string()) << "\n\n";
    s << "exec";
    for (const auto& word : job.task_command) s << " " << task_word(word);
    s << "\n";
    return s.str();
}

std::string merge_script(const ShardedJob& job) {
    check_script_values(job);
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# Written by kreg's runner: merges the " << job.tasks << " shards once every array task has ended.\n";
    common_directives(s, job, job.name + "-merge");
    s << "#SBATCH --ntasks=1\n"
      << "#SBATCH --output=" << output_pattern(job.log_dir, merge_log(job).filename().string()) << "\n\n"
      << "exec";
    for (const auto& word : job.merge_command) s << " " << script_word(word);
    s << "\n";
    return s.str();
}

std::vector<std::string> sbatch_array_command(const std::filesystem::path& script) {
    return {"sbatch", "--parsable", script.string()};
}

std::vector<std::string> sbatch_merge_command(const std::filesystem::path& script, const std::string& array_job_id) {
    return {"sbatch", "--parsable", "--dependency=afterany:" + array_job_id, script.string()};
}

}  // namespace kreg::slurm
