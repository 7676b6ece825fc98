#include "grade_command.hpp"

#include "cli.hpp"
#include "exit_status.hpp"
#include "paths.hpp"
#include "run/grade_run.hpp"
#include "run/grade_shards.hpp"

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

// The options of `runner grade`, as its --help lists them.
cxxopts::Options grade_options() {
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
    return options;
}

// The request of a grading run on this machine, from parsed options.
GradeRequest grade_request(const cxxopts::ParseResult& r, int argc, char** argv) {
    GradeRequest request;
    request.rubrics = r["rubric"].as<std::vector<std::string>>();
    if (r.count("submission")) request.submissions = r["submission"].as<std::vector<std::string>>();
    if (r.count("submissions")) request.submissions_dir = r["submissions"].as<std::string>();
    request.out = r["out"].as<std::string>();
    request.force = r.count("force") > 0;
    request.reseed = r.count("reseed") > 0;
    if (r.count("secret-seed")) request.secret_seed = r["secret-seed"].as<std::string>();
    request.device = r["device"].as<int>();
    if (r.count("plugin-dir")) request.plugin_dirs = r["plugin-dir"].as<std::vector<std::string>>();
    request.allow_no_landlock = r.count("allow-no-landlock") > 0;
    request.allow_static_libstdcxx = r.count("allow-static-libstdcxx") > 0;
    request.verbose = r.count("verbose") > 0;
    if (const char* lock = std::getenv(kTimedTierLockVariable); lock && *lock)
        request.timed_tier_lock = lock;  // a shard of --jobs
    request.argv.assign(argv, argv + argc);
    return request;
}

// --jobs N: N shards of this machine, merged; the merged gradebook's seed guard first (each shard guards its own).
int grade_with_jobs_command(const cxxopts::ParseResult& r, int jobs, int argc, char** argv) {
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--jobs" && i + 1 < argc)
            ++i;
        else if (a.rfind("--jobs=", 0) != 0)
            args.push_back(a);
    }
    try {
        const uint64_t secret = r.count("secret-seed") ? parse_secret_seed(r["secret-seed"].as<std::string>())
                                                       : secret_seed_from_environment().value_or(0);
        const auto others = graded_with_another_seed_than(Gradebook(r["out"].as<std::string>()), secret, true);
        if (!others.empty() && !r.count("reseed")) {
            std::cerr << "runner grade: " << seed_change_refusal(r["out"].as<std::string>(), others, secret) << "\n";
            return 2;
        }
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\n";
        return 2;
    }
    return grade_with_jobs(jobs, args, r["out"].as<std::string>(), runner_executable());
}

}  // namespace

int run_grade_command(int argc, char** argv) {
    cxxopts::Options options = grade_options();
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
    if (jobs > 1) return grade_with_jobs_command(r, jobs, argc, argv);
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

    GradeRequest request = grade_request(r, argc, argv);
    request.shard = shard;
    request.fail_under = fail_under;
    GradeEnvironment environment;
    environment.runner_exe = runner_executable();
    environment.configs_dir = configs_dir(environment.runner_exe);
    try {
        return GradeRun(std::move(request), std::move(environment), std::cerr, std::cout).execute();
    } catch (const RunError& e) {
        std::cerr << "runner grade: " << e.what() << "\n";
        return exit_status(e.kind());
    }
}

}  // namespace kreg::app
