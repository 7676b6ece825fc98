// The evidence a row carries besides its status and timing: every key of a record's "extra" object,
// declared once here with its type and meaning. A worker writes most of it and the parent reads it back
// across the worker protocol, so reading is strict: an unknown key, a missing required field or a value
// of the wrong type is an error naming the JSON path ("/extra/launch/grid: ..."). The keys are those the
// reports have always had, so the tools and committed reports still read; configs/schema/report.schema.json
// describes the same fields for readers outside C++.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kreg {

// A malformed "extra" object; what() names the JSON path.
struct ExtrasError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// extra.launch: how the kernel says it launches for the job's shape (kreg_kernel_info::describe_launch).
struct LaunchInfo {
    std::array<uint64_t, 3> grid{};   // blocks in x, y, z
    std::array<uint64_t, 3> block{};  // threads per block in x, y, z
    uint64_t dynamic_smem = 0;        // dynamic shared memory per block, bytes
};

// extra.attributes: cudaFuncGetAttributes of the launched device function.
struct KernelAttributes {
    int registers = 0;                 // per thread
    uint64_t static_shared_bytes = 0;  // per block
    int max_dynamic_shared_bytes = 0;
    uint64_t local_bytes = 0;  // per thread: spills and local arrays
    int max_threads_per_block = 0;
    int ptx_version = 0;     // major*10 + minor
    int binary_version = 0;  // SASS: major*10 + minor
};

// The timing cross-check of a strict CUDA run (measure/anticheat.hpp's TimingCrossCheck): event time
// against host wall time of each timed call. Written flat into extra.anticheat.
struct TimingCrossCheckFacts {
    bool timing_mismatch = false;  // some call's event time exceeded its wall time by more than slack_ms
    int mismatched_calls = 0;
    double event_ms_median = 0, wall_ms_median = 0, slack_ms = 0;
};

// extra.anticheat: what a strict run (grading) did and saw (measure/anticheat.hpp's StrictEvidence).
struct AnticheatEvidence {
    bool strict = true;
    int calls = 0;                    // calls made (checked + warm-up + timed)
    int calls_verified = 0;           // outputs checked against the reference in the worker
    int calls_exported = 0;           // outputs handed to the checker outside the worker
    bool every_call_checked = false;  // calls_verified + calls_exported == calls > 0
    bool fresh_inputs = true, fresh_buffers = true, input_checksums = true;
    int buffer_sets = 0;                          // input/output buffer sets rotated through
    std::optional<std::string> failed_at;         // the call a violation was found at ("timed call 4")
    std::optional<bool> device_wide_sync;         // CUDA: the timer's stop waited for the whole device
    std::optional<bool> threads_left_running;     // CPU: some call returned with more threads than it began
    std::optional<int> max_threads_left;          // CPU: with threads_left_running
    std::optional<uint64_t> guard_band_elements;  // guard words before C (and after, on CUDA)
    std::optional<uint64_t> guard_page_bytes;     // CPU: inaccessible bytes on each side of C
    std::optional<TimingCrossCheckFacts> timing;  // CUDA timed calls
    // CUDA timed by CUPTI (extra.kernel_time has the rest): calls with GPU work off the harness stream,
    // and calls whose such work outlived the call and the harness stream. Counted in the samples.
    std::optional<int> off_stream_calls, outliving_calls;
};

// extra.kernel_time: what CUPTI saw the GPU run in the timed calls (measure/kernel_window.hpp), on every
// stream, between each call's start and the moment the device was idle again. Medians over the calls that
// had records; a row timed by CUPTI has span_ms's per-call values as its samples. event_ms_median: plain
// CUDA events around the same calls on the harness stream, launch gap included, for comparison.
struct KernelTimeEvidence {
    int calls = 0;                    // timed calls
    double span_ms_median = 0;        // first start to last end of each call's activities
    double kernel_sum_ms_median = 0;  // each call's kernel durations added up
    std::optional<double> event_ms_median;
    double kernels_median = 0, memcpys_median = 0, memsets_median = 0;  // activities per call
    int streams_max = 0;                                                // the most streams one call's work used
    int off_stream_calls = 0;         // calls with work not on the harness stream (counted in span_ms)
    double off_stream_ms_median = 0;  // of those calls: the off-stream work's durations added up
    int outliving_calls = 0;          // calls whose off-stream work ran past the call and the harness stream
    double outlived_ms_max = 0;       // the longest such overhang
    int calls_without_records = 0;    // calls CUPTI saw nothing of: their sample is the event time
    // Calls whose records CUPTI delivered only after their window had closed, found when the next window
    // opened: their samples may be short. Absent in reports before 2026-12-03 (read as 0).
    int late_record_calls = 0;
};

// extra.call_checks: the checks of a plain (not strict) run's calls (pipeline/pipeline.cpp).
struct CallChecks {
    std::vector<std::string> verified;  // calls verified in full ("first call", "last timed call")
    int scanned_calls = 0;              // warm-up and timed calls scanned for poison/NaN and sampled
    int sampled_elements_per_call = 0;
    double sampled_max_rel_err = 0;  // worst normalised error of the sampled elements
};

// extra.sampling.clock_settle: the calls made before the first timed sample so the clocks settle.
struct ClockSettleFacts {
    int calls = 0;
    double seconds = 0;
    bool settled = false;  // false: the time cap was reached first
};

// extra.sampling: why sampling stopped (measure/sampler.hpp).
struct SamplingEvidence {
    std::string stop;                           // "repeats", "noise_target", "time_budget", ...
    double confidence = 0.95;                   // of the median's interval
    std::optional<double> relative_half_width;  // of the median's interval, when it exists
    std::optional<double> noise_target;
    std::optional<double> time_cap_s;
    std::optional<double> min_span_s;  // with a noise target: the least time the samples had to add up to
    std::optional<double> span_s;      // the wall time the timed calls ran over
    std::optional<ClockSettleFacts> clock_settle;
};

// extra.roofline: where an ok row sits on its device's roofline (measure/roofline.hpp for CUDA,
// measure/host_ceiling.hpp for CPU, ceiling "host_fp32"). A value whose inputs were missing is unset
// (written as absent; older reports wrote null, which reads as unset). unavailable: the check was not
// made, and why.
struct RooflineEvidence {
    std::optional<std::string> ceiling;  // "host_fp32" for the CPU form; unset for CUDA
    std::optional<std::string> unavailable;
    std::optional<double> flops, min_dram_bytes, arithmetic_intensity, modelled_ai, achieved_tflops;
    std::optional<double> measured_peak_tflops, fraction_of_measured_peak, computed_peak_tflops,
        fraction_of_computed_peak;
    std::optional<double> peak_tflops, bandwidth_gbps, ridge_ai;
    std::optional<std::string> bound;  // "memory" or "compute"
    std::optional<double> floor_ms, safety_factor;
    std::optional<bool> faster_than_floor;  // faster than the hardware allows: suspicious
    // Data-movement operations (transposes): bytes moved / median, and that as a fraction of the
    // measured device-to-device copy bandwidth (ceilings.dram_copy_gbps). Unset for GEMM.
    std::optional<double> achieved_gbps, fraction_of_copy_bandwidth;
};

// extra.trusted_check: the grader's own check of every call's output of a checked-outside job.
struct TrustedCheckEvidence {
    int calls_checked = 0;
    bool passed = false;
    std::vector<uint64_t> call_seeds;  // per call: fill_call_inputs(job, seed) reproduces its inputs
};

// extra.timing_claims: the worker's claimed timings against the grader's clock (grade/timing_claims.hpp).
struct TimingClaims {
    double claimed_median_ms = 0;
    double grader_bound_median_ms = 0;
    bool believed = true;
    double harness_allowance_ms = 0;                   // infinite: no bound (absent from the JSON; no_bound says why)
    std::optional<double> harness_allowance_error_ms;  // how far below a call's time its bound may lie
    std::optional<std::string> calibration;            // what measured the allowance, and when
    std::optional<std::string> no_bound;               // why no bound applies, and what that means for the grade
    // The harness's CPU time inside a window (subtracted from each call's CPU time when the worker ran on one
    // CPU), which of the two bounds held the row ("cpu_time" or "window"), and why CPU time bounded nothing.
    std::optional<double> harness_cpu_allowance_ms;
    std::optional<double> claimed_cpu_median_ms;  // the worker's word for its calls' CPU time (a claim, shown only)
    std::optional<std::string> bound_from;
    std::optional<std::string> no_cpu_bound;
};

// A record's "extra" object. Unset members are absent from the JSON.
struct RecordExtras {
    std::optional<int> device;               // CUDA device ordinal
    std::optional<std::string> device_uuid;  // runner --devices: the GPU this row ran on (added by the parent)
    std::optional<LaunchInfo> launch;
    std::optional<std::string> launch_error;  // describe_launch failed (other than unsupported)
    std::optional<KernelAttributes> attributes;
    std::optional<std::string> attributes_error;  // cudaFuncGetAttributes failed
    std::optional<double> model_bytes;            // the kernel's own global-memory traffic model, bytes
    std::optional<bool> verify_sampled;           // a full verification compared sampled elements only
    std::optional<bool> warm_cache;               // CUDA: no L2 flush between timed calls
    std::optional<uint64_t> l2_flush_bytes;       // CUDA: bytes written to flush L2 before each call
    // CUDA: "cupti", "held_stream", "held_stream_until_timeout" or (strict runs timed by events) "cuda_event"
    std::optional<std::string> timing_method;
    std::optional<double> launch_overhead_ms;  // CUDA: median host cost of a launch, not in samples
    std::optional<int> hold_timeouts;          // CUDA: timed calls whose stream hold timed out
    std::optional<double> hold_timeout_s;
    std::optional<KernelTimeEvidence> kernel_time;  // CUDA timed by CUPTI
    std::optional<std::string> timer_fallback;      // CUDA timed by events where CUPTI was wanted: why
    std::optional<std::string> c_fence;           // CUDA: "unmapped_pages" (C in a mapping of its own) or "guard_band"
    std::optional<std::string> c_fence_fallback;  // CUDA, with c_fence guard_band: why the VMM mapping could not be had
    std::optional<std::string> variant;  // the kernel's describe_gemm_variant (ABI 1.2): what a dispatch kernel chose
    std::optional<AnticheatEvidence> anticheat;
    std::optional<CallChecks> call_checks;
    std::optional<SamplingEvidence> sampling;
    std::optional<RooflineEvidence> roofline;           // added by the parent
    std::optional<TrustedCheckEvidence> trusted_check;  // added by the grader
    std::optional<TimingClaims> timing_claims;          // added by the grader

    bool empty() const;
};

void to_json(nlohmann::json& j, const LaunchInfo& v);
void from_json(const nlohmann::json& j, LaunchInfo& v);
void to_json(nlohmann::json& j, const KernelAttributes& v);
void from_json(const nlohmann::json& j, KernelAttributes& v);
void to_json(nlohmann::json& j, const AnticheatEvidence& v);
void from_json(const nlohmann::json& j, AnticheatEvidence& v);
void to_json(nlohmann::json& j, const KernelTimeEvidence& v);
void from_json(const nlohmann::json& j, KernelTimeEvidence& v);
void to_json(nlohmann::json& j, const CallChecks& v);
void from_json(const nlohmann::json& j, CallChecks& v);
void to_json(nlohmann::json& j, const ClockSettleFacts& v);
void from_json(const nlohmann::json& j, ClockSettleFacts& v);
void to_json(nlohmann::json& j, const SamplingEvidence& v);
void from_json(const nlohmann::json& j, SamplingEvidence& v);
void to_json(nlohmann::json& j, const RooflineEvidence& v);
void from_json(const nlohmann::json& j, RooflineEvidence& v);
void to_json(nlohmann::json& j, const TrustedCheckEvidence& v);
void from_json(const nlohmann::json& j, TrustedCheckEvidence& v);
void to_json(nlohmann::json& j, const TimingClaims& v);
void from_json(const nlohmann::json& j, TimingClaims& v);
void to_json(nlohmann::json& j, const RecordExtras& v);
// Strict: throws ExtrasError naming the path under "/extra" for an unknown key, a missing required
// field or a value of the wrong type.
void from_json(const nlohmann::json& j, RecordExtras& v);

}  // namespace kreg
