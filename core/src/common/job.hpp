// A Job is one (kernel, shape, dtype) to run; a Record is what came of it. Both travel between the
// parent and a worker as JSON, so everything a row needs to be understood later lives in the Record.
#pragma once

#include "common/record_extras.hpp"
#include "common/types.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// CUDA: what times the calls (docs/MEASUREMENT.md). automatic: CUPTI's kernel records where CUPTI works,
// else CUDA events, and the row says why; cupti: CUPTI, or the row fails with the reason; events: CUDA events.
enum class TimerChoice { automatic, cupti, events };
const char* to_string(TimerChoice choice);                               // "auto", "cupti", "events"
std::optional<TimerChoice> parse_timer_choice(const std::string& text);  // the same words

// How one job is measured and checked. Defaults are the runner's defaults.
struct RunSettings {
    int warmup = 2;  // untimed calls before the first sample
    // Timed calls. Without a noise target: this many (fewer if the time budget is spent first, never
    // fewer than min(3, repeats)). With one: the minimum count of the stopping rule (measure/sampler.hpp).
    int repeats = 10;
    std::optional<double> time_budget_s;  // cap on the time spent in timed calls (the sum of their samples)
    // Stopping rule: sample until the 95 % interval of the median is within +-noise_target of it
    // (relative), or the time budget (kDefaultNoiseTimeCapS when unset) is spent. Unset or 0: fixed count.
    // Sweep configs default it to 0.005; strict runs ignore it (grading calls are counted, not adaptive).
    std::optional<double> noise_target;
    bool verify = true;
    std::optional<double> tolerance;             // normalised error bound; default per dtype
    double timeout_s = 300.0;                    // wall-clock limit for the job in its worker
    std::optional<double> call_timeout_s;        // limit on each single call, launch to finish (the worker ends)
    bool warm_cache = false;                     // CUDA: skip the L2 flush between timed launches
    int device = 0;                              // CUDA device ordinal
    bool profile = false;                        // CUDA: wrap each timed launch in an NVTX range named after the kernel
    TimerChoice timer = TimerChoice::automatic;  // CUDA
    // Grading: every call (checked, warm-up, timed) gets fresh inputs in fresh buffers and is verified,
    // inputs are checksummed around each call, and timing also waits for the whole device and is
    // cross-checked against the host clock. Slower; makes caching, input tampering and hidden work visible.
    bool strict = false;
    // Grading: the check of C is made outside the worker. Implies strict. Every call's inputs are drawn
    // from a seed the checker issues right before that call, and every call's C is handed to the
    // checker right after it (pipeline/job_runner.hpp's CallChannel); the worker computes no reference.
    bool checked_outside = false;
};

struct Job {
    uint64_t id = 0;  // position in the plan; rows are reported in this order
    std::string kernel;
    std::string plugin_path;  // the .so that provides kernel
    Operation operation = Operation::gemm;
    Shape shape;
    DType dtype = DType::fp32;
    uint64_t seed = 0;  // inputs are drawn from (seed, id); the same job reproduces
    RunSettings settings;
};

struct TimingStats {
    int count = 0;
    double median_ms = 0, min_ms = 0, mean_ms = 0, stddev_ms = 0;
    double cv = 0;  // stddev / mean
    // The median's 95 % confidence interval from order statistics (measure/stats.hpp); unset when there
    // are too few samples (fewer than 6) for one.
    std::optional<double> median_ci_low_ms, median_ci_high_ms;
};

struct Record {
    uint64_t job_id = 0;
    std::string kernel;
    std::string plugin;  // plugin name from its descriptor ("" if it never loaded)
    std::string plugin_path;
    Backend backend = Backend::cpu;
    Operation operation = Operation::gemm;  // in the JSON only when not gemm, so GEMM rows are unchanged
    DType dtype = DType::fp32;
    Shape shape;
    uint64_t seed = 0;

    RowStatus status = RowStatus::failed;
    std::string reason;  // why, for every status but ok

    std::optional<double> max_rel_err;  // normalised error of the checked call
    std::optional<double> tolerance;

    std::string timer;               // "host", "cuda_event" or "cupti"
    std::vector<double> samples_ms;  // raw timed samples
    std::optional<TimingStats> stats;
    // The rate of the row's operation (its rate column in common/operations.def; rate_of below), from the median:
    std::optional<double> gflops;  // compute-bound operations (GEMM): FLOPs / median, 1e9 per second
    std::optional<double> gbps;    // copy-bound ones: bytes moved / median, 1e9 B/s (in the JSON only when set,
                                   // so GEMM rows are unchanged)

    std::optional<int> exit_code;         // worker exit code, when it exited
    std::optional<std::string> signal;    // signal name, when it was killed by one
    EndCause end_cause = EndCause::none;  // why it ended, typed where seen (common/types.hpp); the outcome's source

    RecordExtras extra;  // evidence: launch, attributes, roofline, strict-run facts (common/record_extras.hpp)
};

// The record's rate field, the one its operation's row names (gflops or gbps).
std::optional<double>& rate_of(Record& r);
const std::optional<double>& rate_of(const Record& r);

void to_json(nlohmann::json& j, const RunSettings& s);
void from_json(const nlohmann::json& j, RunSettings& s);
void to_json(nlohmann::json& j, const Shape& s);
// The shape in its operation's keys (common/operations.def: {"m", "n", "k"}, {"m", "n", "block"}, ...), as the
// shape specs of configs and rubrics name them, so that a config's to_json parses back.
nlohmann::json shape_spec_json(Operation op, const Shape& s);
void from_json(const nlohmann::json& j, Shape& s);
void to_json(nlohmann::json& j, const Job& job);
void from_json(const nlohmann::json& j, Job& job);
void to_json(nlohmann::json& j, const TimingStats& s);
void from_json(const nlohmann::json& j, TimingStats& s);
void to_json(nlohmann::json& j, const Record& r);
void from_json(const nlohmann::json& j, Record& r);

// A row for a job that never produced one itself (crash, timeout, skip decided by the parent).
Record record_for(const Job& job, RowStatus status, std::string reason);

}  // namespace kreg
