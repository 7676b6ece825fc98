#include "grade_command.hpp"

#include "cli.hpp"
#include "exit_status.hpp"
#include "paths.hpp"
#include "run/grade_run.hpp"

#include <cxxopts.hpp>

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
        ("devices", "Grade on these GPUs at once, one submission on each, into the one gradebook in OUT: 'all' or ordinals (0,1)", cxxopts::value<std::string>())
        ("plugin-dir", "Trusted plugins providing reference kernels (default: the runner's own)", cxxopts::value<std::vector<std::string>>())
        ("allow-no-landlock", "Grade even where the kernel has no Landlock (workers could then write outside their scratch folder)")
        ("allow-static-libstdcxx", "Audit: tolerate syscall/getentropy/open/ioctl imports in plugins that carry a static libstdc++ (toolchains that link it statically); seccomp still confines them")
        ("shard", "Grade only slice I of K of the submissions (sorted by student; I/K, or 'auto' for this Slurm array task), into OUT/shard-I-of-K; runner merge puts the K back together", cxxopts::value<std::string>())
        ("fail-under", "Exit with 4 when any student's score is below SCORE (a student's own CI)", cxxopts::value<double>(), "SCORE")
        ("jobs", "Grade N submissions at once on this machine's CPUs, into the one gradebook in OUT: correctness in parallel, timed tiers one at a time", cxxopts::value<int>()->default_value("1"), "N")
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
    request.argv.assign(argv, argv + argc);
    return request;
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
    std::optional<DevicesSpec> devices;
    if (r.count("devices")) {
        try {
            devices = parse_devices(r["devices"].as<std::string>());
            if (shard || r.count("device"))
                throw std::invalid_argument("--devices cannot be combined with --shard or --device");
        } catch (const std::exception& e) {
            std::cerr << "runner grade: " << e.what() << "\n";
            return 2;
        }
    }

    GradeRequest request = grade_request(r, argc, argv);
    request.shard = shard;
    request.fail_under = fail_under;
    request.devices = devices;
    request.jobs = jobs;
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
