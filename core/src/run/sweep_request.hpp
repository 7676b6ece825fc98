// What a sweep is asked to do, as plain data: the command line's sweep options once parsed
// (core/app/cli.cpp parses them; a resumed sweep parses its recorded command line again).
#pragma once

#include "config/sweep_config.hpp"
#include "sweep/executor.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kreg {

// --shard I/K: run slice I (1-based) of K of the plan, the jobs whose plan index is I - 1 modulo K, so
// that K runs on K machines cover the plan once. Job ids stay those of the whole plan.
struct Shard {
    int index = 1, count = 1;
};

// --devices all | 0,1,...: run the sweep's CUDA jobs on these GPUs at once, one worker per GPU.
struct DevicesSpec {
    bool all = false;
    std::vector<int> ordinals;  // when not all: distinct, in the order given
};

// What a sweep is asked to do: everything of the command line a SweepRun reads (run/sweep_run.hpp).
struct SweepRequest {
    bool list = false;
    bool wide = false;  // --wide: --list's lines whole, however long
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
    bool force = false;                       // --force: overwrite existing reports
    std::optional<std::string> resume;        // --resume REPORT: continue the sweep of that report
    std::optional<Shard> shard;               // --shard I/K or auto
    std::optional<DevicesSpec> devices;       // --devices all | 0,1,...
    std::vector<std::string> argv;
};

}  // namespace kreg
