// Grader::grade as its phases: the copy ceiling recorded, the build, the static audit, the load in a hardened
// worker, the correctness cases, then the performance tiers in paired rounds against trusted references.
#include "grade/grader.hpp"

#include "audit/so_audit.hpp"
#include "common/elapsed.hpp"
#include "common/gpu_info.hpp"
#include "common/host_info.hpp"
#include "common/library_format.hpp"
#include "common/operation_table.hpp"
#include "grade/compiler_error.hpp"
#include "grade/outcome.hpp"
#include "grade/paired_ratio.hpp"
#include "platform/file_io.hpp"
#include "grade/provenance.hpp"
#include "grade/self_check.hpp"
#include "grade/student_view.hpp"
#include "grade/timing_claims.hpp"
#include "grade/verdict.hpp"
#include "measure/host_ceiling.hpp"
#include "measure/roofline.hpp"
#include "ops/operation.hpp"
#include "ops/output_export.hpp"
#include "sweep/executor.hpp"
#include "verify/verify_gemm.hpp"
#include "worker/stop_request.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>

namespace kreg {
namespace fs = std::filesystem;

namespace {

// What a correctness row's extra.timing_claims says instead of an allowance.
constexpr const char* kCorrectnessRunsAreNotBounded =
    "a correctness run: no tier uses its time, so its claims are checked against their windows (a claim longer "
    "than its window is a protocol violation) but not bounded from below; the grade does not depend on them";

// Runs a strict job of the submission checked outside its worker: this process issues every call's input
// seed right before the call and takes every call's output, sealed, right after it (sweep/checked_calls.hpp),
// then checks each output here, against inputs it drew itself: the verdict is this process's, and the
// expected output never exists where the submission runs. That holds for correctness runs and for every
// call of performance runs alike. The worker's timings are claims: they must agree with the outputs it
// handed over and fit in the windows this process saw (grade/timing_claims.hpp); where the claimed median
// is faster than this process's clock allows, the row's time is the clock's bound instead.
Record run_checked_outside(Executor& executor, Job job, const HarnessAllowance& allowance) {
    job.settings.strict = true;
    job.settings.checked_outside = true;
    std::vector<CheckedCall> calls;
    Record r = executor.run_checked_job(job, calls);
    if (r.status != RowStatus::ok) return r;

    TimingVerdict timing = judge_timing_claims(job, r, calls, allowance);
    if (!timing.no_cpu_bound.empty() && std::isfinite(allowance.cpu_allowance_ms) &&
        !executor.cpu_clock_unavailable().empty())
        timing.no_cpu_bound += " (" + executor.cpu_clock_unavailable() + ")";
    if (!timing.violation.empty()) {
        executor.finish();  // a worker that lies is not asked again
        Record breach = record_for(job, RowStatus::crashed, std::string(kProtocolViolationPrefix) + timing.violation);
        breach.end_cause = EndCause::protocol_breach;
        return breach;
    }
    const int minimum = std::min(3, std::max(1, job.settings.repeats));
    std::vector<CallOutput> outputs;
    for (const CheckedCall& c : calls) outputs.push_back({c.call, c.seed, c.output.data(), c.output.count()});
    const TrustedCheck trusted =
        int(r.samples_ms.size()) < minimum
            ? TrustedCheck{false, 0, 0,
                           "the worker reported " + std::to_string(r.samples_ms.size()) +
                               " timed calls, fewer than the " + std::to_string(minimum) + " it must make"}
            : check_call_outputs(job, outputs, int(calls.size()));
    TrustedCheckEvidence evidence{trusted.calls_checked, trusted.passed, {}};
    for (const CheckedCall& c : calls)
        evidence.call_seeds.push_back(c.seed);  // to reproduce any call: fill_call_inputs(job, seed)
    r.extra.trusted_check = std::move(evidence);
    r.extra.timing_claims = timing.evidence();
    r.max_rel_err = trusted.max_rel_err;
    const OperationDef& op = operation_def(job.operation);
    r.tolerance = op.exact() ? 0.0 : job.settings.tolerance.value_or(op.default_tolerance(job.shape, job.dtype));
    if (!trusted.passed) {
        r.status = RowStatus::wrong_result;
        r.reason = trusted.reason;
        r.stats.reset();
        r.gflops.reset();
        r.gbps.reset();
    } else if (!timing.believed && r.stats) {
        // Faster than the grader's own clock allows: what counts is the clock.
        r.stats->median_ms = timing.bound_median_ms;
        r.stats->min_ms = std::max(r.stats->min_ms, timing.bound_median_ms);
        if (timing.bound_median_ms > 0)
            rate_of(r) = work_rate(job.operation, job.shape, job.dtype, timing.bound_median_ms);
    }
    return r;
}

// What a self-check's row evidence says of where its outputs were checked.
constexpr const char* kCheckedInsideTheWorker =
    "inside the worker (an unconfined self-check): its verdict and timings are the worker's own";

// A strict job of the submission checked inside its worker, for an unconfined self-check (GradeOptions::
// unconfined_self_check), where no output can leave the worker sealed: the pipeline's strict loop gives every call
// fresh inputs, poisons C before it with a fill drawn for the call, checks the output in full against the fp64
// reference (an unwritten element or a NaN never passes) and compares A and B with what was written, as a strict
// sweep does. The verdict and the timings are then the worker's own: nothing outside it checked them, which the
// result says (grade/self_check.hpp).
Record run_checked_in_worker(Executor& executor, Job job) {
    job.settings.strict = true;
    job.settings.checked_outside = false;
    return executor.run_job(job);
}

// flock(LOCK_EX) on a shared file while it lives; nothing for an empty path. A lock that cannot be taken is
// an error of the grading run, not of the student: grade_student records it as "error", retried next run.
class TimedTierLock {
public:
    explicit TimedTierLock(const fs::path& path) {
        if (path.empty()) return;
        fd_ = platform::open_append(path, true, false);
        if (fd_ < 0)
            throw std::runtime_error("cannot open the timed tiers' lock " + path.string() + ": " +
                                     std::strerror(errno));
        while (const int error = platform::lock_exclusive(fd_))
            if (error != EINTR || stop_requested()) {
                const std::string why = std::strerror(error);
                platform::close_file(fd_);
                throw std::runtime_error("cannot take the timed tiers' lock " + path.string() + ": " + why);
            }
    }
    ~TimedTierLock() {
        if (fd_ >= 0) platform::close_file(fd_);  // closing releases the lock
    }
    TimedTierLock(const TimedTierLock&) = delete;
    TimedTierLock& operator=(const TimedTierLock&) = delete;

private:
    int fd_ = -1;
};

// A load that failed inside the worker's describe, from how the parent saw the worker end (never from the
// error's text, part of which is the plugin's): crashed/timed out/exited, or a plain load error.
std::string classify_load_error(const PluginInfo& info) {
    switch (info.load_end) {
        case EndCause::load_timeout:
        case EndCause::job_timeout:
        case EndCause::call_timeout:
            return "timeout";
        case EndCause::protocol_breach:
            return "protocol_violation";
        case EndCause::memory_cap:
        case EndCause::memory_refused:
            return "memory_limit";
        case EndCause::sandbox_refusal:
            return "sandbox_violation";
        case EndCause::signal:
            return info.load_signal == "SIGABRT" ? "aborted" : "crashed";
        case EndCause::exited:
            return "exited";
        case EndCause::worker_not_started:
            return "error";  // no plugin code ran: the grader's failure, retried by the next run
        case EndCause::none:
        case EndCause::kernel_failed:
        case EndCause::cuda_error:
            return "load_failed";
    }
    return "load_failed";
}

// The device reply of the grader's trusted worker, typed; none, and why, when it is an error or malformed.
std::optional<GpuInfo> gpu_of_reply(const nlohmann::json& reply, std::string& why) {
    if (reply.contains("error")) {
        why = reply["error"].is_string() ? reply["error"].get<std::string>() : reply["error"].dump();
        return std::nullopt;
    }
    try {
        return reply.get<GpuInfo>();
    } catch (const std::exception& e) {
        why = std::string("the device reply is malformed: ") + e.what();
        return std::nullopt;
    }
}

}  // namespace

// One submission while it is graded: what grade()'s phases share, and how grading ends.
struct Grader::InProgress {
    InProgress(const Submission& submission, const Rubric& rubric)
        : submission(submission), rubric(rubric), limits(rubric.limits) {}

    const Submission& submission;
    const Rubric& rubric;
    const GradeLimits& limits;
    const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    StudentResult result;
    const Executor* untrusted_executor = nullptr;  // the submission's workers, once loading starts
    std::string status, summary;                   // how grading ended, where a phase ended it
    fs::path plugin;                               // the shared object graded (built from a folder, or given)
    PluginInfo info;                               // what the submission's worker said of it
    std::string kernel;                            // the kernel graded
    const KernelMeta* meta = nullptr;              // its entry in info
    std::vector<std::string> outcomes;
    bool all_correct = true;

    // Ends grading at a phase: false, for the phase to return.
    bool stop(const std::string& why_status, const std::string& why) {
        status = why_status;
        summary = why;
        return false;
    }
    StudentResult finish() {
        result.status = status;
        result.summary = summary;
        result.meta["seconds"] = seconds_since(start);
        result.graded_at = utc_timestamp_iso8601();
        result.wall_s = seconds_since(start);
        if (untrusted_executor && untrusted_executor->peak_memory_bytes() > 0)
            result.peak_mb = double(untrusted_executor->peak_memory_bytes()) / double(1 << 20);
        return result;
    }
    bool out_of_time() const { return seconds_since(start) > limits.total_s; }
    Job make_job(const Shape& shape, uint64_t seed, int device) const {
        Job job;
        job.id = 0;
        job.kernel = kernel;
        job.operation = rubric.operation;
        job.plugin_path = plugin.string();
        job.shape = shape;
        job.seed = seed;
        job.settings.device = device;
        job.settings.call_timeout_s = limits.call_s;  // each call, enforced inside the worker
        job.settings.timeout_s = limits.call_s;       // the run as a whole: set once its calls are known
        job.settings.strict = true;
        return job;
    }
};

struct Grader::TierGroupRounds {
    std::map<std::string, PairedRounds> by_reference;  // the rounds of each reference kernel of the group
    std::vector<Record> mine;                          // the submission's
    bool time_ran_out = false;
};

StudentResult Grader::grade(const Submission& submission, const nlohmann::json& known_provenance) {
    InProgress g(submission, options_.rubric);
    const Rubric& rubric = options_.rubric;
    g.result.student = submission.student;
    g.result.submission = submission.path.string();
    g.result.max_score = rubric.max_points();
    g.result.meta = run_meta();
    g.result.meta["provenance"] = known_provenance.is_object()
                                      ? known_provenance
                                      : provenance(submission_sha256(submission.path), rubric_hash_, options_.secret);
    if (options_.unconfined_self_check) g.result.unconfined_self_check = unconfined_self_check();
    record_copy_ceiling(g);
    // 1. Build a source folder, sandboxed and time-limited. 2. Static audit, before any of its code runs anywhere.
    if (!build_phase(g) || !audit_phase(g)) return g.finish();
    // 3. Load it in a hardened worker and pick the kernel to grade.
    Executor executor(submission_worker_options());
    g.untrusted_executor = &executor;
    if (!load_phase(g, executor)) return g.finish();
    // 4. Correctness: every case x seed x shape, fresh secret-mixed inputs, strict checking.
    for (const auto& c : rubric.correctness) grade_correctness_case(g, executor, c);
    executor.finish();
    // 5. Performance: paired rounds against trusted references, interleaved in this same run.
    grade_performance(g, executor);

    std::string status = worst_outcome(g.outcomes);
    if (status == "ok") status = "graded";
    if (status == "skipped") status = "failed";      // a declared shape constraint the rubric's cases need
    g.summary = summarize_result(g.result, rubric);  // names no hidden case
    g.status = status;
    return g.finish();
}

void Grader::record_copy_ceiling(InProgress& g) {
    // The copy ceiling that tiers against it are judged by: measured before this submission is built or
    // loaded (gpu_facts_and_ceilings says why), and recorded with the result, or why there is none.
    const Rubric& rubric = g.rubric;
    const bool has_copy_tiers = std::any_of(rubric.performance.begin(), rubric.performance.end(),
                                            [](const PerformanceTier& t) { return t.against_copy_ceiling(); });
    if (!has_copy_tiers || rubric.backend == Backend::cpu) return;
    std::string why;
    const std::optional<GpuInfo> gpu = gpu_of_reply(gpu_facts_and_ceilings(), why);
    nlohmann::json ceiling = nlohmann::json::object();
    if (gpu && gpu->dram_copy_gbps()) {
        ceiling["dram_copy_gbps"] = *gpu->dram_copy_gbps();
        if (gpu->ceilings->plugin) ceiling["plugin"] = *gpu->ceilings->plugin;
    } else {
        ceiling["unavailable"] = !why.empty()                       ? why
                                 : gpu && gpu->ceilings_unavailable ? *gpu->ceilings_unavailable
                                                                    : "no measured device-to-device copy bandwidth";
    }
    g.result.meta["copy_ceiling"] = ceiling;
}

bool Grader::build_phase(InProgress& g) {
    g.plugin = g.submission.path;
    if (!g.submission.needs_build) return true;
    SandboxPolicy build_policy = options_.sandbox;
    build_policy.memory_bytes = uint64_t(g.limits.memory_mb) << 20;
    const BuildResult b = build_submission(g.submission.path, options_.out_dir / "builds" / g.submission.student,
                                           options_.kreg_prefix, g.limits.build_s, build_policy, options_.runner_exe);
    // The first compiler error's line goes into the summary, so that the console and the gradebook show it.
    const std::string first_error = b.first_error.empty() ? "" : "; first error: " + error_line_of(b.first_error);
    g.result.checks.push_back({"build",
                               "build against the kreg SDK",
                               0,
                               0,
                               b.ok,
                               b.ok ? "built " + b.plugin.string() : b.reason + first_error,
                               {{"seconds", b.seconds}, {"log_tail", b.log_tail}, {"first_error", b.first_error}}});
    if (!b.ok) return g.stop("build_failed", "build failed: " + b.reason + first_error);
    g.plugin = b.plugin;
    return true;
}

bool Grader::audit_phase(InProgress& g) {
    if (options_.unconfined_self_check && library_format(g.plugin) == LibraryFormat::windows_pe) {
        g.result.checks.push_back(audit_skipped_for_pe(g.plugin.string()));
        return true;
    }
    AuditPolicy policy = default_grading_policy();
    if (options_.tolerate_static_libstdcxx) policy.tolerated_with_static_libstdcxx = static_libstdcxx_imports();
    const AuditResult audit = audit_shared_object(g.plugin, policy);
    g.result.checks.push_back(
        {"audit", "static audit of the shared object", 0, 0, audit.passed, audit.summary(), audit.to_json()});
    if (!audit.passed) return g.stop("rejected_audit", "rejected by the static audit: " + audit.summary());
    return true;
}

Record Grader::run_submission_job(Executor& executor, const Job& job,
                                  const std::function<HarnessAllowance()>& allowance) {
    if (options_.unconfined_self_check) return run_checked_in_worker(executor, job);  // keeps its worker
    return run_checked_outside(executor, job, allowance());                           // keeps its worker
}

ExecutorOptions Grader::submission_worker_options() const {
    const Rubric& rubric = options_.rubric;
    const GradeLimits& limits = rubric.limits;
    ExecutorOptions untrusted = worker_options();
    untrusted.load_timeout_s = limits.load_s;
    if (options_.unconfined_self_check) return untrusted;  // nothing to confine with (grade/self_check.hpp)
    untrusted.sandbox = options_.sandbox;
    untrusted.sandbox->cpu_seconds = limits.total_s;
    // The rubric's limit is the submission's; the sealed copies of C a run hands over are charged to the
    // worker too, so they come on top (every call of the longest run, at the largest shape).
    const uint64_t most_calls = uint64_t(1 + std::max(2, rubric.warmup + rubric.repeats));
    untrusted.sandbox->memory_bytes = (uint64_t(limits.memory_mb) << 20) + most_calls * largest_output_bytes(rubric);
    return untrusted;
}

bool Grader::load_phase(InProgress& g, Executor& executor) {
    g.info = executor.describe(g.plugin.string(), options_.device);
    g.result.sandbox = executor.last_sandbox_report();
    const std::string load =
        options_.unconfined_self_check ? "load in an unconfined worker" : "load in a hardened worker";
    if (!g.info.error.empty()) {
        g.result.checks.push_back({"load", load, 0, 0, false, g.info.error, {}});
        return g.stop(classify_load_error(g.info), "could not be loaded: " + g.info.error);
    }
    if (!pick_kernel(g) || !check_kernel_fits_rubric(g)) return false;
    g.result.checks.push_back({"load",
                               load,
                               0,
                               0,
                               true,
                               "kernel '" + g.kernel + "' from " + g.info.name + " " + g.info.version,
                               {{"plugin", g.info}}});
    return true;
}

bool Grader::pick_kernel(InProgress& g) {
    const Rubric& rubric = g.rubric;
    const PluginInfo& info = g.info;
    if (rubric.kernel) {
        for (const auto& k : info.kernels)
            if (k.name == *rubric.kernel) g.kernel = k.name;
        if (g.kernel.empty()) {
            g.result.checks.push_back({"load",
                                       "kernel " + *rubric.kernel,
                                       0,
                                       0,
                                       false,
                                       "the plugin has no kernel '" + *rubric.kernel + "'",
                                       {}});
            return g.stop("load_failed", "the plugin has no kernel '" + *rubric.kernel + "'");
        }
    } else if (info.kernels.size() != 1) {
        const std::string why = "the plugin provides " + std::to_string(info.kernels.size()) +
                                " kernels; the rubric names none, so it must provide exactly one";
        g.result.checks.push_back({"load", "one kernel", 0, 0, false, why, {}});
        return g.stop("load_failed", why);
    } else {
        g.kernel = info.kernels.front().name;
    }
    for (const auto& k : info.kernels)
        if (k.name == g.kernel) g.meta = &k;
    return true;
}

bool Grader::check_kernel_fits_rubric(InProgress& g) {
    const Rubric& rubric = g.rubric;
    const KernelMeta* meta = g.meta;
    const std::string& kernel = g.kernel;
    if (rubric.backend && meta->backend != *rubric.backend) {
        const std::string why = "kernel '" + kernel + "' is a " + std::string(to_string(meta->backend)) +
                                " kernel; the rubric grades " + std::string(to_string(*rubric.backend)) + " kernels";
        g.result.checks.push_back({"load", "backend", 0, 0, false, why, {}});
        return g.stop("load_failed", why);
    }
    // The worker's word for the operation is a claim: named back only when it is one this runner knows.
    if (const auto claimed = parse_operation(meta->operation); !claimed || *claimed != rubric.operation) {
        const std::string file = rubric.sources.empty() ? "the rubric" : rubric.sources.front();
        const std::string what =
            claimed ? "a " + meta->operation + " kernel" : "a kernel of an operation this runner does not know";
        const std::string why = "kernel '" + kernel + "' is " + what + "; the rubric (" + file +
                                ": /operation) grades " + std::string(to_string(rubric.operation)) + " kernels";
        g.result.checks.push_back({"load", "operation", 0, 0, false, why, {}});
        return g.stop("load_failed", why);
    }
    if (!meta->unavailable_reason.empty()) {
        g.result.checks.push_back({"load", "can run here", 0, 0, false, meta->unavailable_reason, {}});
        return g.stop("error", "cannot be run on this machine: " + meta->unavailable_reason);
    }
    return true;
}

void Grader::grade_correctness_case(InProgress& g, Executor& executor, const CorrectnessCase& c) {
    const GradeLimits& limits = g.limits;
    int passed = 0, runs = 0;
    nlohmann::json evidence = nlohmann::json::array();
    std::string first_failure;
    bool timed_out = false;  // one hang per case is enough evidence; the rest would only burn call_s each
    for (uint64_t seed : c.seeds) {
        for (const Shape& shape : c.shapes) {
            ++runs;
            Record r;
            Job job = g.make_job(shape, mix_secret_seed(seed, options_.secret), options_.device);
            job.settings.warmup = 0;
            job.settings.repeats = 2;  // every call's output is checked, here
            job.settings.timeout_s = limits.call_s * (1 + job.settings.repeats) + 5;
            job.settings.tolerance = c.tolerance;
            if (g.out_of_time())
                r = record_for(job, RowStatus::timeout,
                               "total time limit of " + format_points(limits.total_s) + " s exceeded");
            else if (timed_out)
                r = record_for(job, RowStatus::timeout, "not run: an earlier run of this case timed out");
            else
                r = run_submission_job(executor, job, [] { return no_bound(kCorrectnessRunsAreNotBounded); });
            timed_out = timed_out || r.status == RowStatus::timeout;
            const std::string outcome = classify_outcome(r);
            g.outcomes.push_back(outcome);
            if (r.status == RowStatus::ok)
                ++passed;
            else if (first_failure.empty())
                first_failure = outcome + " at " + to_string(shape) + " seed " + std::to_string(seed) + ": " + r.reason;
            evidence.push_back(row_evidence(r, seed));
            if (options_.unconfined_self_check) evidence.back()["checked"] = kCheckedInsideTheWorker;
        }
    }
    const bool ok = passed == runs;
    g.all_correct = g.all_correct && ok;
    const double points = ok ? c.points : (c.all_or_nothing ? 0.0 : c.points * passed / runs);
    g.result.score += points;
    g.result.checks.push_back({"correctness", c.name, points, c.points, ok,
                               std::to_string(passed) + "/" + std::to_string(runs) + " runs ok" +
                                   (first_failure.empty() ? "" : "; first failure: " + first_failure),
                               evidence});
}

// Tiers of one shape share their rounds: round i times the submission, then each of their references, each
// in a worker that lives through all rounds of the shape, so that whatever loads the machine during a round
// loads both sides of its ratio (grade/paired_ratio.hpp).
void Grader::grade_performance(InProgress& g, Executor& executor) {
    const Rubric& rubric = g.rubric;
    std::vector<std::optional<CheckResult>> tier_checks(rubric.performance.size());
    std::vector<bool> tier_done(rubric.performance.size(), false);
    // Timed tiers one grader at a time (--jobs): a ratio is measured on a machine no other submission loads.
    const TimedTierLock timing_alone(rubric.performance.empty() ? fs::path() : options_.timed_tier_lock);
    for (size_t first = 0; first < rubric.performance.size(); ++first) {
        if (tier_done[first]) continue;
        const Shape shape = rubric.performance[first].shape;
        std::vector<size_t> group;
        for (size_t t = first; t < rubric.performance.size(); ++t)
            if (!tier_done[t] && rubric.performance[t].shape == shape) group.push_back(t), tier_done[t] = true;
        grade_tier_group(g, executor, group, tier_checks);
    }
    for (const auto& check : tier_checks) {
        g.result.score += check->points;
        g.result.checks.push_back(*check);
    }
}

void Grader::grade_tier_group(InProgress& g, Executor& executor, const std::vector<size_t>& group,
                              std::vector<std::optional<CheckResult>>& tier_checks) {
    const Rubric& rubric = g.rubric;
    auto not_measured = [&](const std::string& why) {
        for (size_t t : group)
            tier_checks[t] =
                CheckResult{"performance", rubric.performance[t].name, 0, rubric.performance[t].points, false,
                            why,           nlohmann::json::object()};
    };
    if (rubric.requires_correctness && !g.all_correct) {
        not_measured("not measured: correctness cases failed");
        return;
    }
    TierGroupRounds rounds;
    run_tier_rounds(g, executor, group, rounds);
    executor.finish();
    finish_reference_rounds();
    if (rounds.mine.empty()) {
        not_measured("not measured: total time limit exceeded");
        return;
    }
    g.outcomes.push_back(classify_outcome(rounds.mine.back()));
    for (size_t t : group) {
        CheckResult check;
        if (rubric.performance[t].against_copy_ceiling()) {
            check = judge_copy_fraction(rubric.performance[t], rounds.mine, kPerformanceSeed);
        } else {
            PairedRounds paired = rounds.by_reference[rubric.performance[t].reference];
            paired.submission = rounds.mine;
            paired.at_limit = true;  // measuring is over: an interval that still straddles is decided now
            check = judge_performance(rubric.performance[t], paired, kPerformanceSeed, kReferenceSeed);
        }
        if (rounds.time_ran_out) check.summary += " (the total time limit ended the rounds)";
        if (options_.unconfined_self_check && check.evidence.is_object())
            check.evidence["checked"] = kCheckedInsideTheWorker;
        tier_checks[t] = check;
    }
    if (!references_measured(rounds, group)) g.outcomes.push_back("error");
}

// Whether every trusted reference of the group was measured in every round the submission was: where the
// submission's rounds were all ok and a reference's were not (a worker the grader could not start, a reference
// past its time limit at the rubric's shape), the lost tier is the grader's failure, so the result is an error,
// retried by the next run, not a grade.
bool Grader::references_measured(const TierGroupRounds& rounds, const std::vector<size_t>& group) const {
    if (first_not_ok(rounds.mine)) return true;  // the submission's outcome decides
    for (size_t t : group) {
        const PerformanceTier& tier = options_.rubric.performance[t];
        if (tier.against_copy_ceiling()) continue;
        const auto paired = rounds.by_reference.find(tier.reference);
        if (paired == rounds.by_reference.end() || paired->second.reference.size() != rounds.mine.size() ||
            first_not_ok(paired->second.reference))
            return false;
    }
    return true;
}

void Grader::run_tier_rounds(InProgress& g, Executor& executor, const std::vector<size_t>& group,
                             TierGroupRounds& rounds) {
    const Rubric& rubric = g.rubric;
    const Shape shape = rubric.performance[group.front()].shape;
    std::vector<Record>& mine_rounds = rounds.mine;
    const int max_rounds = std::max(rubric.rounds, rubric.max_rounds);
    for (int round = 0; round < max_rounds; ++round) {
        if (g.out_of_time()) {
            rounds.time_ran_out = true;
            break;
        }
        Job job = g.make_job(shape, mix_secret_seed(kPerformanceSeed, options_.secret), options_.device);
        job.settings.warmup =
            round == 0 ? rubric.warmup : std::min(rubric.warmup, 1);  // the worker is warm after round 0
        job.settings.repeats = rubric.repeats;
        job.settings.time_budget_s = rubric.time_budget_s;
        job.settings.timeout_s = g.limits.call_s * (1 + job.settings.warmup + job.settings.repeats) + 5;
        Record mine = run_submission_job(executor, job, [&] { return harness_allowance(shape, g.meta->backend); });
        annotate_floor(mine, g.meta->backend);
        mine_rounds.push_back(mine);
        if (mine.status == RowStatus::ok)
            for (size_t t : group) {
                if (rubric.performance[t].against_copy_ceiling()) continue;  // the ceiling is measured once
                const std::string& reference = rubric.performance[t].reference;
                if (rounds.by_reference[reference].reference.size() < mine_rounds.size())
                    rounds.by_reference[reference].reference.push_back(
                        measure_reference_round(reference, shape, round));
            }
        bool more = false;
        for (size_t t : group) {
            if (rubric.performance[t].against_copy_ceiling()) {
                more = more || copy_tier_needs_more_rounds(rubric.performance[t], mine_rounds);
                continue;
            }
            PairedRounds& paired = rounds.by_reference[rubric.performance[t].reference];
            paired.submission = mine_rounds;
            more = more || tier_needs_more_rounds(rubric.performance[t], paired);
        }
        if (mine.status != RowStatus::ok || (round + 1 >= rubric.rounds && !more)) break;
    }
}

// The physics check: a time below the roofline floor from this GPU's measured ceilings (CUDA) or the host's
// measured fp32 peak (CPU). A transpose's floor is its copy ceiling (measure/roofline.hpp), the same ceiling
// its copy-ceiling tiers are judged by.
void Grader::annotate_floor(Record& mine, Backend backend) {
    const Rubric& rubric = options_.rubric;
    if (mine.status == RowStatus::ok && backend == Backend::cuda) {
        std::string why;
        if (const std::optional<GpuInfo> gpu = gpu_of_reply(gpu_facts_and_ceilings(), why)) {
            annotate_roofline(mine, *gpu);
            // Why there is no measured ceiling, where the device query says.
            if (mine.extra.roofline && mine.extra.roofline->unavailable && gpu->ceilings_unavailable)
                *mine.extra.roofline->unavailable += ": " + *gpu->ceilings_unavailable;
        } else {  // the evidence says it was not checked
            mine.extra.roofline = RooflineEvidence{};
            mine.extra.roofline->unavailable = why;
        }
    } else if (mine.status == RowStatus::ok && operation_row(rubric.operation).bound != Bound::compute) {
        // The host's fp32 peak bounds FLOPs; a copy-bound operation (a transpose) is judged against the copy
        // bandwidth, which is not measured on the host: no floor, and the evidence says so.
        mine.extra.roofline = RooflineEvidence{};
        mine.extra.roofline->ceiling = "host_fp32";
        mine.extra.roofline->unavailable = "no roofline floor for a cpu " + std::string(to_string(rubric.operation)) +
                                           ": the host's copy bandwidth is not measured";
    } else if (mine.status == RowStatus::ok) {
        if (!host_flops_) host_flops_ = measure_host_fp32_flops();
        annotate_cpu_roofline(mine, *host_flops_);
    }
}

}  // namespace kreg
