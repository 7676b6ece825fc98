// Running a Slurm client program (sbatch, scontrol, squeue) and keeping what it printed.
#pragma once

#include <string>
#include <vector>

namespace kreg::slurm {

struct ProgramResult {
    int exit_status = -1;  // the exit code, or 128 + the signal that ended it
    std::string out, err;
};

// Runs argv[0] (searched on PATH) with stdin from /dev/null, collecting stdout and stderr. Throws
// std::runtime_error naming the program when it cannot be started — "sbatch: not found on PATH (...)"
// when it is not installed.
ProgramResult run_program(const std::vector<std::string>& argv);

}  // namespace kreg::slurm
