#include "run/grade_run.hpp"

#include "common/library_format.hpp"
#include "grade/gradebook.hpp"
#include "grade/provenance.hpp"
#include "grade/self_check.hpp"
#include "merge/gradebook_shard.hpp"
#include "platform/host.hpp"
#include "plugin/discovery.hpp"
#include "report/meta.hpp"
#include "run/lanes.hpp"
#include "sandbox/confined_spawn.hpp"
#include "sandbox/landlock.hpp"
#include "sandbox/memory_limit.hpp"
#include "worker/cpu_time.hpp"
#include "worker/stop_request.hpp"

#include <algorithm>
#include <csignal>
#include <iostream>
#include <map>
#include <mutex>

namespace kreg {
namespace fs = std::filesystem;

namespace {

// What is in force for every submission, said once before anyone is graded: the rubric's limits, and how the
// memory cap is enforced on this machine (a cgroup where one can be made, else RLIMIT_DATA, and why).
std::string limits_header(const GradeOptions& go) {
    const GradeLimits& limits = go.rubric.limits;
    std::string why_no_cgroup;
    const bool cgroup = WorkerCgroup::create(uint64_t(limits.memory_mb) << 20, 0, why_no_cgroup).has_value();
    std::string s =
        "runner grade: limits: memory " + std::to_string(limits.memory_mb) + " MiB per worker and per build (" +
        (cgroup ? std::string("cgroup v2 memory.max") : "RLIMIT_DATA; no cgroup: " + why_no_cgroup) + "), each call " +
        format_points(limits.call_s) + " s, a submission's total " + format_points(limits.total_s) + " s, load " +
        format_points(limits.load_s) + " s, build " + format_points(limits.build_s) + " s\n";
    s += std::string("runner grade: confinement: namespaces (PID, mount, network with only lo down, IPC, UTS), ") +
         (platform::running_as_root() ? "uid " + std::to_string(kSandboxUid) + " without capabilities"
                                      : std::string("a user namespace")) +
         ", rlimits, seccomp, " +
         (landlock_abi() > 0 ? "Landlock ABI " + std::to_string(landlock_abi())
                             : std::string("no Landlock (--allow-no-landlock)")) +
         "; the first worker's own report follows its result\n";
    return s;
}

// An unconfined self-check's words before anything runs (grade/self_check.hpp): what it is, the limits that hold,
// what held the submission and every defence of the Linux grader that does not.
std::string self_check_header(const GradeOptions& go) {
    const GradeLimits& limits = go.rubric.limits;
    const UnconfinedSelfCheck self_check = unconfined_self_check();
    std::string s = "runner grade: UNCONFINED SELF-CHECK: " + self_check.summary + "\n";
    s += "runner grade: limits: each call " + format_points(limits.call_s) + " s, a submission's total " +
         format_points(limits.total_s) + " s, load " + format_points(limits.load_s) +
         " s; no memory limit (limits.memory_mb is enforced by the Linux grader only)\n";
    s += "runner grade: what still holds:\n";
    for (const std::string& applied : self_check.applied) s += "  + " + applied + "\n";
    s += "runner grade: not applied here (the Linux grader's defences, docs/GRADING.md):\n";
    for (const std::string& missing : self_check.not_applied) s += "  - " + missing + "\n";
    return s;
}

uint64_t secret_of(const GradeRequest& request) {
    return request.secret_seed ? parse_secret_seed(*request.secret_seed) : secret_seed_from_environment().value_or(0);
}

}  // namespace

std::string seed_change_refusal(const fs::path& out, const std::vector<std::string>& students, uint64_t secret) {
    std::string s = out.string() + " holds " + std::to_string(students.size()) +
                    " result(s) graded with a secret seed, and this run has " + (secret ? "another one" : "none") +
                    " (KREG_SECRET_SEED or --secret-seed); grading would overwrite:";
    for (size_t i = 0; i < students.size(); ++i) s += (i ? ", " : " ") + students[i];
    return s + "\n  Set the seed they were graded with, or pass --reseed to grade them again with this run's.";
}

GradeRun::GradeRun(GradeRequest request, GradeEnvironment environment, std::ostream& log, std::ostream& out)
    : request_(std::move(request)), environment_(std::move(environment)), log_(log), out_(out) {}

int GradeRun::execute() {
    GradePlan graded_with = plan();
    if (graded_with.options.unconfined_self_check) check_self_check(graded_with.options);
    std::vector<Submission> students = submissions();
    if (request_.shard) {
        students = take_shard(std::move(students), graded_with);
        if (students.empty()) return 0;  // more shards than students: this one has nobody to grade
    }
    const GradeOptions& go = graded_with.options;
    log_ << "runner grade: " << students.size() << " submission(s), rubric '" << go.rubric.name << "' ("
         << go.rubric.max_points() << " points" << (go.secret ? ", secret seed mixed in" : "") << "), results in "
         << go.out_dir.string() << "\n";
    std::vector<GradeLane> in_lanes = lanes();
    if (in_lanes.size() > students.size()) in_lanes.resize(students.size());  // no lane with nobody to grade
    if (request_.devices)
        log_ << "runner grade: grading on " << in_lanes.size() << " GPU(s) at once, one submission each\n";
    else if (in_lanes.size() > 1)
        log_ << "runner grade: grading " << in_lanes.size() << " submissions at once (timed tiers one at a time)\n";
    if (go.unconfined_self_check) {
        log_ << self_check_header(go);
    } else {
        check_confinement(go);
        log_ << limits_header(go);
    }
    return grade(go, students, in_lanes);
}

std::vector<GradeLane> grade_lanes(const GradeRequest& request, const std::vector<DeviceLane>& gpus) {
    std::vector<GradeLane> lanes;
    if (request.devices)
        for (const DeviceLane& gpu : gpus)
            lanes.push_back({gpu.uuid, "[device " + std::to_string(gpu.ordinal) + "] ", std::nullopt});
    else if (request.jobs > 1)
        for (int i = 1; i <= request.jobs; ++i)
            lanes.push_back({"", "[job " + std::to_string(i) + "] ", timing_cpu_for_shard(i)});
    else
        lanes.push_back({});
    return lanes;
}

GradeOptions lane_grade_options(const GradeOptions& base, const GradeLane& lane, size_t lanes) {
    GradeOptions go = base;
    if (!lane.uuid.empty()) {
        go.cuda_visible_devices = lane.uuid;
        go.device = 0;  // the lane's workers see its GPU alone
    }
    if (lane.timing_cpu) go.timing_cpu = *lane.timing_cpu;
    if (lanes > 1 && lane.uuid.empty()) go.timed_tier_lock = base.out_dir / ".timed-tiers.lock";
    return go;
}

std::vector<GradeLane> GradeRun::lanes() const {
    std::vector<DeviceLane> gpus;
    if (request_.devices) {
        ExecutorOptions probe_options;
        probe_options.runner_exe = environment_.runner_exe.string();
        Executor probe(probe_options);
        std::string why;
        gpus = resolve_device_lanes(*request_.devices, probe, why);
        if (!why.empty())
            throw RunError(why.rfind("--devices", 0) == 0 ? RunError::Kind::bad_input : RunError::Kind::cannot_run,
                           why);
    }
    return grade_lanes(request_, gpus);
}

// The rubric (the published file and any staff-only ones), the secret seed, the settings and the trusted plugins.
GradePlan GradeRun::plan() const {
    const fs::path& exe = environment_.runner_exe;
    GradePlan out;
    GradeOptions& go = out.options;
    try {
        std::vector<Rubric> rubrics;
        for (const auto& path : request_.rubrics) {
            const fs::path resolved = resolve_config_path(path, environment_.configs_dir, "rubric");
            rubrics.push_back(load_rubric(resolved));
            out.rubric_files.push_back(resolved.string());  // a shard's manifest names them for runner merge
        }
        go.rubric = merge_rubrics(rubrics);
        go.secret = secret_of(request_);
    } catch (const ConfigError& e) {
        throw RunError(RunError::Kind::bad_input, std::string("rubric error: ") + e.what());
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::bad_input, e.what());
    }
    go.out_dir = request_.out;
    go.timing_cpu = timing_cpu_for_shard(request_.shard ? request_.shard->index : 1);  // used by CPU rubrics only
    go.force = request_.force;
    go.runner_exe = exe.string();
    go.device = request_.device;
    go.verbose = request_.verbose;
    go.tolerate_static_libstdcxx = request_.allow_static_libstdcxx;
    go.unconfined_self_check = !confinement_built();  // Windows: a student's self-check only (check_self_check)
    go.kreg_prefix = (exe.parent_path() / "..").lexically_normal();  // lib/cmake/kreg in the build and install trees

    PluginSearch trusted;
    for (const auto& d : request_.plugin_dirs) trusted.directories.push_back(d);
    if (request_.plugin_dirs.empty()) trusted.directories.push_back(default_plugin_dir(exe));
    std::vector<std::string> problems;
    go.reference_plugins = find_plugin_files(trusted, problems);
    for (const auto& p : problems) log_ << "runner grade: warning: " << p << "\n";
    return out;
}

std::vector<Submission> GradeRun::submissions() const {
    std::vector<Submission> found;
    try {
        std::vector<fs::path> files(request_.submissions.begin(), request_.submissions.end());
        std::optional<fs::path> dir;
        if (request_.submissions_dir) dir = *request_.submissions_dir;
        std::vector<std::string> ignored;
        found = find_submissions(files, dir, ignored);
        for (const auto& i : ignored) log_ << "runner grade: ignored " << i << "\n";
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::bad_input, e.what());
    }
    if (found.empty()) throw RunError(RunError::Kind::nothing_to_run, "no submissions found");
    return found;
}

// A shard grades every K-th student of the sorted submissions into a gradebook folder of its own, with the
// manifest runner merge checks it by (merge/gradebook_shard.hpp), written before anyone is graded so that
// an interrupted shard is seen as one.
std::vector<Submission> GradeRun::take_shard(std::vector<Submission> submissions, GradePlan& plan) const {
    const Shard& shard = *request_.shard;
    GradeOptions& go = plan.options;
    std::sort(submissions.begin(), submissions.end(),
              [](const Submission& a, const Submission& b) { return a.student < b.student; });
    GradebookShard manifest;
    manifest.index = shard.index;
    manifest.count = shard.count;
    for (const auto& s : submissions) manifest.all_students.push_back(s.student);
    manifest.students = students_of_shard(manifest.all_students, shard.index, shard.count);
    manifest.rubric_sha256 = rubric_sha256(go.rubric);
    manifest.rubric_files = plan.rubric_files;
    manifest.secret_sha256 = provenance("", manifest.rubric_sha256, go.secret)["secret_sha256"];
    manifest.kreg_version = KREG_VERSION;
    manifest.git_sha = kreg_git_sha();
    manifest.argv = request_.argv;
    manifest.argv.insert(manifest.argv.begin(), environment_.runner_exe.string());
    manifest.cwd = fs::current_path().string();
    std::vector<Submission> slice;
    for (size_t i = 0; i < submissions.size(); ++i)
        if (i % size_t(shard.count) == size_t(shard.index - 1)) slice.push_back(submissions[i]);
    go.out_dir = gradebook_shard_dir(go.out_dir, shard.index, shard.count);
    try {
        write_gradebook_shard(go.out_dir, manifest);
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::cannot_run, std::string("cannot write the shard's manifest: ") + e.what());
    }
    log_ << "runner grade: shard " << shard.index << "/" << shard.count << ": " << slice.size() << " of "
         << manifest.all_students.size() << " submission(s), into " << go.out_dir.string() << "\n";
    return slice;
}

// Untrusted code runs confined or not at all: said once, before any submission is touched.
void GradeRun::check_confinement(const GradeOptions& go) const {
    if (const std::string why = why_confinement_fails(go.runner_exe); !why.empty())
        throw RunError(RunError::Kind::cannot_run,
                       "this machine cannot confine submissions: " + why +
                           "\n  (grading needs user or root privileges for PID, mount and network namespaces; see "
                           "docs/GRADING.md)");
    if (landlock_abi() == 0 && !request_.allow_no_landlock)
        throw RunError(RunError::Kind::cannot_run,
                       "this kernel has no Landlock (Linux >= 5.13, with landlock in its lsm= list): workers "
                       "could write outside their scratch folder.\n  Grade on a kernel with Landlock, or pass "
                       "--allow-no-landlock "
                       "to grade with the other layers only.");
}

void GradeRun::check_self_check(const GradeOptions& go) const {
    const std::string why = why_confinement_fails(go.runner_exe);
    const std::string only =
        "\n  This runner grades one student's own plugin, unconfined, as a self-check: runner grade --rubric "
        "RUBRIC.json --submission my_gemm" +
        std::string(native_plugin_suffix()) + " (docs/WINDOWS.md).";
    if (request_.submissions_dir || request_.submissions.size() != 1 || request_.jobs > 1 || request_.devices ||
        request_.shard)
        throw RunError(RunError::Kind::cannot_run,
                       "grading others' submissions (--submissions, several --submission, --jobs, --devices, "
                       "--shard) needs their confinement, and " +
                           why + only);
    if (go.secret != 0)
        throw RunError(RunError::Kind::cannot_run,
                       "a secret seed (--secret-seed or KREG_SECRET_SEED) is the staff's, and an unconfined worker "
                       "could read it from its environment or the runner's memory; a self-check uses the published "
                       "rubric's seeds: unset it" +
                           only);
    if (request_.rubrics.size() > 1)
        throw RunError(RunError::Kind::cannot_run,
                       "a second --rubric adds the staff's hidden cases, whose shapes an unconfined worker would "
                       "see; a self-check takes the published rubric alone" +
                           only);
}

int GradeRun::grade(const GradeOptions& go, const std::vector<Submission>& submissions,
                    const std::vector<GradeLane>& lanes) const {
    try {
        if (lanes.size() > 1) fs::create_directories(go.out_dir);  // for the timed tiers' lock
        std::vector<std::unique_ptr<Grader>> graders;
        for (const GradeLane& lane : lanes)
            graders.push_back(std::make_unique<Grader>(lane_grade_options(go, lane, lanes.size())));
        Grader& grader = *graders.front();  // every lane's grader keeps the same gradebook
        // The seed guard: a staff gradebook made with the secret seed is not silently re-graded by a shell
        // without it (KREG_SECRET_SEED unset) or with another one.
        if (const auto others = grader.graded_with_another_seed(true); !others.empty() && !request_.reseed)
            throw RunError(RunError::Kind::bad_input, seed_change_refusal(go.out_dir, others, go.secret));
        if (const auto others = grader.graded_with_another_seed(false); !others.empty()) {
            grader.set_aside_results_of_another_seed();
            log_ << "runner grade: the secret seed changed: " << others.size()
                 << " result(s) graded with another seed moved to " << (go.out_dir / "replaced-seed").string()
                 << " and graded again:";
            for (size_t i = 0; i < std::min<size_t>(others.size(), 10); ++i) log_ << (i ? ", " : " ") << others[i];
            log_ << (others.size() > 10 ? ", ...\n" : "\n");
        }
        install_stop_handlers();  // Ctrl-C or SIGTERM: the students in flight are dropped, the finished ones stay
        const GradeRunSummary run = grade_in_lanes(graders, lanes, submissions);
        if (run.stop_signal) {
            log_ << "runner grade: interrupted by " << (run.stop_signal == SIGINT ? "SIGINT" : "SIGTERM") << ": "
                 << run.finished() << " of " << run.submissions << " student(s) finished (" << run.graded_now
                 << " graded by this run, " << run.already_graded << " already graded), "
                 << run.submissions - run.finished() << " to go; every finished result is in " << go.out_dir.string()
                 << ".\n  Run the same command again to grade the rest (finished students are kept).\n";
            return 128 + run.stop_signal;
        }
        out_ << grader.gradebook().console_summary();
        out_ << "gradebook: " << (go.out_dir / "gradebook.csv").string() << "\n";
        if (go.unconfined_self_check)
            out_ << "self-check: " << (go.out_dir / "students").string()
                 << "/ (unconfined: see unconfined_self_check; feedback: " << (go.out_dir / "student-view").string()
                 << "/)\n";
        else
            out_ << "class page: " << (go.out_dir / "index.html").string()
                 << " (feedback: " << (go.out_dir / "student-view").string() << "/)\n";
        return finish(grader.gradebook(), submissions);
    } catch (const RunError&) {
        throw;
    } catch (const ConfigError& e) {  // the rubric against the trusted plugins, before anyone is graded
        throw RunError(RunError::Kind::bad_input, std::string("rubric error: ") + e.what());
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::cannot_run, e.what());
    }
}

// Every submission graded once, each lane taking the next one as it becomes free, each result recorded and
// reported as it arrives (one at a time, whichever lane it came from), each lane's lines marked with its mark.
GradeRunSummary GradeRun::grade_in_lanes(std::vector<std::unique_ptr<Grader>>& graders,
                                         const std::vector<GradeLane>& lanes,
                                         const std::vector<Submission>& submissions) const {
    std::mutex log_lock;
    auto marked = [&](const std::string& mark) {
        return [&, mark](const std::string& line) {
            std::lock_guard<std::mutex> hold(log_lock);
            log_ << mark << line << "\n";
        };
    };
    std::vector<std::function<void(const std::string&)>> progress;
    for (const GradeLane& lane : lanes) progress.push_back(marked(lane.mark));
    auto counter = [&](size_t i) {
        return "[" + std::to_string(i + 1) + "/" + std::to_string(submissions.size()) + "] ";
    };
    GradeRunSummary run;
    run.submissions = submissions.size();
    graders.front()->begin_run(submissions, marked(""));  // the run's own lines: no lane's mark
    LaneCallbacks<std::optional<StudentResult>> callbacks;
    callbacks.run = [&](size_t lane, size_t i) {
        return graders[lane]->grade_student(submissions[i], counter(i), progress[lane]);
    };
    callbacks.take = [&](size_t lane, size_t i, std::optional<StudentResult>&& result) {
        graders[lane]->take_result(submissions[i], std::move(result), counter(i), progress[lane], run);
    };
    callbacks.stop = [] { return stop_requested(); };
    run_in_lanes(one_item_groups(submissions.size()), graders.size(), callbacks);
    graders.front()->end_run(run, marked(""));
    return run;
}

// What the run ends with, from the gradebook's results for this run's submissions. With exactly one
// submission, its checks are listed too (the student template's README promises them).
int GradeRun::finish(const Gradebook& gradebook, const std::vector<Submission>& submissions) const {
    std::map<std::string, StudentResult> results;
    for (auto& result : gradebook.all()) results[result.student] = std::move(result);
    bool unfinished = false, below = false;
    for (const auto& s : submissions) {
        const auto it = results.find(s.student);
        if (it == results.end() || it->second.status == "error") {
            unfinished = true;
            continue;
        }
        if (request_.fail_under && it->second.score < *request_.fail_under) below = true;
        if (submissions.size() == 1) out_ << "\n" << format_checks(it->second);
    }
    if (unfinished) {
        log_ << "runner grade: grading could not finish every submission (status error)\n";
        return 1;
    }
    if (below) {
        log_ << "runner grade: a score is below --fail-under " << format_points(*request_.fail_under) << "\n";
        return 4;
    }
    return 0;
}

}  // namespace kreg
