#include "sweep_command.hpp"

#include "exit_status.hpp"
#include "paths.hpp"
#include "run/sweep_run.hpp"

#include <iostream>

namespace kreg::app {

int run_command(const CommandLine& given) {
    SweepEnvironment environment;
    environment.runner_exe = runner_executable();
    environment.configs_dir = configs_dir(environment.runner_exe);
    environment.parse_recorded = [](const std::vector<std::string>& recorded) -> SweepRequest {
        std::vector<std::string> args = recorded;
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        return parse_command_line(int(args.size()), argv.data());
    };
    try {
        SweepRun run(given, std::move(environment), std::cerr, std::cout);
        return run.execute();
    } catch (const RunError& e) {
        std::cerr << "runner: " << e.what() << "\n";
        return exit_status(e.kind());
    }
}

}  // namespace kreg::app
