// What `runner submit --slurm` and `runner grade --slurm` find out before anything is handed to Slurm, so
// that a typo fails now and not in K jobs: a sweep's plan and whether it has CUDA kernels (from child
// runners: the submitting process loads no plugin), and a grading run's rubric and submissions.
#pragma once

#include "common/types.hpp"

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kreg {

struct SweepProbe {
    size_t jobs = 0;        // the jobs the plan holds
    bool has_cuda = false;  // a kernel of the plan is a CUDA one (or the kernel list could not be read)
};

// The kernels of `runner ARGS --dry-run`'s plan ("ID  KERNEL  DTYPE  SHAPE  run|skip: ..." lines), and
// how many jobs it holds.
std::set<std::string> planned_kernels(const std::string& dry_run_output, size_t& jobs);
// Whether `runner --list --format json` names one of kernels as a CUDA kernel. Throws on a list it cannot read.
bool lists_cuda_kernel(const std::string& list_json, const std::set<std::string>& kernels);

// The sweep's plan as `exe ARGS --dry-run` prints it, and the backend of every kernel the same plugins give
// (`exe ARGS --list --format json`, without --kernels: the plan may hold more, a baseline). nullopt, after
// saying why on err, when the sweep does not plan; exit_status is then 2 (its command line or config) or 3.
std::optional<SweepProbe> probe_sweep(const std::string& exe, const std::vector<std::string>& args, int& exit_status,
                                      std::ostream& err);

struct GradingProbe {
    size_t students = 0;             // the submissions found
    std::optional<Backend> backend;  // the merged rubric's
};

// The rubrics (--rubric, resolved against the working directory, then configs_dir) and the submissions
// (--submission, --submissions) of a grade command line's words. Throws ConfigError for a bad rubric and
// std::invalid_argument for a command line without a rubric.
GradingProbe probe_grading(const std::vector<std::string>& args, const std::filesystem::path& configs_dir);

}  // namespace kreg
