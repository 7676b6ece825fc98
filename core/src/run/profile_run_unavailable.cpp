// runner --profile where there is no Nsight Compute run here (Windows: no CUDA in this build, and the profile
// driver starts ncu with posix_spawn): refused with what to do instead.
#include "run/profile_run.hpp"

#include "run/run_error.hpp"

namespace kreg {

ProfileRun::ProfileRun(ProfileRequest request, std::filesystem::path runner_exe, std::ostream& log, std::ostream& out)
    : request_(std::move(request)), runner_exe_(std::move(runner_exe)), log_(log), out_(out) {}

// --shape's help, for `runner --profile --help` (core/app/profile_command.cpp), which this build has but cannot run.
std::string profile_shape_help() {
    return "a shape to profile at (only where --profile runs: a Linux runner built with CUDA, or WSL2)";
}

int ProfileRun::execute() {
    throw RunError(RunError::Kind::cannot_run,
                   "--profile runs Nsight Compute on a CUDA build: use the Linux runner "
                   "(or WSL2); this runner is built for Windows without CUDA");
}

}  // namespace kreg
