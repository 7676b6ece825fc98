#include "job_state.hpp"

#include "common/text.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace kreg::slurm {
namespace {

bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// KEY=VALUE of one `scontrol -o` line. Values do not hold spaces except the last fields of a line
// (Command=, WorkDir=), which are not read here.
std::string field(const std::string& line, const std::string& key) {
    size_t at = 0;
    while ((at = line.find(key + "=", at)) != std::string::npos) {
        if (at == 0 || line[at - 1] == ' ') {
            const size_t start = at + key.size() + 1;
            const size_t end = line.find(' ', start);
            return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
        }
        at += key.size();
    }
    return "";
}

}  // namespace

std::string parse_sbatch_job_id(const std::string& sbatch_stdout) {
    std::istringstream lines(sbatch_stdout);
    std::string line, last;
    while (std::getline(lines, line))
        if (!trim(line).empty()) last = trim(line);
    const std::string id = last.substr(0, last.find(';'));
    if (!all_digits(id))
        throw std::runtime_error("sbatch --parsable printed no job id: '" + std::string(trim(sbatch_stdout)) + "'");
    return id;
}

std::vector<JobLine> parse_scontrol_jobs(const std::string& text) {
    std::vector<JobLine> out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        JobLine j;
        j.job_id = field(line, "JobId");
        if (j.job_id.empty()) continue;
        j.array_task_id = field(line, "ArrayTaskId");
        j.state = field(line, "JobState");
        j.reason = field(line, "Reason");
        const std::string exit = field(line, "ExitCode");
        const size_t colon = exit.find(':');
        if (colon != std::string::npos && all_digits(exit.substr(0, colon)) && all_digits(exit.substr(colon + 1))) {
            j.exit_code = std::stoi(exit.substr(0, colon));
            j.signal = std::stoi(exit.substr(colon + 1));
        }
        out.push_back(j);
    }
    return out;
}

bool is_final_state(const std::string& state) {
    static const char* const kFinal[] = {"COMPLETED",     "FAILED",       "CANCELLED", "TIMEOUT",
                                         "NODE_FAIL",     "PREEMPTED",    "BOOT_FAIL", "DEADLINE",
                                         "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED"};
    // scontrol may add flags after a '+'; the base state decides.
    const std::string base = state.substr(0, state.find('+'));
    return std::find(std::begin(kFinal), std::end(kFinal), base) != std::end(kFinal);
}

bool all_final(const std::vector<JobLine>& jobs) {
    return !jobs.empty() &&
           std::all_of(jobs.begin(), jobs.end(), [](const JobLine& j) { return is_final_state(j.state); });
}

int exit_status_of(const JobLine& job) {
    if (job.signal != 0) return 128 + job.signal;
    if (job.state.rfind("COMPLETED", 0) == 0) return job.exit_code;
    return job.exit_code != 0 ? job.exit_code : 1;
}

}  // namespace kreg::slurm
