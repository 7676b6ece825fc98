#include "grade/grader.hpp"

#include "common/elapsed.hpp"
#include "common/host_info.hpp"
#include "common/operation_table.hpp"
#include "grade/class_page.hpp"
#include "grade/compiler_error.hpp"
#include "grade/feedback.hpp"
#include "grade/provenance.hpp"
#include "grade/self_check.hpp"
#include "grade/student_view.hpp"
#include "grade/timing_claims.hpp"
#include "ops/operation.hpp"
#include "report/atomic_file.hpp"
#include "sweep/executor.hpp"
#include "worker/stop_request.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>

namespace kreg {
namespace fs = std::filesystem;

namespace {

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

// The largest C a rubric's runs export (bytes): the sandbox's file size limit must let the worker
// write it.
uint64_t largest_output_bytes(const Rubric& rubric) {
    // C's extent is the operation's (operations.def): M x N for GEMM and the transposes.
    const Extent c = operation_row(rubric.operation).c;
    uint64_t largest = 0;
    for (const auto& entry : rubric.correctness)
        for (const Shape& shape : entry.shapes)
            largest = std::max(largest, uint64_t(element_count(shape, c)) * sizeof(float));
    for (const auto& tier : rubric.performance)
        largest = std::max(largest, uint64_t(element_count(tier.shape, c)) * sizeof(float));
    return largest;
}

Grader::Grader(GradeOptions options)
    : options_(std::move(options)),
      gradebook_(options_.out_dir, options_.rubric),
      rubric_hash_(rubric_sha256(options_.rubric)) {
    options_.sandbox.max_file_bytes = std::max(options_.sandbox.max_file_bytes, largest_output_bytes(options_.rubric));
    ExecutorOptions trusted;
    trusted.runner_exe = options_.runner_exe;
    trusted.echo_worker_stderr = options_.verbose;
    trusted.cuda_visible_devices = options_.cuda_visible_devices;
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
    // A self-check holds no worker on one CPU (grade/self_check.hpp): nothing could keep it there.
    if (!cpu_tiers || options_.unconfined_self_check) options_.timing_cpu = -1;
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
    o.cuda_visible_devices = options_.cuda_visible_devices;
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

void Grader::begin_run(const std::vector<Submission>& submissions,
                       const std::function<void(const std::string&)>& progress) {
    mark_removed_submissions(submissions, progress);
}

std::optional<StudentResult> Grader::grade_student(const Submission& s, const std::string& counter,
                                                   const std::function<void(const std::string&)>& progress) {
    // A stored result stands only while what it was computed from is unchanged.
    nlohmann::json current;
    try {
        current = provenance(submission_sha256(s.path), rubric_hash_, options_.secret);
    } catch (const std::exception&) {
        current = nullptr;  // unreadable: graded again, and grade() says why
    }
    if (keeps_stored_result(s, current, counter, progress)) return std::nullopt;
    StudentResult r;
    try {
        r = grade(s, current);
    } catch (const std::exception& e) {
        r.student = s.student;
        r.submission = s.path.string();
        r.max_score = options_.rubric.max_points();
        r.status = "error";
        r.summary = std::string("grading error: ") + e.what();
        if (options_.unconfined_self_check) r.unconfined_self_check = unconfined_self_check();
    }
    return r;
}

void Grader::take_result(const Submission& s, std::optional<StudentResult> result, const std::string& counter,
                         const std::function<void(const std::string&)>& progress, GradeRunSummary& run) {
    if (!result) {
        ++run.already_graded;
        return;
    }
    // A stop (SIGINT, SIGTERM) killed the worker in flight: what it left is no grade, so nothing of this
    // student is recorded and the next run grades them.
    if (stop_requested()) return;
    ++run.graded_now;
    StudentResult& r = *result;
    if (!record_result(s, r, counter, progress)) return;
    report_student(s, r, counter, progress);
    if (!run.confinement_reported && r.sandbox.is_object() && r.sandbox.contains("applied")) {
        progress("  confinement applied to " + s.student + "'s worker: " + confinement_steps(r.sandbox));
        run.confinement_reported = true;
    } else if (!run.confinement_reported && r.unconfined_self_check) {
        progress("  " + s.student + "'s worker was not confined (an unconfined self-check); not applied: " +
                 entry_names(r.unconfined_self_check->not_applied));
        run.confinement_reported = true;
    }
}

void Grader::end_run(GradeRunSummary& run, const std::function<void(const std::string&)>& progress) {
    // A class page is staff's, over a class's results; a self-check grades one student's own plugin.
    if (!options_.unconfined_self_check) {
        try {
            write_class_page(gradebook_, options_.rubric);  // <out>/index.html (grade/class_page.hpp)
        } catch (const std::exception& e) {
            progress(std::string("warning: the class page could not be written: ") + e.what());
        }
    }
    run.stop_signal = stop_signal();
}

bool Grader::keeps_stored_result(const Submission& s, const nlohmann::json& current, const std::string& counter,
                                 const std::function<void(const std::string&)>& progress) const {
    if (options_.force || !gradebook_.has(s.student)) return false;
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
        return true;
    }
    progress(counter + s.student + ": " + changed + "; grading again");
    return false;
}

bool Grader::record_result(const Submission& s, StudentResult& r, const std::string& counter,
                           const std::function<void(const std::string&)>& progress) {
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
            return false;
        }
    }
    return true;
}

void Grader::report_student(const Submission& s, const StudentResult& r, const std::string& counter,
                            const std::function<void(const std::string&)>& progress) {
    // What may be handed to the student: <out>/student-view/<id>.json (grade/student_view.hpp).
    try {
        write_file_atomically(
            options_.out_dir / "student-view" / (r.student + ".json"),
            student_view(r, options_.rubric).to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                "\n");
        write_student_feedback(options_.out_dir, r, options_.rubric);  // and as .md, .html (grade/feedback.hpp)
    } catch (const std::exception& e) {
        progress(counter + s.student + ": warning: the student view could not be written: " + e.what());
    }
    std::string summary = r.summary;  // its later lines (a compiler's error) indented under the student's
    for (size_t at = 0; (at = summary.find('\n', at)) != std::string::npos; at += 5) summary.replace(at, 1, "\n    ");
    progress(counter + s.student + ": " + r.status + ", " + format_points(r.score) + "/" + format_points(r.max_score) +
             (r.status == "graded" ? "" : " — " + summary));
    // Under a build failure, the first compiler error's context and excerpt (grade/compiler_error.hpp).
    for (const CheckResult& check : r.checks)
        if (check.kind == "build" && !check.passed && check.evidence.is_object() &&
            check.evidence.contains("first_error"))
            for (const std::string& line : error_excerpt_lines(check.evidence.value("first_error", "")))
                progress("    " + line);
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
