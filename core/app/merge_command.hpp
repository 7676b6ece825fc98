#pragma once

namespace kreg::app {
// `runner merge --expect K [--force] [--csv FILE] OUT REPORT...`: argv[0] is "merge".
int run_merge_command(int argc, char** argv);
}  // namespace kreg::app
