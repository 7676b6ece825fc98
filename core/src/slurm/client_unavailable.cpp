// Running sbatch and squeue where there is no Slurm client (Windows): a failed run that says so.
#include "slurm/client.hpp"

namespace kreg::slurm {

ProgramResult run_program(const std::vector<std::string>& argv) {
    ProgramResult result;
    result.exit_status = 127;
    result.err = (argv.empty() ? std::string("a program") : argv.front()) +
                 ": Slurm is driven from Linux; this runner is built for Windows";
    return result;
}

}  // namespace kreg::slurm
