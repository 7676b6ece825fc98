// runner --profile where there is no Nsight Compute run here (Windows: no CUDA in this build, and the profile
// driver starts ncu with posix_spawn): refused with what to do instead.
#include "run/profile_run.hpp"

#include "run/run_error.hpp"

namespace kreg {

ProfileRun::ProfileRun(ProfileRequest request, std::filesystem::path runner_exe, std::ostream& log, std::ostream& out)
    : request_(std::move(request)), runner_exe_(std::move(runner_exe)), log_(log), out_(out) {}

int ProfileRun::execute() {
    throw RunError(RunError::Kind::cannot_run,
                   "--profile runs Nsight Compute on a CUDA build: use the Linux runner "
                   "(or WSL2); this runner is built for Windows without CUDA");
}

}  // namespace kreg
