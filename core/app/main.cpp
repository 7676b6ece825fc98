// runner: the kreg command line. Everything it does is a call into kreg_core; this file only wires
// the command line to those calls and decides what goes to the console.
//
// Exit status: 0 every row ok or skipped; 1 some row wrong_result/failed/crashed/timeout;
// 2 bad command line or config; 3 nothing to run, nothing measured (every row skipped) or reports could
// not be written. `runner compare`, `runner grade` and `runner merge` have their own (see their --help).
#include "cli.hpp"
#include "compare_command.hpp"
#include "grade_command.hpp"
#include "profile_command.hpp"
#include "submit_command.hpp"
#include "tune_command.hpp"
#include "merge_command.hpp"
#include "sweep_command.hpp"
#include "cuda/profile_driver.hpp"
#include "platform/host.hpp"
#include "sandbox/sandboxed_exec.hpp"
#include "worker/worker_command.hpp"

#include <kreg/abi.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <vector>

int main(int argc, char** argv) {
    // Hidden subcommand: the runner re-executes itself as a worker process (see worker/session.hpp).
    if (argc >= 2 && std::string(argv[1]) == "__worker") return kreg::worker_main(argc, argv);
    if (argc >= 2 && std::string(argv[1]) == "__sandboxed_exec") return kreg::sandboxed_exec_main(argc, argv);

    kreg::platform::ignore_broken_pipes();  // a dead worker's pipe is an EPIPE, not our death
    if (argc >= 2 && std::string(argv[1]) == "grade" && kreg::app::grade_wants_slurm(argc - 1, argv + 1))
        return kreg::app::run_grade_slurm_command(argc - 1, argv + 1);  // only writes scripts and calls sbatch
    if (argc >= 2 && std::string(argv[1]) == "grade") {
        // The grader holds the secret seed and the gradebook: no core file, no ptrace attach and no
        // /proc/<pid>/mem for anything but root in our own user namespace.
        kreg::platform::forbid_inspection();
        return kreg::app::run_grade_command(argc - 1, argv + 1);
    }
    if (argc >= 2 && std::string(argv[1]) == "submit") return kreg::app::run_submit_command(argc - 1, argv + 1);
    if (argc >= 2 && std::string(argv[1]) == "compare") return kreg::app::run_compare_command(argc - 1, argv + 1);
    if (argc >= 2 && std::string(argv[1]) == "merge") return kreg::app::run_merge_command(argc - 1, argv + 1);
    if (argc >= 2 && std::string(argv[1]) == "tune") return kreg::app::run_tune_command(argc - 1, argv + 1);
    // `runner --profile [options]`: the bank-conflict profile under ncu (profile_command.cpp), its own options.
    if (argc >= 2 && std::string(argv[1]) == "__profile_driver") return kreg::profile_driver_main(argc, argv);
    // `runner --profile ... --isolation none` (or any run under ncu/nsys, which set CUDA_INJECTION64_PATH) is
    // the sweep mode that wraps each kernel's call in an NVTX range, for a profiler the user runs.
    {
        int profile_at = 0;
        bool isolation_none = false;
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "--profile") profile_at = i;
            if (a == "--isolation=none" || (a == "--isolation" && i + 1 < argc && std::string(argv[i + 1]) == "none"))
                isolation_none = true;
        }
        if (profile_at > 0 && !isolation_none && std::getenv("CUDA_INJECTION64_PATH") == nullptr) {
            std::vector<char*> rest(argv, argv + argc);
            rest.erase(rest.begin() + profile_at);
            return kreg::app::run_profile_command(static_cast<int>(rest.size()), rest.data());
        }
    }
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
