#include "run/shard_probe.hpp"

#include "common/argv_words.hpp"
#include "config/sweep_config.hpp"
#include "grade/rubric.hpp"
#include "grade/submission.hpp"
#include "slurm/client.hpp"
#include "slurm/sbatch_script.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <sstream>

namespace kreg {
namespace fs = std::filesystem;

std::set<std::string> planned_kernels(const std::string& dry_run_output, size_t& jobs) {
    std::set<std::string> kernels;
    std::istringstream lines(dry_run_output);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string id, kernel;
        if (words >> id >> kernel && kernel != "job(s)") {
            kernels.insert(kernel);
            ++jobs;
        }
    }
    return kernels;
}

bool lists_cuda_kernel(const std::string& list_json, const std::set<std::string>& kernels) {
    // The parsed list is held by name: a range-for over parse(...).at(...) would walk a destroyed temporary
    // (C++17 extends the life of at()'s reference only), which the runner submit of before did.
    const nlohmann::json list = nlohmann::json::parse(list_json);
    for (const auto& k : list.at("kernels"))
        if (kernels.count(k.at("name").get<std::string>()) && k.at("backend").get<std::string>() == "cuda") return true;
    return false;
}

std::optional<SweepProbe> probe_sweep(const std::string& exe, const std::vector<std::string>& args, int& exit_status,
                                      std::ostream& err) {
    std::vector<std::string> plan_command{exe};
    plan_command.insert(plan_command.end(), args.begin(), args.end());
    plan_command.push_back("--dry-run");
    const slurm::ProgramResult plan = slurm::run_program(plan_command);
    if (plan.exit_status != 0) {
        err << plan.err << "runner submit: the sweep does not plan (" << slurm::command_line(plan_command)
            << " exited with " << plan.exit_status << "); nothing was submitted\n";
        exit_status = plan.exit_status == 2 ? 2 : 3;
        return std::nullopt;
    }
    SweepProbe check;
    const std::set<std::string> kernels = planned_kernels(plan.out, check.jobs);
    // Every kernel the plugins give: --list narrows to --kernels, and the plan may hold more (a baseline).
    std::vector<std::string> list_command{exe};
    for (const auto& word : without_option(without_option(args, "--kernels", true), "-k", true))
        list_command.push_back(word);
    list_command.insert(list_command.end(), {"--list", "--format", "json"});
    const slurm::ProgramResult list = slurm::run_program(list_command);
    try {
        check.has_cuda = lists_cuda_kernel(list.out, kernels);
    } catch (const std::exception& e) {
        err << "runner submit: cannot read the kernel list (" << slurm::command_line(list_command) << "): " << e.what()
            << "; assuming CUDA kernels\n";
        check.has_cuda = true;
    }
    return check;
}

GradingProbe probe_grading(const std::vector<std::string>& args, const fs::path& configs_dir) {
    GradingProbe probe;
    std::vector<Rubric> rubrics;
    for (const auto& path : option_values(args, "--rubric"))
        rubrics.push_back(load_rubric(resolve_config_path(path, configs_dir, "rubric")));
    if (rubrics.empty()) throw std::invalid_argument("needs --rubric and at least one --submission or --submissions");
    probe.backend = merge_rubrics(rubrics).backend;
    std::vector<fs::path> files;
    for (const auto& s : option_values(args, "--submission")) files.emplace_back(s);
    std::optional<fs::path> folder;
    if (const auto d = option_values(args, "--submissions"); !d.empty()) folder = d.back();
    std::vector<std::string> ignored;
    probe.students = find_submissions(files, folder, ignored).size();
    return probe;
}

}  // namespace kreg
