// A grading run as a library object: `runner grade` on one machine (no --jobs, no --devices) is one
// GradeRun, whose phases return typed values: options (rubric, secret seed, trusted plugins) → submissions
// → the shard's slice → the confinement check → grading → the exit status. The command line parses its
// options into a GradeRequest and maps a RunError onto an exit status.
#pragma once

#include "grade/grader.hpp"
#include "grade/submission.hpp"
#include "run/run_error.hpp"
#include "run/sweep_request.hpp"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// What `runner grade` is asked to do, once its options are parsed.
struct GradeRequest {
    std::vector<std::string> rubrics;            // --rubric, the published one first, then staff-only files
    std::vector<std::string> submissions;        // --submission
    std::optional<std::string> submissions_dir;  // --submissions
    std::string out = "grades";
    bool force = false;
    bool reseed = false;
    std::optional<std::string> secret_seed;  // --secret-seed as typed; else $KREG_SECRET_SEED
    int device = 0;
    std::vector<std::string> plugin_dirs;  // trusted reference plugins; empty: the runner's own folder
    bool allow_no_landlock = false;
    bool allow_static_libstdcxx = false;
    bool verbose = false;
    std::optional<Shard> shard;
    std::optional<double> fail_under;
    std::optional<std::string> timed_tier_lock;  // a shard of --jobs: the lock its timed tiers take
    std::vector<std::string> argv;               // "grade" and its options, for a shard's manifest
};

struct GradeEnvironment {
    std::filesystem::path runner_exe;
    std::filesystem::path configs_dir;  // where --rubric NAME is looked for
};

// The rubric and settings every submission is graded with, and the rubric files as loaded.
struct GradePlan {
    GradeOptions options;
    std::vector<std::string> rubric_files;
};

// The seed guard's refusal, naming every student whose secret-seed result the run would overwrite.
std::string seed_change_refusal(const std::filesystem::path& out, const std::vector<std::string>& students,
                                uint64_t secret);

class GradeRun {
public:
    GradeRun(GradeRequest request, GradeEnvironment environment, std::ostream& log, std::ostream& out);

    // Every phase in order. Returns 0 every submission graded, 1 some could not be (status error), 4 a score
    // below --fail-under, 128 + signal when stopped. Throws RunError when it cannot go on.
    int execute();

    // The phases, each usable alone.
    GradePlan plan() const;
    std::vector<Submission> submissions() const;
    // --shard: this shard's slice of the sorted submissions; its manifest written, its folder in plan.options.
    std::vector<Submission> take_shard(std::vector<Submission> all, GradePlan& plan) const;
    void check_confinement(const GradeOptions& options) const;
    int grade(const GradeOptions& options, const std::vector<Submission>& submissions) const;

private:
    int finish(const Gradebook& gradebook, const std::vector<Submission>& submissions) const;

    GradeRequest request_;
    GradeEnvironment environment_;
    std::ostream& log_;
    std::ostream& out_;
};

}  // namespace kreg
