// runner: the kreg command line. Everything it does is a call into kreg_core; this file only wires
// the command line to those calls and decides what goes to the console.
//
// Exit status: 0 every row ok or skipped; 1 some row wrong_result/failed/crashed/timeout;
// 2 bad command line or config; 3 nothing to run or reports could not be written.
#include "cli.hpp"
#include "grade_command.hpp"
#include "sweep_command.hpp"
#include "worker/session.hpp"
#include "sandbox/policy_json.hpp"

#include <csignal>
#include <iostream>

namespace kreg::app {
// `runner __worker [--sandbox POLICY_JSON]`: the worker process (see worker/session.hpp).
int worker_main(int argc, char** argv) {
    std::optional<SandboxPolicy> sandbox;
    if (argc == 4 && std::string(argv[2]) == "--sandbox") {
        try {
            sandbox = nlohmann::json::parse(argv[3]).get<SandboxPolicy>();
        } catch (const std::exception& e) {
            std::cerr << "kreg worker: bad --sandbox policy: " << e.what() << "\n";
            return 2;
        }
    } else if (argc != 2) {
        std::cerr << "kreg worker: unexpected arguments\n";
        return 2;
    }
    return run_worker(3, 4, sandbox);
}
}  // namespace kreg::app

int main(int argc, char** argv) {
    // Hidden subcommand: the runner re-executes itself as a worker process (see worker/session.hpp).
    if (argc >= 2 && std::string(argv[1]) == "__worker") return kreg::app::worker_main(argc, argv);

    std::signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe is an EPIPE, not our death
    if (argc >= 2 && std::string(argv[1]) == "grade") return kreg::app::run_grade_command(argc - 1, argv + 1);
    kreg::app::CommandLine cl;
    try {
        cl = kreg::app::parse_command_line(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "runner: " << e.what() << "\nTry 'runner --help'.\n";
        return 2;
    }
    if (cl.help) {
        std::cout << cl.help_text;
        return 0;
    }
    if (cl.version) {
        std::cout << "kreg " << KREG_VERSION << " (plugin ABI " << KREG_ABI_MAJOR << "." << KREG_ABI_MINOR << ")\n";
        return 0;
    }
    return kreg::app::run_command(cl);
}
