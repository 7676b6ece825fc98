#include "submit_command.hpp"

#include "common/argv_words.hpp"
#include "config/sweep_config.hpp"
#include "paths.hpp"
#include "run/shard_probe.hpp"
#include "slurm/sharded_submit.hpp"

#include <filesystem>
#include <iostream>

namespace kreg::app {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> args_of(int argc, char** argv) { return std::vector<std::string>(argv + 1, argv + argc); }

}  // namespace

bool grade_wants_slurm(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--slurm") return true;
    return false;
}

int run_submit_command(int argc, char** argv) {
    std::vector<std::string> rest;
    slurm::SubmitOptions o;
    try {
        o = slurm::take_submit_options(args_of(argc, argv), rest);
        if (o.help) {
            std::cout << slurm::kSubmitHelp;
            return 0;
        }
        for (const char* refused : {"--shard", "--resume", "--list", "--stress", "--profile", "--version", "--format"})
            if (has_option(rest, refused))
                throw std::invalid_argument(std::string(refused) +
                                            " cannot be submitted (each array task runs its own --shard I/K)");
    } catch (const std::exception& e) {
        std::cerr << "runner submit: " << e.what() << "\nTry 'runner submit --help'.\n";
        return 2;
    }
    const std::string exe = runner_executable().string();
    // The sweep's --json/--csv/--force belong to the merged report; each shard writes its own in DIR.
    const auto json = option_values(rest, "--json"), csv = option_values(rest, "--csv");
    const bool force = has_option(rest, "--force");
    std::vector<std::string> sweep =
        without_option(without_option(without_option(rest, "--json", true), "--csv", true), "--force", false);

    int status = 0;
    std::optional<SweepProbe> check;
    try {
        check = probe_sweep(exe, sweep, status, std::cerr);
    } catch (const std::exception& e) {
        std::cerr << "runner submit: " << e.what() << "\n";
        return 3;
    }
    if (!check) return status;
    const int shards = *o.shards;
    if (size_t(shards) > check->jobs) {
        std::cerr << "runner submit: --shards " << shards << ": the sweep has " << check->jobs
                  << " job(s), so some shards would have nothing to run; use at most --shards " << check->jobs << "\n";
        return 2;
    }
    const int gpus = o.gpus_per_task.value_or(check->has_cuda ? 1 : 0);
    if (gpus == 0 && check->has_cuda)
        std::cerr << "runner submit: note: the sweep has CUDA kernels and asks for no GPU (--gpus-per-task 0)\n";

    const auto configs = option_values(sweep, "--config");
    const auto short_configs = option_values(sweep, "-c");
    std::string name = "cli";
    if (!configs.empty())
        name = slurm::job_name_of(fs::path(configs.back()).stem().string());
    else if (!short_configs.empty())
        name = slurm::job_name_of(fs::path(short_configs.back()).stem().string());
    const fs::path dir = slurm::choose_slurm_dir(o, name);

    slurm::ShardedJob job = slurm::base_job(o, name, dir, gpus);
    slurm::add_sweep_commands(job, exe, sweep, dir, name, json, csv, force);
    return slurm::submit_sharded_job(job, dir, o, configs.empty() ? "the sweep" : configs.back(), std::cout, std::cerr);
}

int run_grade_slurm_command(int argc, char** argv) {
    std::vector<std::string> rest;
    slurm::SubmitOptions o;
    try {
        o = slurm::take_submit_options(args_of(argc, argv), rest);
        if (o.help) {
            std::cout << slurm::kSubmitHelp;
            return 0;
        }
        if (has_option(rest, "--shard"))
            throw std::invalid_argument("--shard cannot be submitted (each array task runs its own)");
        // A script file is read by whoever can read the folder; the seed travels in the environment.
        if (has_option(rest, "--secret-seed"))
            throw std::invalid_argument(
                "--secret-seed would be written into the job script; export KREG_SECRET_SEED instead "
                "(sbatch passes the environment to the jobs)");
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\nTry 'runner submit --help'.\n";
        return 2;
    }
    const fs::path exe = runner_executable();
    // The rubric and the submissions are read here, so that a typo fails now and not in K jobs.
    GradingProbe probe;
    try {
        probe = probe_grading(rest, configs_dir(exe));
    } catch (const ConfigError& e) {
        std::cerr << "runner grade: rubric error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\n";
        return 2;
    }
    const int shards = *o.shards;
    if (probe.students == 0) {
        std::cerr << "runner grade: no submissions found\n";
        return 3;
    }
    if (size_t(shards) > probe.students) {
        std::cerr << "runner grade: --shards " << shards << ": there are " << probe.students
                  << " submission(s); use at most --shards " << probe.students << "\n";
        return 2;
    }
    const auto outs = option_values(rest, "--out");
    const std::string out = outs.empty() ? "grades" : outs.back();
    const int gpus = o.gpus_per_task.value_or(probe.backend == Backend::cpu ? 0 : 1);
    const fs::path dir = slurm::choose_slurm_dir(o, "grade");

    slurm::ShardedJob job = slurm::base_job(o, "grade", dir, gpus);
    slurm::add_grade_commands(job, exe.string(), rest, out);
    return slurm::submit_sharded_job(job, dir, o, "the grading run", std::cout, std::cerr);
}

}  // namespace kreg::app
