// What sbatch and scontrol print, read into plain data. There is no accounting database to ask (sacct)
// on many small clusters; `scontrol show job -o` knows a job until MinJobAge after it ends.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kreg::slurm {

// The job id from `sbatch --parsable` ("123" or "123;cluster"). Throws std::runtime_error quoting the
// output when it holds none.
std::string parse_sbatch_job_id(const std::string& sbatch_stdout);

// One line of `scontrol show job -o ID`: a job, one task of an array, or a range of pending tasks.
struct JobLine {
    std::string job_id;         // JobId
    std::string array_task_id;  // ArrayTaskId ("3", or "2-4" for pending tasks); "" outside arrays
    std::string state;          // JobState: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ...
    int exit_code = 0;          // ExitCode=E:S, the script's exit status ...
    int signal = 0;             // ... and the signal that ended it
    std::string reason;         // Reason (None, Dependency, NonZeroExitCode, ...)
};

// Every job line of `scontrol show job -o` output; lines without a JobId are ignored.
std::vector<JobLine> parse_scontrol_jobs(const std::string& text);

// A state after which the job never runs again (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...).
bool is_final_state(const std::string& state);

// Whether every line is final (false for none).
bool all_final(const std::vector<JobLine>& jobs);

// The exit status a job's end stands for: its exit code, 128 + the signal that killed it, or 1 when it
// ended without running its script (cancelled while pending, a failed node).
int exit_status_of(const JobLine& job);

}  // namespace kreg::slurm
