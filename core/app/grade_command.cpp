#include "grade_command.hpp"

#include "cli.hpp"
#include "grade_devices.hpp"
#include "grade/grader.hpp"
#include "grade/provenance.hpp"
#include "merge/gradebook_shard.hpp"
#include "merge/shard.hpp"
#include "report/meta.hpp"
#include "paths.hpp"
#include "plugin/discovery.hpp"
#include "sandbox/confined_spawn.hpp"
#include "sandbox/landlock.hpp"
#include "sandbox/memory_limit.hpp"
#include "worker/cpu_time.hpp"
#include "worker/stop_request.hpp"

#include <cxxopts.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

namespace kreg::app {
namespace fs = std::filesystem;

namespace {
const char* const kExitStatusHelp =
    "\nExit status: 0 every submission was graded (whatever its score or status); 1 grading could not finish\n"
    "some submission (status error); 2 bad command line or rubric; 3 nothing to grade, or this machine cannot\n"
    "confine submissions; 4 (with --fail-under) some score is below SCORE. 1 wins over 4.\n"
    "\nOn a Slurm cluster: the same command line with --slurm --shards K [--partition P] [--wait] ...\n"
    "(see 'runner submit --help').\n";

// What the run ends with, from the gradebook's results for this run's submissions. With exactly one
// submission, its checks are listed too (the student template's README promises them).
int exit_status(const Gradebook& gradebook, const std::vector<Submission>& submissions,
                std::optional<double> fail_under) {
    std::map<std::string, StudentResult> results;
    for (auto& result : gradebook.all()) results[result.student] = std::move(result);
    bool unfinished = false, below = false;
    for (const auto& s : submissions) {
        const auto it = results.find(s.student);
        if (it == results.end() || it->second.status == "error") {
            unfinished = true;
            continue;
        }
        if (fail_under && it->second.score < *fail_under) below = true;
        if (submissions.size() == 1) std::cout << "\n" << format_checks(it->second);
    }
    if (unfinished) {
        std::cerr << "runner grade: grading could not finish every submission (status error)\n";
        return 1;
    }
    if (below) {
        std::cerr << "runner grade: a score is below --fail-under " << format_points(*fail_under) << "\n";
        return 4;
    }
    return 0;
}
// The seed guard's refusal: exit 2, naming every student whose secret-seed result the run would overwrite.
int refuse_seed_change(const fs::path& out, const std::vector<std::string>& students, uint64_t secret) {
    std::cerr << "runner grade: " << out.string() << " holds " << students.size()
              << " result(s) graded with a secret seed, and this run has " << (secret ? "another one" : "none")
              << " (KREG_SECRET_SEED or --secret-seed); grading would overwrite:";
    for (size_t i = 0; i < students.size(); ++i) std::cerr << (i ? ", " : " ") << students[i];
    std::cerr << "\n  Set the seed they were graded with, or pass --reseed to grade them again with this run's.\n";
    return 2;
}

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
         (::geteuid() == 0 ? "uid " + std::to_string(kSandboxUid) + " without capabilities"
                           : std::string("a user namespace")) +
         ", rlimits, seccomp, " +
         (landlock_abi() > 0 ? "Landlock ABI " + std::to_string(landlock_abi())
                             : std::string("no Landlock (--allow-no-landlock)")) +
         "; the first worker's own report follows its result\n";
    return s;
}

}  // namespace

int run_grade_command(int argc, char** argv) {
    cxxopts::Options options("runner grade", "Grade untrusted kreg plugin submissions against a rubric.");
    options.set_width(100);
    options.custom_help("--rubric RUBRIC.json (--submission PATH | --submissions DIR) [OPTION...]");
    // clang-format off
    options.add_options()
        ("h,help", "Show this help")
        ("rubric", "Rubric (JSON); repeat to add a staff-only file of hidden cases", cxxopts::value<std::vector<std::string>>())
        ("submission", "One submission: a .so, or a folder with a CMakeLists.txt; repeatable", cxxopts::value<std::vector<std::string>>())
        ("submissions", "A folder of submissions: *.so files and/or one folder per student", cxxopts::value<std::string>())
        ("out", "Folder for per-student results and gradebook.csv", cxxopts::value<std::string>()->default_value("grades"))
        ("force", "Grade again students who already have a result")
        ("reseed", "Grade again, with this run's secret seed (or none), students graded with another secret seed; without it such a run stops with 2")
        ("secret-seed", "Mixed into every case seed (default: $KREG_SECRET_SEED)", cxxopts::value<std::string>())
        ("device", "CUDA device ordinal", cxxopts::value<int>()->default_value("0"))
        ("devices", "Grade on these GPUs at once, one shard of the students each, merged into OUT: 'all' or ordinals (0,1)", cxxopts::value<std::string>())
        ("plugin-dir", "Trusted plugins providing reference kernels (default: the runner's own)", cxxopts::value<std::vector<std::string>>())
        ("allow-no-landlock", "Grade even where the kernel has no Landlock (workers could then write outside their scratch folder)")
        ("allow-static-libstdcxx", "Audit: tolerate syscall/getentropy/open/ioctl imports in plugins that carry a static libstdc++ (toolchains that link it statically); seccomp still confines them")
        ("shard", "Grade only slice I of K of the submissions (sorted by student; I/K, or 'auto' for this Slurm array task), into OUT/shard-I-of-K; runner merge puts the K back together", cxxopts::value<std::string>())
        ("fail-under", "Exit with 4 when any student's score is below SCORE (a student's own CI)", cxxopts::value<double>(), "SCORE")
        ("jobs", "Grade N submissions at once, one shard each, merged into OUT: correctness in parallel, timed tiers one at a time", cxxopts::value<int>()->default_value("1"), "N")
        ("v,verbose", "Show what workers print on stderr");
    // clang-format on
    cxxopts::ParseResult r;
    try {
        r = options.parse(argc, argv);
        if (!r.unmatched().empty()) throw std::invalid_argument("unexpected argument '" + r.unmatched().front() + "'");
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\nTry 'runner grade --help'.\n";
        return 2;
    }
    if (r.count("help")) {
        std::cout << options.help() << kExitStatusHelp;
        return 0;
    }
    std::optional<double> fail_under;
    if (r.count("fail-under")) {
        fail_under = r["fail-under"].as<double>();
        if (!std::isfinite(*fail_under)) {
            std::cerr << "runner grade: --fail-under needs a finite score\n";
            return 2;
        }
    }
    std::optional<Shard> shard;
    try {
        if (r.count("shard"))
            shard = parse_shard(r["shard"].as<std::string>(), [](const char* name) { return std::getenv(name); });
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\n";
        return 2;
    }
    if (!r.count("rubric") || (!r.count("submission") && !r.count("submissions"))) {
        std::cerr << "runner grade: needs --rubric and at least one --submission or --submissions\n";
        return 2;
    }
    const int jobs = r["jobs"].as<int>();
    if (jobs < 1 || jobs > 256 || (jobs > 1 && (r.count("devices") || shard))) {
        std::cerr
            << "runner grade: --jobs needs a count from 1 to 256, and cannot be combined with --devices or --shard\n";
        return 2;
    }
    if (jobs > 1) {
        std::vector<std::string> args;
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "--jobs" && i + 1 < argc)
                ++i;
            else if (a.rfind("--jobs=", 0) != 0)
                args.push_back(a);
        }
        // The seed guard of the merged gradebook, which the merge would replace (each shard guards its own).
        try {
            const uint64_t secret = r.count("secret-seed") ? parse_secret_seed(r["secret-seed"].as<std::string>())
                                                           : secret_seed_from_environment().value_or(0);
            const auto others = graded_with_another_seed_than(Gradebook(r["out"].as<std::string>()), secret, true);
            if (!others.empty() && !r.count("reseed"))
                return refuse_seed_change(r["out"].as<std::string>(), others, secret);
        } catch (const std::exception& e) {
            std::cerr << "runner grade: " << e.what() << "\n";
            return 2;
        }
        return grade_with_jobs(jobs, args, r["out"].as<std::string>(), runner_executable());
    }
    if (r.count("devices")) {
        DevicesSpec devices;
        try {
            devices = parse_devices(r["devices"].as<std::string>());
            if (shard || r.count("device"))
                throw std::invalid_argument("--devices cannot be combined with --shard or --device");
        } catch (const std::exception& e) {
            std::cerr << "runner grade: " << e.what() << "\n";
            return 2;
        }
        std::string ignored;
        const std::vector<std::string> args =
            without_devices_option(std::vector<std::string>(argv + 1, argv + argc), ignored);
        return grade_on_devices(devices, args, r["out"].as<std::string>(), runner_executable());
    }

    const fs::path exe = runner_executable();
    GradeOptions go;
    std::vector<std::string>
        rubric_files;  // as loaded (a rubric's hash holds them): a grading shard's manifest names them for runner merge
    try {
        std::vector<Rubric> rubrics;
        for (const auto& path : r["rubric"].as<std::vector<std::string>>()) {
            const fs::path resolved = resolve_config_path(path, configs_dir(exe), "rubric");
            rubrics.push_back(load_rubric(resolved));
            rubric_files.push_back(resolved.string());
        }
        go.rubric = merge_rubrics(rubrics);
        if (r.count("secret-seed"))
            go.secret = parse_secret_seed(r["secret-seed"].as<std::string>());
        else
            go.secret = secret_seed_from_environment().value_or(0);
    } catch (const ConfigError& e) {
        std::cerr << "runner grade: rubric error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\n";
        return 2;
    }
    go.out_dir = r["out"].as<std::string>();
    if (const char* lock = std::getenv(kTimedTierLockVariable); lock && *lock && shard)
        go.timed_tier_lock = lock;                                   // a shard of --jobs
    go.timing_cpu = timing_cpu_for_shard(shard ? shard->index : 1);  // used by CPU rubrics only
    go.force = r.count("force") > 0;
    go.runner_exe = exe.string();
    go.device = r["device"].as<int>();
    go.verbose = r.count("verbose") > 0;
    go.tolerate_static_libstdcxx = r.count("allow-static-libstdcxx") > 0;
    go.kreg_prefix = (exe.parent_path() / "..").lexically_normal();  // lib/cmake/kreg in the build and install trees

    PluginSearch trusted;
    if (r.count("plugin-dir"))
        for (const auto& d : r["plugin-dir"].as<std::vector<std::string>>()) trusted.directories.push_back(d);
    else
        trusted.directories.push_back(default_plugin_dir(exe));
    std::vector<std::string> problems;
    go.reference_plugins = find_plugin_files(trusted, problems);
    for (const auto& p : problems) std::cerr << "runner grade: warning: " << p << "\n";

    std::vector<Submission> submissions;
    try {
        std::vector<fs::path> files;
        if (r.count("submission"))
            for (const auto& s : r["submission"].as<std::vector<std::string>>()) files.emplace_back(s);
        std::optional<fs::path> dir;
        if (r.count("submissions")) dir = r["submissions"].as<std::string>();
        std::vector<std::string> ignored;
        submissions = find_submissions(files, dir, ignored);
        for (const auto& i : ignored) std::cerr << "runner grade: ignored " << i << "\n";
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\n";
        return 2;
    }
    if (submissions.empty()) {
        std::cerr << "runner grade: no submissions found\n";
        return 3;
    }
    // A shard grades every K-th student of the sorted submissions into a gradebook folder of its own, with the
    // manifest runner merge checks it by (merge/gradebook_shard.hpp), written before anyone is graded so that
    // an interrupted shard is seen as one.
    if (shard) {
        std::sort(submissions.begin(), submissions.end(),
                  [](const Submission& a, const Submission& b) { return a.student < b.student; });
        GradebookShard manifest;
        manifest.index = shard->index;
        manifest.count = shard->count;
        for (const auto& s : submissions) manifest.all_students.push_back(s.student);
        manifest.students = students_of_shard(manifest.all_students, shard->index, shard->count);
        manifest.rubric_sha256 = rubric_sha256(go.rubric);
        manifest.rubric_files = rubric_files;
        manifest.secret_sha256 = provenance("", manifest.rubric_sha256, go.secret)["secret_sha256"];
        manifest.kreg_version = KREG_VERSION;
        manifest.git_sha = kreg_git_sha();
        for (int i = 0; i < argc; ++i) manifest.argv.emplace_back(argv[i]);
        manifest.argv.insert(manifest.argv.begin(), runner_executable().string());
        manifest.cwd = fs::current_path().string();
        std::vector<Submission> slice;
        for (size_t i = 0; i < submissions.size(); ++i)
            if (i % size_t(shard->count) == size_t(shard->index - 1)) slice.push_back(submissions[i]);
        submissions = std::move(slice);
        go.out_dir = gradebook_shard_dir(go.out_dir, shard->index, shard->count);
        try {
            write_gradebook_shard(go.out_dir, manifest);
        } catch (const std::exception& e) {
            std::cerr << "runner grade: cannot write the shard's manifest: " << e.what() << "\n";
            return 3;
        }
        std::cerr << "runner grade: shard " << shard->index << "/" << shard->count << ": " << submissions.size()
                  << " of " << manifest.all_students.size() << " submission(s), into " << go.out_dir.string() << "\n";
        if (submissions.empty()) return 0;  // more shards than students: this one has nobody to grade
    }
    std::cerr << "runner grade: " << submissions.size() << " submission(s), rubric '" << go.rubric.name << "' ("
              << go.rubric.max_points() << " points" << (go.secret ? ", secret seed mixed in" : "") << "), results in "
              << go.out_dir.string() << "\n";
    // Untrusted code runs confined or not at all: say so once, before any submission is touched.
    if (const std::string why = why_confinement_fails(go.runner_exe); !why.empty()) {
        std::cerr << "runner grade: this machine cannot confine submissions: " << why
                  << "\n  (grading needs user or root privileges for PID, mount and network namespaces; see "
                     "docs/GRADING.md)\n";
        return 3;
    }
    if (landlock_abi() == 0 && !r.count("allow-no-landlock")) {
        std::cerr
            << "runner grade: this kernel has no Landlock (Linux >= 5.13, with landlock in its lsm= list): workers "
               "could write outside their scratch folder.\n  Grade on a kernel with Landlock, or pass "
               "--allow-no-landlock "
               "to grade with the other layers only.\n";
        return 3;
    }
    std::cerr << limits_header(go);
    try {
        Grader grader(go);
        // The seed guard: a staff gradebook made with the secret seed is not silently re-graded by a shell
        // without it (KREG_SECRET_SEED unset) or with another one.
        if (const auto others = grader.graded_with_another_seed(true); !others.empty() && !r.count("reseed"))
            return refuse_seed_change(go.out_dir, others, go.secret);
        if (const auto others = grader.graded_with_another_seed(false); !others.empty()) {
            grader.set_aside_results_of_another_seed();
            std::cerr << "runner grade: the secret seed changed: " << others.size()
                      << " result(s) graded with another seed moved to " << (go.out_dir / "replaced-seed").string()
                      << " and graded again:";
            for (size_t i = 0; i < std::min<size_t>(others.size(), 10); ++i) std::cerr << (i ? ", " : " ") << others[i];
            std::cerr << (others.size() > 10 ? ", ...\n" : "\n");
        }
        install_stop_handlers();  // Ctrl-C or SIGTERM: the student in flight is dropped, the finished ones stay
        const GradeRunSummary run =
            grader.grade_all(submissions, [](const std::string& line) { std::cerr << line << "\n"; });
        if (run.stop_signal) {
            std::cerr << "runner grade: interrupted by " << (run.stop_signal == SIGINT ? "SIGINT" : "SIGTERM") << ": "
                      << run.finished() << " of " << run.submissions << " student(s) finished (" << run.graded_now
                      << " graded by this run, " << run.already_graded << " already graded), "
                      << run.submissions - run.finished() << " to go; every finished result is in "
                      << go.out_dir.string()
                      << ".\n  Run the same command again to grade the rest (finished students are kept).\n";
            return 128 + run.stop_signal;
        }
        std::cout << grader.gradebook().console_summary();
        std::cout << "gradebook: " << (go.out_dir / "gradebook.csv").string() << "\n";
        std::cout << "class page: " << (go.out_dir / "index.html").string()
                  << " (feedback: " << (go.out_dir / "student-view").string() << "/)\n";
        return exit_status(grader.gradebook(), submissions, fail_under);
    } catch (const ConfigError& e) {  // the rubric against the trusted plugins, before anyone is graded
        std::cerr << "runner grade: rubric error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\n";
        return 3;
    }
}

}  // namespace kreg::app
