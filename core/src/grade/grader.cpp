#include "grade/grader.hpp"

#include "audit/so_audit.hpp"
#include "common/elapsed.hpp"
#include "common/host_info.hpp"
#include "grade/class_page.hpp"
#include "grade/compiler_error.hpp"
#include "grade/feedback.hpp"
#include "grade/outcome.hpp"
#include "grade/provenance.hpp"
#include "grade/student_view.hpp"
#include "grade/timing_claims.hpp"
#include "grade/verdict.hpp"
#include "measure/host_ceiling.hpp"
#include "ops/output_export.hpp"
#include "measure/roofline.hpp"
#include "ops/operation.hpp"
#include "report/atomic_file.hpp"
#include "sweep/executor.hpp"
#include "verify/verify_gemm.hpp"
#include "worker/stop_request.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace kreg {
namespace fs = std::filesystem;

namespace {

// The published seeds of performance runs (the submission's is mixed with the secret; the trusted
// reference's is not: its inputs are no secret).
constexpr uint64_t kPerformanceSeed = 7, kReferenceSeed = 1;

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
    r.tolerance = op.exact() ? 0.0 : job.settings.tolerance.value_or(default_tolerance(job.dtype));
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
        if (op.flops(job.shape) > 0)
            r.gflops = op.flops(job.shape) / (timing.bound_median_ms * 1e6);
        else if (timing.bound_median_ms > 0)
            r.gbps = op.bytes_moved(job.shape, job.dtype) / (timing.bound_median_ms * 1e6);
    }
    return r;
}

// flock(LOCK_EX) on a shared file while it lives; nothing for an empty path. A lock that cannot be taken is
// an error of the grading run, not of the student: grade_all records it as "error", retried next run.
class TimedTierLock {
public:
    explicit TimedTierLock(const fs::path& path) {
        if (path.empty()) return;
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd_ < 0)
            throw std::runtime_error("cannot open the timed tiers' lock " + path.string() + ": " +
                                     std::strerror(errno));
        while (::flock(fd_, LOCK_EX) != 0)
            if (errno != EINTR || stop_requested()) {
                const std::string why = std::strerror(errno);
                ::close(fd_);
                throw std::runtime_error("cannot take the timed tiers' lock " + path.string() + ": " + why);
            }
    }
    ~TimedTierLock() {
        if (fd_ >= 0) ::close(fd_);  // closing releases the lock
    }
    TimedTierLock(const TimedTierLock&) = delete;
    TimedTierLock& operator=(const TimedTierLock&) = delete;

private:
    int fd_ = -1;
};

// The largest C a rubric's runs export (bytes): the sandbox's file size limit must let the worker
// write it.
uint64_t largest_output_bytes(const Rubric& rubric) {
    uint64_t largest = 0;
    for (const auto& c : rubric.correctness)
        for (const Shape& shape : c.shapes) largest = std::max(largest, uint64_t(shape.m * shape.n) * sizeof(float));
    for (const auto& tier : rubric.performance)
        largest = std::max(largest, uint64_t(tier.shape.m * tier.shape.n) * sizeof(float));
    return largest;
}

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
        case EndCause::none:
        case EndCause::kernel_failed:
        case EndCause::cuda_error:
            return "load_failed";
    }
    return "load_failed";
}

// The steps a sandbox report says were applied and were not (each entry's name, the text before ": "), for
// one console line: "RLIMIT_CORE, RLIMIT_CPU, ..., seccomp stage 1, namespaces, ...; not available: memory cgroup".
std::string confinement_steps(const nlohmann::json& sandbox) {
    auto names = [&](const char* key) {
        std::vector<std::string> out;
        if (sandbox.contains(key) && sandbox[key].is_array())
            for (const auto& entry : sandbox[key]) {
                if (!entry.is_string()) continue;
                const std::string text = entry.get<std::string>();
                const std::string name = text.substr(0, text.find(": "));
                if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
            }
        std::string joined;
        for (const std::string& n : out) joined += (joined.empty() ? "" : ", ") + n;
        return joined;
    };
    const std::string applied = names("applied"), unavailable = names("unavailable");
    return (applied.empty() ? "none" : applied) + (unavailable.empty() ? "" : "; not available: " + unavailable);
}

}  // namespace

Grader::Grader(GradeOptions options)
    : options_(std::move(options)),
      gradebook_(options_.out_dir, options_.rubric),
      rubric_hash_(rubric_sha256(options_.rubric)) {
    options_.sandbox.max_file_bytes = std::max(options_.sandbox.max_file_bytes, largest_output_bytes(options_.rubric));
    ExecutorOptions trusted;
    trusted.runner_exe = options_.runner_exe;
    trusted.echo_worker_stderr = options_.verbose;
    trusted_ = std::make_unique<Executor>(trusted);
    // The reference kernels come from trusted plugins only, never from a submission.
    for (const auto& file : options_.reference_plugins) {
        const PluginInfo info = trusted_->describe(file.string(), options_.device);
        for (const auto& k : info.kernels)
            if (!reference_path_.count(k.name)) {
                reference_path_[k.name] = info.path;
                reference_meta_[k.name] = k;
            }
    }
    // A tier whose reference no trusted plugin provides, or one of another operation, is a rubric error,
    // found before grading anyone.
    std::map<std::string, Operation> known;
    for (const auto& [name, meta] : reference_meta_)
        if (const auto op = parse_operation(meta.operation)) known[name] = *op;
    check_tier_references(options_.rubric, known);
    // Only CPU rubrics: a CUDA row's time is the GPU's, and its worker's host threads are better left free.
    bool cpu_tiers = !options_.rubric.performance.empty();
    for (const auto& tier : options_.rubric.performance) {
        const auto meta = reference_meta_.find(tier.reference);
        cpu_tiers = cpu_tiers && meta != reference_meta_.end() && meta->second.backend == Backend::cpu;
    }
    if (!cpu_tiers) options_.timing_cpu = -1;
}

Grader::~Grader() = default;

Record Grader::measure_reference_round(const std::string& kernel, const Shape& shape, int round) {
    Job job;
    job.kernel = kernel;
    job.operation = options_.rubric.operation;
    job.shape = shape;
    job.seed = kReferenceSeed;
    job.settings.warmup = round == 0 ? options_.rubric.warmup : std::min(options_.rubric.warmup, 1);
    job.settings.repeats = options_.rubric.repeats;
    job.settings.time_budget_s = options_.rubric.time_budget_s;
    job.settings.timeout_s = std::max(options_.rubric.limits.call_s, 60.0);
    job.settings.device = options_.device;
    // Trusted code: no cheat to catch, and strict's host-clock cross-check can misfire on library
    // kernels with host-side work per call (cuBLAS bf16 at 1024^3 on the H200: event 0.01 ms, wall 2.4 ms).
    // The kernel time itself is measured the same way (CUDA events around the launch) either way.
    job.settings.strict = false;
    const auto plugin = reference_path_.find(kernel);
    if (plugin == reference_path_.end())
        return record_for(job, RowStatus::failed,
                          "reference kernel '" + kernel + "' is not provided by any trusted plugin");
    job.plugin_path = plugin->second;
    return reference_worker(plugin->second).run_job(job);
}

ExecutorOptions Grader::worker_options() const {
    ExecutorOptions o;
    o.runner_exe = options_.runner_exe;
    o.echo_worker_stderr = options_.verbose;
    o.timing_cpu = options_.timing_cpu;
    return o;
}

Executor& Grader::reference_worker(const std::string& plugin) {
    // One worker per reference plugin, alive through the rounds of a shape (finish_reference_rounds).
    auto& executor = reference_workers_[plugin];
    if (!executor) {
        ExecutorOptions trusted = worker_options();  // on the submission's CPU, as its calibration must be
        // CPU rubrics: in a worker confined as the submission's is, so that the harness's CPU work the calibration
        // measures is the one inside the submission's windows (the confined worker's was up to 1.5 ms larger at
        // 256^3 than an unconfined one's, which put an honest kernel's bound above its own CPU time).
        if (options_.timing_cpu >= 0) trusted.sandbox = options_.sandbox;
        executor = std::make_unique<Executor>(trusted);
    }
    return *executor;
}

void Grader::finish_reference_rounds() {
    for (auto& [plugin, executor] : reference_workers_) executor->finish();
}

HarnessAllowance Grader::harness_allowance(const Shape& shape, Backend backend) {
    // CPU rows share the machine's cores with everything else: the allowance is measured for every round,
    // right before it, so that the calibration and the submission's calls see the same load. CUDA rows keep
    // one calibration per shape (their kernel time is the GPU's; the host's load reaches only the harness).
    const bool every_round = backend == Backend::cpu;
    const std::string key = to_string(shape) + "/" + std::string(to_string(backend));
    if (!every_round)
        if (auto it = allowance_cache_.find(key); it != allowance_cache_.end()) return it->second;
    // Any trusted kernel of the graded backend serves: the allowance is the harness's work around a call.
    std::vector<std::string> candidates;
    for (const auto& tier : options_.rubric.performance)
        if (!tier.against_copy_ceiling()) candidates.push_back(tier.reference);
    for (const auto& [name, meta] : reference_meta_)
        if (meta.operation == to_string(options_.rubric.operation) && meta.backend == backend &&
            meta.unavailable_reason.empty())
            candidates.push_back(name);
    std::string tried;
    HarnessAllowance allowance;
    for (const std::string& candidate : candidates) {
        const auto plugin = reference_path_.find(candidate);
        if (plugin == reference_path_.end()) continue;
        Job job;
        job.kernel = candidate;
        job.operation = options_.rubric.operation;
        job.plugin_path = plugin->second;
        job.shape = shape;
        job.seed = kReferenceSeed;
        job.settings.warmup = options_.rubric.warmup;
        job.settings.repeats = std::max(options_.rubric.repeats, kCalibrationCalls);  // enough gaps for a quantile
        job.settings.timeout_s =
            std::max(options_.rubric.limits.call_s, 60.0) * (2 + job.settings.warmup + job.settings.repeats);
        job.settings.device = options_.device;
        job.settings.strict = true;
        job.settings.checked_outside = true;
        std::vector<CheckedCall> calls;
        // Every round: in the reference's own trusted worker, warm through the shape's rounds as the
        // submission's is.
        Executor& executor = every_round ? reference_worker(plugin->second) : *trusted_;
        const Record r = executor.run_checked_job(job, calls);
        if (!every_round) trusted_->finish();
        if (r.status == RowStatus::ok) {
            allowance =
                kreg::harness_allowance(calls, every_round ? AllowanceRule::same_round : AllowanceRule::once_per_shape);
            if (!allowance.no_cpu_bound.empty() && !executor.cpu_clock_unavailable().empty())
                allowance.no_cpu_bound += " (" + executor.cpu_clock_unavailable() + ")";
            if (allowance.bounds())
                allowance.calibration = candidate + ", " + std::to_string(job.settings.repeats) +
                                        " timed calls checked outside " +
                                        (every_round ? "right before this round" : "once for this shape");
            break;
        }
        tried += (tried.empty() ? "" : "; ") + candidate + ": " + r.reason;
    }
    if (!allowance.bounds())
        allowance.no_bound =
            "no trusted kernel of the " + std::string(to_string(backend)) + " backend could be timed at " +
            to_string(shape) + (tried.empty() ? "" : " (" + tried + ")") +
            ": the grader's clock bounds nothing here, so the claims that fit their windows are taken as they are";
    if (!every_round) allowance_cache_[key] = allowance;
    return allowance;
}

const nlohmann::json& Grader::gpu_facts_and_ceilings() {
    if (!gpu_) gpu_ = trusted_->device_info(options_.device, true, 300.0);
    return *gpu_;
}

nlohmann::json Grader::run_meta() const {
    return {{"rubric", options_.rubric.to_json()},
            {"secret_seed_used", options_.secret != 0},
            {"timestamp", utc_timestamp_iso8601()},
            {"host", host_info()},
            {"kreg_version", KREG_VERSION}};
}

StudentResult Grader::grade(const Submission& submission, const nlohmann::json& known_provenance) {
    const Rubric& rubric = options_.rubric;
    const GradeLimits& limits = rubric.limits;
    const auto start = std::chrono::steady_clock::now();
    StudentResult result;
    result.student = submission.student;
    result.submission = submission.path.string();
    result.max_score = rubric.max_points();
    result.meta = run_meta();
    result.meta["provenance"] = known_provenance.is_object()
                                    ? known_provenance
                                    : provenance(submission_sha256(submission.path), rubric_hash_, options_.secret);
    const Executor* untrusted_executor = nullptr;  // the submission's workers, once loading starts
    auto finish = [&](const std::string& status, const std::string& summary) {
        result.status = status;
        result.summary = summary;
        result.meta["seconds"] = seconds_since(start);
        result.graded_at = utc_timestamp_iso8601();
        result.wall_s = seconds_since(start);
        if (untrusted_executor && untrusted_executor->peak_memory_bytes() > 0)
            result.peak_mb = double(untrusted_executor->peak_memory_bytes()) / double(1 << 20);
        return result;
    };

    // The copy ceiling that tiers against it are judged by: measured before this submission is built or
    // loaded (gpu_facts_and_ceilings says why), and recorded with the result, or why there is none.
    const bool has_copy_tiers = std::any_of(rubric.performance.begin(), rubric.performance.end(),
                                            [](const PerformanceTier& t) { return t.against_copy_ceiling(); });
    if (has_copy_tiers && rubric.backend != Backend::cpu) {
        const nlohmann::json& gpu = gpu_facts_and_ceilings();
        nlohmann::json ceiling = nlohmann::json::object();
        const nlohmann::json none = nullptr;
        const nlohmann::json& ceilings = gpu.is_object() && gpu.contains("ceilings") ? gpu["ceilings"] : none;
        if (ceilings.is_object() && ceilings.contains("dram_copy_gbps") && ceilings["dram_copy_gbps"].is_number()) {
            ceiling["dram_copy_gbps"] = ceilings["dram_copy_gbps"];
            if (ceilings.contains("plugin")) ceiling["plugin"] = ceilings["plugin"];
        } else {
            ceiling["unavailable"] = gpu.contains("error") ? gpu["error"]
                                     : gpu.contains("ceilings_unavailable")
                                         ? gpu["ceilings_unavailable"]
                                         : nlohmann::json("no measured device-to-device copy bandwidth");
        }
        result.meta["copy_ceiling"] = ceiling;
    }

    // 1. Build a source folder, sandboxed and time-limited.
    fs::path plugin = submission.path;
    if (submission.needs_build) {
        SandboxPolicy build_policy = options_.sandbox;
        build_policy.memory_bytes = uint64_t(limits.memory_mb) << 20;
        const BuildResult b = build_submission(submission.path, options_.out_dir / "builds" / submission.student,
                                               options_.kreg_prefix, limits.build_s, build_policy, options_.runner_exe);
        // The first compiler error's line goes into the summary, so that the console and the gradebook show it.
        const std::string first_error = b.first_error.empty() ? "" : "; first error: " + error_line_of(b.first_error);
        result.checks.push_back({"build",
                                 "build against the kreg SDK",
                                 0,
                                 0,
                                 b.ok,
                                 b.ok ? "built " + b.plugin.string() : b.reason + first_error,
                                 {{"seconds", b.seconds}, {"log_tail", b.log_tail}, {"first_error", b.first_error}}});
        if (!b.ok) return finish("build_failed", "build failed: " + b.reason + first_error);
        plugin = b.plugin;
    }

    // 2. Static audit, before any of its code runs anywhere.
    AuditPolicy policy = default_grading_policy();
    if (options_.tolerate_static_libstdcxx) policy.tolerated_with_static_libstdcxx = static_libstdcxx_imports();
    const AuditResult audit = audit_shared_object(plugin, policy);
    result.checks.push_back(
        {"audit", "static audit of the shared object", 0, 0, audit.passed, audit.summary(), audit.to_json()});
    if (!audit.passed) return finish("rejected_audit", "rejected by the static audit: " + audit.summary());

    // 3. Load it in a hardened worker and pick the kernel to grade.
    ExecutorOptions untrusted = worker_options();
    untrusted.load_timeout_s = limits.load_s;
    untrusted.sandbox = options_.sandbox;
    untrusted.sandbox->cpu_seconds = limits.total_s;
    // The rubric's limit is the submission's; the sealed copies of C a run hands over are charged to the
    // worker too, so they come on top (every call of the longest run, at the largest shape).
    const uint64_t most_calls = uint64_t(1 + std::max(2, rubric.warmup + rubric.repeats));
    untrusted.sandbox->memory_bytes = (uint64_t(limits.memory_mb) << 20) + most_calls * largest_output_bytes(rubric);
    Executor executor(untrusted);
    untrusted_executor = &executor;
    const PluginInfo info = executor.describe(plugin.string(), options_.device);
    result.sandbox = executor.last_sandbox_report();
    if (!info.error.empty()) {
        result.checks.push_back({"load", "load in a hardened worker", 0, 0, false, info.error, {}});
        return finish(classify_load_error(info), "could not be loaded: " + info.error);
    }
    std::string kernel;
    if (rubric.kernel) {
        for (const auto& k : info.kernels)
            if (k.name == *rubric.kernel) kernel = k.name;
        if (kernel.empty()) {
            result.checks.push_back({"load",
                                     "kernel " + *rubric.kernel,
                                     0,
                                     0,
                                     false,
                                     "the plugin has no kernel '" + *rubric.kernel + "'",
                                     {}});
            return finish("load_failed", "the plugin has no kernel '" + *rubric.kernel + "'");
        }
    } else if (info.kernels.size() != 1) {
        const std::string why = "the plugin provides " + std::to_string(info.kernels.size()) +
                                " kernels; the rubric names none, so it must provide exactly one";
        result.checks.push_back({"load", "one kernel", 0, 0, false, why, {}});
        return finish("load_failed", why);
    } else {
        kernel = info.kernels.front().name;
    }
    const KernelMeta* meta = nullptr;
    for (const auto& k : info.kernels)
        if (k.name == kernel) meta = &k;
    if (rubric.backend && meta->backend != *rubric.backend) {
        const std::string why = "kernel '" + kernel + "' is a " + std::string(to_string(meta->backend)) +
                                " kernel; the rubric grades " + std::string(to_string(*rubric.backend)) + " kernels";
        result.checks.push_back({"load", "backend", 0, 0, false, why, {}});
        return finish("load_failed", why);
    }
    // The worker's word for the operation is a claim: named back only when it is one this runner knows.
    if (const auto claimed = parse_operation(meta->operation); !claimed || *claimed != rubric.operation) {
        const std::string file = rubric.sources.empty() ? "the rubric" : rubric.sources.front();
        const std::string what =
            claimed ? "a " + meta->operation + " kernel" : "a kernel of an operation this runner does not know";
        const std::string why = "kernel '" + kernel + "' is " + what + "; the rubric (" + file +
                                ": /operation) grades " + std::string(to_string(rubric.operation)) + " kernels";
        result.checks.push_back({"load", "operation", 0, 0, false, why, {}});
        return finish("load_failed", why);
    }
    if (!meta->unavailable_reason.empty()) {
        result.checks.push_back({"load", "can run here", 0, 0, false, meta->unavailable_reason, {}});
        return finish("error", "cannot be run on this machine: " + meta->unavailable_reason);
    }
    result.checks.push_back({"load",
                             "load in a hardened worker",
                             0,
                             0,
                             true,
                             "kernel '" + kernel + "' from " + info.name + " " + info.version,
                             {{"plugin", info}}});

    auto make_job = [&](const Shape& shape, uint64_t seed) {
        Job job;
        job.id = 0;
        job.kernel = kernel;
        job.operation = rubric.operation;
        job.plugin_path = plugin.string();
        job.shape = shape;
        job.seed = seed;
        job.settings.device = options_.device;
        job.settings.call_timeout_s = limits.call_s;  // each call, enforced inside the worker
        job.settings.timeout_s = limits.call_s;       // the run as a whole: set once its calls are known
        job.settings.strict = true;
        return job;
    };
    auto out_of_time = [&] { return seconds_since(start) > limits.total_s; };
    std::vector<std::string> outcomes;

    // 4. Correctness: every case x seed x shape, fresh secret-mixed inputs, strict checking.
    bool all_correct = true;
    for (const auto& c : rubric.correctness) {
        int passed = 0, runs = 0;
        nlohmann::json evidence = nlohmann::json::array();
        std::string first_failure;
        bool timed_out = false;  // one hang per case is enough evidence; the rest would only burn call_s each
        for (uint64_t seed : c.seeds) {
            for (const Shape& shape : c.shapes) {
                ++runs;
                Record r;
                Job job = make_job(shape, mix_secret_seed(seed, options_.secret));
                job.settings.warmup = 0;
                job.settings.repeats = 2;  // every call's output is checked, here
                job.settings.timeout_s = limits.call_s * (1 + job.settings.repeats) + 5;
                job.settings.tolerance = c.tolerance;
                if (out_of_time())
                    r = record_for(job, RowStatus::timeout,
                                   "total time limit of " + format_points(limits.total_s) + " s exceeded");
                else if (timed_out)
                    r = record_for(job, RowStatus::timeout, "not run: an earlier run of this case timed out");
                else
                    r = run_checked_outside(executor, job, no_bound(kCorrectnessRunsAreNotBounded));
                timed_out = timed_out || r.status == RowStatus::timeout;
                const std::string outcome = classify_outcome(r);
                outcomes.push_back(outcome);
                if (r.status == RowStatus::ok)
                    ++passed;
                else if (first_failure.empty())
                    first_failure =
                        outcome + " at " + to_string(shape) + " seed " + std::to_string(seed) + ": " + r.reason;
                evidence.push_back(row_evidence(r, seed));
            }
        }
        const bool ok = passed == runs;
        all_correct = all_correct && ok;
        const double points = ok ? c.points : (c.all_or_nothing ? 0.0 : c.points * passed / runs);
        result.score += points;
        result.checks.push_back({"correctness", c.name, points, c.points, ok,
                                 std::to_string(passed) + "/" + std::to_string(runs) + " runs ok" +
                                     (first_failure.empty() ? "" : "; first failure: " + first_failure),
                                 evidence});
    }
    executor.finish();

    // 5. Performance: paired rounds against trusted references, interleaved in this same run. Tiers of one
    // shape share their rounds: round i times the submission, then each of their references, each in a
    // worker that lives through all rounds of the shape, so that whatever loads the machine during a
    // round loads both sides of its ratio (grade/paired_ratio.hpp).
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
        auto not_measured = [&](const std::string& why) {
            for (size_t t : group)
                tier_checks[t] =
                    CheckResult{"performance", rubric.performance[t].name, 0, rubric.performance[t].points, false,
                                why,           nlohmann::json::object()};
        };
        if (rubric.requires_correctness && !all_correct) {
            not_measured("not measured: correctness cases failed");
            continue;
        }
        std::map<std::string, PairedRounds> by_reference;  // the rounds of each reference kernel of the group
        std::vector<Record> mine_rounds;
        const int max_rounds = std::max(rubric.rounds, rubric.max_rounds);
        bool time_ran_out = false;
        for (int round = 0; round < max_rounds; ++round) {
            if (out_of_time()) {
                time_ran_out = true;
                break;
            }
            Job job = make_job(shape, mix_secret_seed(kPerformanceSeed, options_.secret));
            job.settings.warmup =
                round == 0 ? rubric.warmup : std::min(rubric.warmup, 1);  // the worker is warm after round 0
            job.settings.repeats = rubric.repeats;
            job.settings.time_budget_s = rubric.time_budget_s;
            job.settings.timeout_s = limits.call_s * (1 + job.settings.warmup + job.settings.repeats) + 5;
            Record mine =
                run_checked_outside(executor, job, harness_allowance(shape, meta->backend));  // keeps its worker
            // The physics check: a time below the roofline floor from this GPU's measured ceilings (CUDA)
            // or the host's measured fp32 peak (CPU).
            // A transpose's floor is its copy ceiling (measure/roofline.hpp), the same ceiling its
            // copy-ceiling tiers are judged by.
            if (mine.status == RowStatus::ok && meta->backend == Backend::cuda) {
                const nlohmann::json& gpu = gpu_facts_and_ceilings();
                if (!gpu.contains("error")) {
                    annotate_roofline(mine, gpu["facts"], gpu["ceilings"]);
                    // Why there is no measured ceiling, where the device query says.
                    if (mine.extra.roofline && mine.extra.roofline->unavailable &&
                        gpu.contains("ceilings_unavailable")) {
                        const nlohmann::json& why = gpu["ceilings_unavailable"];
                        *mine.extra.roofline->unavailable +=
                            ": " + (why.is_string() ? why.get<std::string>() : why.dump());
                    }
                } else {  // the evidence says it was not checked
                    const nlohmann::json& error = gpu["error"];
                    mine.extra.roofline = RooflineEvidence{};
                    mine.extra.roofline->unavailable = error.is_string() ? error.get<std::string>() : error.dump();
                }
            } else if (mine.status == RowStatus::ok && rubric.operation != Operation::gemm) {
                // The host's fp32 peak bounds FLOPs; a transpose does none, and the host's copy bandwidth
                // is not measured: no floor, and the evidence says so.
                mine.extra.roofline = RooflineEvidence{};
                mine.extra.roofline->ceiling = "host_fp32";
                mine.extra.roofline->unavailable = "no roofline floor for a cpu " +
                                                   std::string(to_string(rubric.operation)) +
                                                   ": the host's copy bandwidth is not measured";
            } else if (mine.status == RowStatus::ok) {
                if (!host_flops_) host_flops_ = measure_host_fp32_flops();
                annotate_cpu_roofline(mine, *host_flops_);
            }
            mine_rounds.push_back(mine);
            if (mine.status == RowStatus::ok)
                for (size_t t : group) {
                    if (rubric.performance[t].against_copy_ceiling()) continue;  // the ceiling is measured once
                    const std::string& reference = rubric.performance[t].reference;
                    if (by_reference[reference].reference.size() < mine_rounds.size())
                        by_reference[reference].reference.push_back(measure_reference_round(reference, shape, round));
                }
            bool more = false;
            for (size_t t : group) {
                if (rubric.performance[t].against_copy_ceiling()) {
                    more = more || copy_tier_needs_more_rounds(rubric.performance[t], mine_rounds);
                    continue;
                }
                PairedRounds& rounds = by_reference[rubric.performance[t].reference];
                rounds.submission = mine_rounds;
                more = more || tier_needs_more_rounds(rubric.performance[t], rounds);
            }
            if (mine.status != RowStatus::ok || (round + 1 >= rubric.rounds && !more)) break;
        }
        executor.finish();
        finish_reference_rounds();
        if (mine_rounds.empty()) {
            not_measured("not measured: total time limit exceeded");
            continue;
        }
        outcomes.push_back(classify_outcome(mine_rounds.back()));
        for (size_t t : group) {
            CheckResult check;
            if (rubric.performance[t].against_copy_ceiling()) {
                check = judge_copy_fraction(rubric.performance[t], mine_rounds, kPerformanceSeed);
            } else {
                PairedRounds rounds = by_reference[rubric.performance[t].reference];
                rounds.submission = mine_rounds;
                rounds.at_limit = true;  // measuring is over: an interval that still straddles is decided now
                check = judge_performance(rubric.performance[t], rounds, kPerformanceSeed, kReferenceSeed);
            }
            if (time_ran_out) check.summary += " (the total time limit ended the rounds)";
            tier_checks[t] = check;
        }
    }
    for (const auto& check : tier_checks) {
        result.score += check->points;
        result.checks.push_back(*check);
    }

    std::string status = worst_outcome(outcomes);
    if (status == "ok") status = "graded";
    if (status == "skipped") status = "failed";               // a declared shape constraint the rubric's cases need
    return finish(status, summarize_result(result, rubric));  // names no hidden case
}

GradeRunSummary Grader::grade_all(const std::vector<Submission>& submissions,
                                  const std::function<void(const std::string&)>& progress) {
    GradeRunSummary run;
    run.submissions = submissions.size();
    mark_removed_submissions(submissions, progress);
    size_t index = 0;
    for (const auto& s : submissions) {
        if (stop_requested()) break;
        ++index;
        const std::string counter = "[" + std::to_string(index) + "/" + std::to_string(submissions.size()) + "] ";
        // A stored result stands only while what it was computed from is unchanged.
        nlohmann::json current;
        try {
            current = provenance(submission_sha256(s.path), rubric_hash_, options_.secret);
        } catch (const std::exception&) {
            current = nullptr;  // unreadable: graded again, and grade() says why
        }
        if (!options_.force && gradebook_.has(s.student)) {
            std::string changed = "its result cannot be read back";
            try {
                std::ifstream in(gradebook_.student_file(s.student));
                const StudentResult previous = StudentResult::from_json(nlohmann::json::parse(in));
                changed = what_changed(previous.meta.value("provenance", nlohmann::json()), current);
            } catch (const std::exception&) {
            }
            // An error is the grader's failure (no driver, a result it could not write), not the student's: it
            // is retried, never kept as a grade.
            if (changed.empty() && previous_status(s.student) == "error") changed = "its last grading ended in error";
            if (changed.empty()) {
                progress(counter + s.student +
                         ": already graded, and nothing it was graded from changed (use --force to grade again)");
                ++run.already_graded;
                continue;
            }
            progress(counter + s.student + ": " + changed + "; grading again");
        }
        StudentResult r;
        try {
            r = grade(s, current);
        } catch (const std::exception& e) {
            r.student = s.student;
            r.submission = s.path.string();
            r.max_score = options_.rubric.max_points();
            r.status = "error";
            r.summary = std::string("grading error: ") + e.what();
        }
        // A stop (SIGINT, SIGTERM) killed the worker in flight: what it left is no grade, so nothing of this
        // student is recorded and the next run grades them.
        if (stop_requested()) break;
        ++run.graded_now;
        try {
            gradebook_.record(r);
        } catch (const std::exception& e) {
            // One student's result that cannot be written must not stop the others: record what we can.
            StudentResult minimal;
            minimal.student = s.student;
            minimal.submission = s.path.string();
            minimal.max_score = options_.rubric.max_points();
            minimal.status = "error";
            minimal.summary = std::string("grading error: could not record the result: ") + e.what();
            r = minimal;
            try {
                gradebook_.record(minimal);
            } catch (const std::exception& again) {
                progress(counter + s.student + ": error, no result recorded: " + again.what());
                continue;
            }
        }
        // What may be handed to the student: <out>/student-view/<id>.json (grade/student_view.hpp).
        try {
            write_file_atomically(options_.out_dir / "student-view" / (r.student + ".json"),
                                  student_view(r, options_.rubric)
                                          .to_json()
                                          .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                                      "\n");
            write_student_feedback(options_.out_dir, r, options_.rubric);  // and as .md, .html (grade/feedback.hpp)
        } catch (const std::exception& e) {
            progress(counter + s.student + ": warning: the student view could not be written: " + e.what());
        }
        std::string summary = r.summary;  // its later lines (a compiler's error) indented under the student's
        for (size_t at = 0; (at = summary.find('\n', at)) != std::string::npos; at += 5)
            summary.replace(at, 1, "\n    ");
        progress(counter + s.student + ": " + r.status + ", " + format_points(r.score) + "/" +
                 format_points(r.max_score) + (r.status == "graded" ? "" : " — " + summary));
        // Under a build failure, the first compiler error's context and excerpt (grade/compiler_error.hpp).
        for (const CheckResult& check : r.checks)
            if (check.kind == "build" && !check.passed && check.evidence.is_object() &&
                check.evidence.contains("first_error"))
                for (const std::string& line : error_excerpt_lines(check.evidence.value("first_error", "")))
                    progress("    " + line);
        if (!run.confinement_reported && r.sandbox.is_object() && r.sandbox.contains("applied")) {
            progress("  confinement applied to " + s.student + "'s worker: " + confinement_steps(r.sandbox));
            run.confinement_reported = true;
        }
    }
    try {
        write_class_page(gradebook_, options_.rubric);  // <out>/index.html (grade/class_page.hpp)
    } catch (const std::exception& e) {
        progress(std::string("warning: the class page could not be written: ") + e.what());
    }
    run.stop_signal = stop_signal();
    return run;
}

std::vector<std::string> Grader::graded_with_another_seed(bool with_secret) const {
    return graded_with_another_seed_than(gradebook_, options_.secret, with_secret);
}

std::vector<std::string> graded_with_another_seed_than(const Gradebook& gradebook, uint64_t secret, bool with_secret) {
    const nlohmann::json current = provenance("", "", secret)["secret_sha256"];
    std::vector<std::string> students;
    for (const StudentResult& r : gradebook.all()) {
        if (!r.meta.contains("provenance") || !r.meta["provenance"].is_object())
            continue;  // an older kreg's: graded again anyway
        const nlohmann::json stored = r.meta["provenance"].value("secret_sha256", nlohmann::json());
        if (stored != current && (!with_secret || !stored.is_null())) students.push_back(r.student);
    }
    return students;
}

void Grader::set_aside_results_of_another_seed() {
    const fs::path aside = options_.out_dir / "replaced-seed";
    for (const std::string& student : graded_with_another_seed(false)) {
        fs::create_directories(aside / "student-view");
        fs::rename(gradebook_.student_file(student), aside / (student + ".json"));
        std::error_code ec;
        const fs::path view = options_.out_dir / "student-view" / (student + ".json");
        if (fs::exists(view, ec)) fs::rename(view, aside / "student-view" / (student + ".json"));
    }
    write_file_atomically(gradebook_.csv_file(), gradebook_.csv());
}

void Grader::mark_removed_submissions(const std::vector<Submission>& submissions,
                                      const std::function<void(const std::string&)>& progress) {
    std::set<std::string> present;
    for (const Submission& s : submissions) present.insert(s.student);
    for (StudentResult r : gradebook_.all()) {
        if (r.meta.contains("corrupt_file")) continue;  // not ours to rewrite: all() says what is wrong with it
        std::error_code ec;
        const bool removed = !present.count(r.student) && !fs::exists(r.submission, ec);
        if (removed == r.submission_removed) continue;
        r.submission_removed = removed;
        try {
            gradebook_.record(r);
            if (removed)
                progress(r.student + ": submission " + r.submission + " is gone; its result stays, marked as removed");
        } catch (const std::exception& e) {
            progress(r.student + ": warning: cannot mark the result as " + (removed ? "removed" : "current") + ": " +
                     e.what());
        }
    }
}

std::string Grader::previous_status(const std::string& student) const {
    try {
        std::ifstream in(gradebook_.student_file(student));
        return StudentResult::from_json(nlohmann::json::parse(in)).status;
    } catch (const std::exception&) {
        return "";
    }
}

}  // namespace kreg
