// `runner --profile`: shared-memory bank conflicts per kernel variant, measured by Nsight Compute (ncu).
#pragma once

namespace kreg::app {
// argv without "--profile": the profile command's own options (see `runner --profile --help`).
int run_profile_command(int argc, char** argv);
}  // namespace kreg::app
