// A grading run as a library object: `runner grade` on one machine is one GradeRun, whose phases return typed
// values: options (rubric, secret seed, trusted plugins) → submissions → the shard's slice → the lanes → the
// confinement check → grading → the exit status. The command line parses its options into a GradeRequest and
// maps a RunError onto an exit status. --devices and --jobs grade in lanes (run/lanes.hpp), as a sweep's
// --devices runs its CUDA jobs: one thread and one Grader per lane, every result recorded into the one
// gradebook as it arrives.
#pragma once

#include "grade/grader.hpp"
#include "grade/submission.hpp"
#include "run/device_lanes.hpp"
#include "run/run_error.hpp"
#include "run/sweep_request.hpp"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
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
    std::optional<DevicesSpec> devices;  // --devices: one lane per GPU
    int jobs = 1;                        // --jobs N: N lanes on this machine's CPUs
    std::vector<std::string> argv;       // "grade" and its options, for a shard's manifest
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

// One lane of a grading run: the GPU its workers see alone ("": the runner's own), the mark on its progress
// lines, and for --jobs the CPU its CPU rubrics' workers time on.
struct GradeLane {
    std::string uuid;
    std::string mark;
    std::optional<int> timing_cpu;
};

// The lanes of request: one per GPU of gpus (--devices), or request.jobs on the CPUs (--jobs), else one.
std::vector<GradeLane> grade_lanes(const GradeRequest& request, const std::vector<DeviceLane>& gpus);

// A lane's grader options: base with its workers on the lane's GPU (as device 0) and, with several CPU lanes,
// its timing CPU and the timed tiers' lock the lanes share (out/.timed-tiers.lock).
GradeOptions lane_grade_options(const GradeOptions& base, const GradeLane& lane, size_t lanes);

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
    // The lanes it grades in; --devices: the GPUs named, each read in an ordinary worker (kreg's code only).
    std::vector<GradeLane> lanes() const;
    void check_confinement(const GradeOptions& options) const;
    // Where this build cannot confine (GradeOptions::unconfined_self_check): what it refuses, exit 3 with the reason,
    // before any submission is read: anything but one student's own plugin against a published rubric (several
    // submissions, --jobs, --devices, --shard), and what a worker must never see (a secret seed, hidden cases).
    void check_self_check(const GradeOptions& options) const;
    int grade(const GradeOptions& options, const std::vector<Submission>& submissions,
              const std::vector<GradeLane>& lanes) const;

private:
    GradeRunSummary grade_in_lanes(std::vector<std::unique_ptr<Grader>>& graders, const std::vector<GradeLane>& lanes,
                                   const std::vector<Submission>& submissions) const;
    int finish(const Gradebook& gradebook, const std::vector<Submission>& submissions) const;

    GradeRequest request_;
    GradeEnvironment environment_;
    std::ostream& log_;
    std::ostream& out_;
};

}  // namespace kreg
