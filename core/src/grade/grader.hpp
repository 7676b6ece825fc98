// `runner grade`: every submission is built (if it is a folder), audited, loaded and run only inside
// hardened workers, checked against the rubric's correctness cases, and timed against trusted
// reference kernels measured in the same run. One submission's crash, hang or cheat costs only its
// own grade. Results land in a Gradebook as each student finishes, so a killed run resumes.
#pragma once

#include "grade/gradebook.hpp"
#include "grade/rubric.hpp"
#include "grade/submission.hpp"
#include "grade/timing_claims.hpp"
#include "plugin/kernel_meta.hpp"
#include "sandbox/sandbox.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

class Executor;
struct ExecutorOptions;
struct Record;

struct GradeOptions {
    Rubric rubric;
    std::filesystem::path out_dir = "grades";
    bool force = false;                                    // re-grade students who already have a result
    uint64_t secret = 0;                                   // mixed into every case seed; 0: none
    std::string runner_exe;                                // for the workers
    std::vector<std::filesystem::path> reference_plugins;  // trusted plugins providing the reference kernels
    std::filesystem::path kreg_prefix;                     // the kreg package submissions are built against
    int device = 0;
    // A lane of runner grade --devices: every worker of this grader sees this GPU (its UUID) alone, as device 0.
    // Empty: workers see what the runner sees.
    std::string cuda_visible_devices;
    SandboxPolicy sandbox;                   // for every worker that touches a submission
    bool tolerate_static_libstdcxx = false;  // see AuditPolicy::tolerated_with_static_libstdcxx
    bool verbose = false;
    // A lock file the graders of several lanes share (runner grade --jobs): each holds it (flock) while it times
    // tiers, so that one's timed runs never share the machine with another's. Empty: no lock.
    std::filesystem::path timed_tier_lock;
    // A rubric whose tiers all time CPU kernels: every worker of a submission and of its references starts on
    // this CPU and stays there, so the grader's CPU clock bounds each call (grade/timing_claims.hpp). -1: none.
    int timing_cpu = -1;
    // A student's self-check where this build cannot confine untrusted code (Windows; grade/self_check.hpp): no
    // sandbox for the submission's workers, a Windows library (PE) not audited (the audit reads ELF), every call
    // checked inside the worker (a strict run: fresh inputs, C poisoned, the fp64 reference) instead of outside it,
    // so no calibration of the grader's clock bound and no timing CPU, and no class page. Every result records it
    // (StudentResult::unconfined_self_check) with the defences that did not apply.
    bool unconfined_self_check = false;
};

// What one grading run (begin_run ... end_run) did, for the console's last words.
struct GradeRunSummary {
    size_t submissions = 0;             // to grade
    size_t already_graded = 0;          // kept: graded before from the same inputs
    size_t graded_now = 0;              // graded and recorded by this run
    bool confinement_reported = false;  // the first worker's sandbox report was printed
    int stop_signal = 0;  // SIGINT or SIGTERM when a stop ended the run early (worker/stop_request.hpp), else 0
    size_t finished() const { return already_graded + graded_now; }
};

// The largest C a rubric's runs export (bytes): the sandbox's file size limit must let the worker write it.
uint64_t largest_output_bytes(const Rubric& rubric);

// Grader::graded_with_another_seed for any gradebook folder (the merged one of --jobs), against secret (0: none).
std::vector<std::string> graded_with_another_seed_than(const Gradebook& gradebook, uint64_t secret, bool with_secret);

class Grader {
public:
    explicit Grader(GradeOptions options);
    ~Grader();

    // A grading run's steps, driven by GradeRun in one lane or several at once (run/grade_run.cpp: one Grader
    // per lane, all on one out folder). begin_run before anyone (the removed submissions marked); grade_student
    // in the lane's thread: a submission not graded yet, or graded from other inputs than now (a changed
    // submission, rubric, secret seed or kreg version: grade/provenance.hpp), or whose result ended in "error"
    // (the grader's failure, not the student's), and with force every one, is graded (nullopt: its stored
    // result stands, as progress said; counter: "[i/N] "); take_result one at a time, on any lane's grader:
    // the result recorded and reported, counted in run, unless a stop request (worker/stop_request.hpp) came
    // while it was graded (then nothing of the student is recorded); end_run after everyone (the class page,
    // the stop). progress gets one line per student and per failed check.
    void begin_run(const std::vector<Submission>& submissions, const std::function<void(const std::string&)>& progress);
    std::optional<StudentResult> grade_student(const Submission& s, const std::string& counter,
                                               const std::function<void(const std::string&)>& progress);
    void take_result(const Submission& s, std::optional<StudentResult> result, const std::string& counter,
                     const std::function<void(const std::string&)>& progress, GradeRunSummary& run);
    void end_run(GradeRunSummary& run, const std::function<void(const std::string&)>& progress);

    // The seed guard: the students whose stored result was graded with another secret seed than this run's
    // (or none), sorted; with_secret: only those whose result was graded with a secret seed (the ones a run
    // without that seed must not overwrite unless asked to, --reseed).
    std::vector<std::string> graded_with_another_seed(bool with_secret) const;
    // Moves those results (and their student views) to <out>/replaced-seed/ and rewrites the CSV, before
    // anyone is graded with this run's seed: a run stopped halfway then leaves a gradebook of one seed.
    void set_aside_results_of_another_seed();

    // provenance: what the submission is graded from (grade/provenance.hpp), when the caller has it already.
    StudentResult grade(const Submission& submission, const nlohmann::json& provenance = nullptr);
    Gradebook& gradebook() { return gradebook_; }

private:
    // The published seeds of performance runs (the submission's is mixed with the secret; the trusted
    // reference's is not: its inputs are no secret).
    static constexpr uint64_t kPerformanceSeed = 7, kReferenceSeed = 1;

    // grade()'s phases (grade/grade_submission.cpp), each on the submission being graded: the copy ceiling
    // recorded, the build, the static audit, the load and the kernel picked (false: grading ends, with the
    // status and summary the phase set), then the correctness cases and the performance tiers.
    struct InProgress;
    void record_copy_ceiling(InProgress& g);
    bool build_phase(InProgress& g);
    bool audit_phase(InProgress& g);
    ExecutorOptions submission_worker_options() const;
    // One of the submission's jobs as this grader checks it: outside the worker (run_checked_outside), or inside it
    // in an unconfined self-check. allowance: the bound on its timing claims (computed only when checked outside).
    Record run_submission_job(Executor& executor, const Job& job, const std::function<HarnessAllowance()>& allowance);
    bool load_phase(InProgress& g, Executor& executor);
    bool pick_kernel(InProgress& g);
    bool check_kernel_fits_rubric(InProgress& g);
    void grade_correctness_case(InProgress& g, Executor& executor, const CorrectnessCase& c);
    void grade_performance(InProgress& g, Executor& executor);
    void grade_tier_group(InProgress& g, Executor& executor, const std::vector<size_t>& group,
                          std::vector<std::optional<CheckResult>>& tier_checks);
    // The paired rounds of a group of tiers of one shape: the submission's, and each reference's.
    struct TierGroupRounds;
    void run_tier_rounds(InProgress& g, Executor& executor, const std::vector<size_t>& group, TierGroupRounds& rounds);
    bool references_measured(const TierGroupRounds& rounds, const std::vector<size_t>& group) const;
    // The physics check on one of the submission's rounds: its roofline floor, or why there is none.
    void annotate_floor(Record& mine, Backend backend);

    // One round of a tier's reference at shape (round 0 warms up fully), in the trusted worker of the
    // kernel's plugin, which stays alive until finish_reference_rounds().
    Record measure_reference_round(const std::string& kernel, const Shape& shape, int round);
    void finish_reference_rounds();
    // The reference plugin's trusted worker, alive through the rounds of a shape.
    Executor& reference_worker(const std::string& plugin);
    // What every worker of this grader starts with: the runner, its verbosity and the CPU rubrics' timing CPU.
    ExecutorOptions worker_options() const;
    // The harness's own work inside the grader's window around one call at shape (grade/timing_claims.hpp),
    // measured with a trusted reference kernel: for a CPU submission right before each of its rounds (call it
    // once a round), in that reference's worker; for a CUDA one once per shape. No bound (and why) when none
    // could be measured. backend: the graded kernel's; a trusted kernel of the rubric's operation and that
    // backend serves when no tier's reference does (a rubric whose tiers are all against the copy ceiling).
    HarnessAllowance harness_allowance(const Shape& shape, Backend backend);
    // This GPU's facts and measured ceilings (Executor::device_info), measured once per run in a fresh
    // trusted worker that loads no submission: the copy ceiling a tier is judged against must not be
    // measurable while a submission's worker (and anything it left running) is alive, so a rubric with
    // copy-ceiling tiers measures it before the first submission is built or loaded.
    const nlohmann::json& gpu_facts_and_ceilings();
    nlohmann::json run_meta() const;
    // Marks every stored result whose submission is neither among submissions nor on disk any more as
    // submission_removed (and clears the mark of one that is back), saying so through progress.
    void mark_removed_submissions(const std::vector<Submission>& submissions,
                                  const std::function<void(const std::string&)>& progress);
    // grade_student's and take_result's steps: whether its stored result stands (saying so, or why it is graded
    // again), recording its result (false: nothing could be recorded), and its files and console lines.
    bool keeps_stored_result(const Submission& s, const nlohmann::json& current, const std::string& counter,
                             const std::function<void(const std::string&)>& progress) const;
    bool record_result(const Submission& s, StudentResult& r, const std::string& counter,
                       const std::function<void(const std::string&)>& progress);
    void report_student(const Submission& s, const StudentResult& r, const std::string& counter,
                        const std::function<void(const std::string&)>& progress);
    // The status of student's stored result, "" when there is none that reads back.
    std::string previous_status(const std::string& student) const;

    GradeOptions options_;
    Gradebook gradebook_;
    std::string rubric_hash_;                            // of the merged rubric (grade/provenance.hpp)
    std::unique_ptr<Executor> trusted_;                  // reference kernels: ordinary workers
    std::map<std::string, std::string> reference_path_;  // reference kernel -> plugin file
    std::map<std::string, KernelMeta> reference_meta_;   // reference kernel -> what its plugin said of it
    std::map<std::string, std::unique_ptr<Executor>> reference_workers_;  // plugin file -> its trusted worker
    std::optional<nlohmann::json> gpu_;                                   // facts and measured ceilings, once per run
    std::optional<double> host_flops_;                                    // the host's measured fp32 peak, once per run
    std::map<std::string, HarnessAllowance> allowance_cache_;             // "MxNxK/backend" -> harness_allowance (CUDA)
};

}  // namespace kreg
