// The runner's command line, parsed into plain data. Parsing never runs anything.
#pragma once

#include "config/sweep_config.hpp"
#include "sweep/executor.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kreg::app {

struct CommandLine {
    bool help = false;
    bool version = false;
    bool list = false;
    bool dry_run = false;
    bool verbose = false;
    bool calibrate = true;
    bool profile = false;                   // --profile: each kernel once, in an NVTX range
    bool strict = false;                    // --strict: grading's measurement mode for every row
    std::optional<double> call_timeout_s;   // --call-timeout: per single kernel call
    std::optional<double> stress_s;         // --stress: one kernel back to back for this long
    std::string format = "table";           // --list output: table or json
    std::optional<std::string> config;      // --config
    CliOverrides overrides;                 // quick-run options, also applied on top of --config
    std::vector<std::string> plugin_dirs;   // --plugin-dir
    std::vector<std::string> plugin_files;  // --plugin
    bool default_plugins = true;            // the runner's own plugin folder and KREG_PLUGIN_PATH
    Isolation isolation = Isolation::process;
    double load_timeout_s = 60.0;
    std::string output_dir = "kreg-reports";  // where reports go when no path is given
    bool force = false;                     // --force: overwrite existing reports
    std::optional<std::string> resume;      // --resume REPORT: continue the sweep of that report
    std::string help_text;
    std::vector<std::string> argv;
};

// Throws std::invalid_argument with a message naming the option on bad input.
CommandLine parse_command_line(int argc, char** argv);

}  // namespace kreg::app
