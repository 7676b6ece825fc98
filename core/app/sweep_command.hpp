#pragma once

#include "cli.hpp"

namespace kreg::app {
// --list, --dry-run or a sweep (from --config, quick-run options, or the built-in default).
int run_command(const CommandLine& cl);
}  // namespace kreg::app
