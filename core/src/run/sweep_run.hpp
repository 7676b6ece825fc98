// A sweep as a library object: `runner [options]` is one SweepRun, whose phases return typed values
// (resume → plugins → configure → plan → devices → reports → rows → finish). The command line only builds
// the request and maps a RunError onto an exit status; everything a sweep decides happens here.
#pragma once

#include "config/sweep_config.hpp"
#include "plugin/registry.hpp"
#include "report/report_writer.hpp"
#include "run/device_lanes.hpp"
#include "run/report_files.hpp"
#include "run/run_error.hpp"
#include "run/sweep_request.hpp"
#include "sweep/executor.hpp"
#include "sweep/plan.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// What a SweepRun needs of the program around it.
struct SweepEnvironment {
    std::filesystem::path runner_exe;   // re-executed as the workers; its folder holds the default plugins
    std::filesystem::path configs_dir;  // where --config NAME is looked for
    // Parses a recorded command line again (a resumed sweep's); throws std::exception when it no longer parses.
    std::function<SweepRequest(const std::vector<std::string>& argv)> parse_recorded;
};

// The sweep's parts (one per config; the built-in default may have two) and each one's kernels.
struct SweepParts {
    std::vector<SweepConfig> configs;
    std::vector<std::vector<std::string>> kernels;
};

// The jobs this run owns (a shard's slice of the whole plan), and what the whole plan was.
struct SweepPlan {
    std::vector<PlannedJob> jobs;
    size_t whole_plan_size = 0;
    std::string whole_plan_sha256;                // set for a shard only: what runner merge checks the shards against
    std::optional<std::string> nothing_measured;  // why no row can be measured here, when none can
    bool runs_cuda = false;                       // some CUDA job is not skipped
};

// The GPUs the rows run on: the one GPU's facts, or one lane per GPU with --devices.
struct SweepDevices {
    std::optional<GpuInfo> gpu;  // meta.gpu; with lanes, the first lane's
    std::vector<DeviceLane> lanes;
};

// The reports the rows go to, open, with the rows a resumed sweep already has.
struct SweepReports {
    ReportTargets targets;
    Baseline baseline;  // the report's (and the console table's) baseline
    std::optional<ReportWriter> writer;
    ProgressReporter* progress = nullptr;  // the writer's progress lines
};

// How the rows went.
struct SweepRows {
    bool all_good = true;  // every row ok or skipped
};

class SweepRun {
public:
    // log: progress and notes (the runner's stderr); out: the plan, the table, the reports' names (stdout).
    SweepRun(SweepRequest request, SweepEnvironment environment, std::ostream& log, std::ostream& out);
    ~SweepRun();

    // Every phase in order. Returns the exit status of a sweep that got to its end or was stopped:
    // 0 every row ok or skipped, 1 some row not, 3 nothing measured, 128 + signal when stopped; --list and
    // --dry-run return 0. Throws RunError when it cannot go on.
    int execute();

    // The phases, each usable alone (the tests call them one by one).
    void resume();  // --resume: the recorded request replaces the given one; throws when it cannot
    Registry load_plugins();
    void list(const Registry& registry) const;  // --list
    SweepParts configure(const Registry& registry);
    SweepPlan plan(const SweepParts& parts, const Registry& registry) const;
    SweepDevices devices(const SweepPlan& plan);
    SweepReports open_reports(const SweepParts& parts, const SweepPlan& plan, const SweepDevices& devices,
                              const Registry& registry);
    SweepRows run_rows(const SweepPlan& plan, const SweepDevices& devices, SweepReports& reports);
    int finish(const SweepPlan& plan, SweepReports& reports, const SweepRows& rows);

    const SweepRequest& request() const { return request_; }

private:
    Executor& executor();
    std::optional<GpuInfo> query_gpu(bool calibrate);
    void check_resumable(const SweepPlan& plan, const Registry& registry) const;
    ReportMeta report_meta(const SweepParts& parts, const SweepPlan& plan, const SweepDevices& devices,
                           const Registry& registry) const;
    std::vector<Job> run_here(const SweepPlan& plan, const SweepDevices& devices, SweepReports& reports,
                              SweepRows& rows);
    void run_lanes(const std::vector<Job>& lane_jobs, const SweepDevices& devices, SweepReports& reports,
                   SweepRows& rows);
    void take_row(Record& r, const std::optional<GpuInfo>& row_gpu, SweepReports& reports, SweepRows& rows);

    SweepRequest given_;    // as asked: a resumed sweep keeps its own argv and --verbose
    SweepRequest request_;  // as run: the recorded one of a resumed sweep
    SweepEnvironment environment_;
    std::ostream& log_;
    std::ostream& out_;
    std::optional<ResumeState> resume_;
    ExecutorOptions options_;
    std::unique_ptr<Executor> executor_;
    int device_ = 0;
    std::string runner_word_;
    std::chrono::steady_clock::time_point sweep_start_;
};

}  // namespace kreg
