// The runner's command line, parsed into plain data. Parsing never runs anything.
#pragma once

#include "run/sweep_request.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kreg::app {

// "I/K", or "auto": Slurm's array task (SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN, of
// SLURM_ARRAY_TASK_COUNT) read from env. Throws std::invalid_argument naming --shard.
Shard parse_shard(const std::string& text, const std::function<const char*(const char*)>& env);

// "all" or a comma-separated list of distinct ordinals >= 0. Throws std::invalid_argument naming --devices.
DevicesSpec parse_devices(const std::string& text);

// The sweep's options (run/sweep_request.hpp), and what only the command line has: help and version.
struct CommandLine : SweepRequest {
    bool help = false;
    bool version = false;
    std::string help_text;
};

// Throws std::invalid_argument with a message naming the option on bad input.
CommandLine parse_command_line(int argc, char** argv);

}  // namespace kreg::app
