#include "common/record_extras.hpp"

#include <cmath>
#include <initializer_list>
#include <limits>

namespace kreg {
namespace {
using json = nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw ExtrasError(path + ": " + what); }

std::string got(const json& v) { return std::string("got ") + v.type_name(); }

// Scalars, read without nlohmann's conversions (which turn true into 1 and 2.7 into 2).
void read_value(const json& v, const std::string& path, bool& out) {
    if (!v.is_boolean()) fail(path, "must be true or false, " + got(v));
    out = v.get<bool>();
}
void read_value(const json& v, const std::string& path, int& out) {
    if (!v.is_number_integer()) fail(path, "must be an integer, " + got(v));
    const int64_t x = v.get<int64_t>();
    if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) fail(path, "out of range");
    out = int(x);
}
void read_value(const json& v, const std::string& path, uint64_t& out) {
    if (v.is_number_unsigned())
        out = v.get<uint64_t>();
    else if (v.is_number_integer() && v.get<int64_t>() >= 0)
        out = uint64_t(v.get<int64_t>());
    else
        fail(path, "must be an integer >= 0, " + got(v));
}
void read_value(const json& v, const std::string& path, double& out) {
    if (!v.is_number()) fail(path, "must be a number, " + got(v));
    out = v.get<double>();
}
void read_value(const json& v, const std::string& path, std::string& out) {
    if (!v.is_string()) fail(path, "must be a string, " + got(v));
    out = v.get<std::string>();
}
template <class T, size_t N>
void read_value(const json& v, const std::string& path, std::array<T, N>& out) {
    if (!v.is_array() || v.size() != N) fail(path, "must be an array of " + std::to_string(N) + ", " + got(v));
    for (size_t i = 0; i < N; ++i) read_value(v[i], path + "/" + std::to_string(i), out[i]);
}
template <class T>
void read_value(const json& v, const std::string& path, std::vector<T>& out) {
    if (!v.is_array()) fail(path, "must be an array, " + got(v));
    out.assign(v.size(), T{});
    for (size_t i = 0; i < v.size(); ++i) read_value(v[i], path + "/" + std::to_string(i), out[i]);
}

// The structs' readers, declared before the templates that call them.
void read_value(const json& j, const std::string& path, LaunchInfo& v);
void read_value(const json& j, const std::string& path, KernelAttributes& v);
void read_value(const json& j, const std::string& path, AnticheatEvidence& v);
void read_value(const json& j, const std::string& path, CallChecks& v);
void read_value(const json& j, const std::string& path, KernelTimeEvidence& v);
void read_value(const json& j, const std::string& path, ClockSettleFacts& v);
void read_value(const json& j, const std::string& path, SamplingEvidence& v);
void read_value(const json& j, const std::string& path, RooflineEvidence& v);
void read_value(const json& j, const std::string& path, TrustedCheckEvidence& v);
void read_value(const json& j, const std::string& path, TimingClaims& v);

// One JSON object read field by field: every key must be known; absent or null optional fields are unset.
class Fields {
public:
    Fields(const json& j, std::string path, std::initializer_list<const char*> known) : j_(j), path_(std::move(path)) {
        if (!j.is_object()) fail(path_.empty() ? "/" : path_, "must be an object, " + got(j));
        for (const auto& item : j.items()) {
            bool ok = false;
            for (const char* k : known) ok = ok || item.key() == k;
            if (!ok) fail(path_ + "/" + item.key(), "unknown field");
        }
    }
    bool has(const char* key) const { return j_.contains(key) && !j_[key].is_null(); }
    template <class T>
    void required(const char* key, T& out) const {
        const auto it = j_.find(key);
        if (it == j_.end()) fail(path_ + "/" + key, "missing");
        read_value(*it, path_ + "/" + key, out);
    }
    template <class T>
    void optional(const char* key, std::optional<T>& out) const {
        out.reset();
        const auto it = j_.find(key);
        if (it == j_.end() || it->is_null()) return;
        T v{};
        read_value(*it, path_ + "/" + key, v);
        out = std::move(v);
    }

private:
    const json& j_;
    std::string path_;
};

template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
    if (v) j[key] = *v;
}

void read_value(const json& j, const std::string& path, LaunchInfo& v) {
    const Fields f(j, path, {"grid", "block", "dynamic_smem"});
    f.required("grid", v.grid);
    f.required("block", v.block);
    f.required("dynamic_smem", v.dynamic_smem);
}

void read_value(const json& j, const std::string& path, KernelAttributes& v) {
    const Fields f(j, path,
                   {"registers", "static_shared_bytes", "max_dynamic_shared_bytes", "local_bytes",
                    "max_threads_per_block", "ptx_version", "binary_version"});
    f.required("registers", v.registers);
    f.required("static_shared_bytes", v.static_shared_bytes);
    f.required("max_dynamic_shared_bytes", v.max_dynamic_shared_bytes);
    f.required("local_bytes", v.local_bytes);
    f.required("max_threads_per_block", v.max_threads_per_block);
    f.required("ptx_version", v.ptx_version);
    f.required("binary_version", v.binary_version);
}

void read_value(const json& j, const std::string& path, AnticheatEvidence& v) {
    const Fields f(j, path,
                   {"strict",
                    "calls",
                    "calls_verified",
                    "calls_exported",
                    "every_call_checked",
                    "fresh_inputs",
                    "fresh_buffers",
                    "buffer_sets",
                    "input_checksums",
                    "failed_at",
                    "device_wide_sync",
                    "threads_left_running",
                    "max_threads_left",
                    "guard_band_elements",
                    "guard_page_bytes",
                    "timing_mismatch",
                    "mismatched_calls",
                    "event_ms_median",
                    "wall_ms_median",
                    "slack_ms",
                    "off_stream_calls",
                    "outliving_calls"});
    f.required("strict", v.strict);
    f.required("calls", v.calls);
    f.required("calls_verified", v.calls_verified);
    f.required("calls_exported", v.calls_exported);
    f.required("every_call_checked", v.every_call_checked);
    f.required("fresh_inputs", v.fresh_inputs);
    f.required("fresh_buffers", v.fresh_buffers);
    f.required("buffer_sets", v.buffer_sets);
    f.required("input_checksums", v.input_checksums);
    f.optional("failed_at", v.failed_at);
    f.optional("device_wide_sync", v.device_wide_sync);
    f.optional("threads_left_running", v.threads_left_running);
    f.optional("max_threads_left", v.max_threads_left);
    f.optional("guard_band_elements", v.guard_band_elements);
    f.optional("guard_page_bytes", v.guard_page_bytes);
    f.optional("off_stream_calls", v.off_stream_calls);
    f.optional("outliving_calls", v.outliving_calls);
    v.timing.reset();
    if (f.has("timing_mismatch")) {  // the cross-check's five facts come together
        TimingCrossCheckFacts t;
        f.required("timing_mismatch", t.timing_mismatch);
        f.required("mismatched_calls", t.mismatched_calls);
        f.required("event_ms_median", t.event_ms_median);
        f.required("wall_ms_median", t.wall_ms_median);
        f.required("slack_ms", t.slack_ms);
        v.timing = t;
    } else {
        for (const char* key : {"mismatched_calls", "event_ms_median", "wall_ms_median", "slack_ms"})
            if (f.has(key)) fail(path + "/" + key, "without timing_mismatch");
    }
}

void read_value(const json& j, const std::string& path, KernelTimeEvidence& v) {
    const Fields f(j, path,
                   {"calls", "span_ms_median", "kernel_sum_ms_median", "event_ms_median", "kernels_median",
                    "memcpys_median", "memsets_median", "streams_max", "off_stream_calls", "off_stream_ms_median",
                    "outliving_calls", "outlived_ms_max", "calls_without_records", "late_record_calls"});
    f.required("calls", v.calls);
    f.required("span_ms_median", v.span_ms_median);
    f.required("kernel_sum_ms_median", v.kernel_sum_ms_median);
    f.optional("event_ms_median", v.event_ms_median);
    f.required("kernels_median", v.kernels_median);
    f.required("memcpys_median", v.memcpys_median);
    f.required("memsets_median", v.memsets_median);
    f.required("streams_max", v.streams_max);
    f.required("off_stream_calls", v.off_stream_calls);
    f.required("off_stream_ms_median", v.off_stream_ms_median);
    f.required("outliving_calls", v.outliving_calls);
    f.required("outlived_ms_max", v.outlived_ms_max);
    f.required("calls_without_records", v.calls_without_records);
    if (f.has("late_record_calls")) f.required("late_record_calls", v.late_record_calls);  // 0 in older reports
}

void read_value(const json& j, const std::string& path, CallChecks& v) {
    const Fields f(j, path, {"verified", "scanned_calls", "sampled_elements_per_call", "sampled_max_rel_err"});
    f.required("verified", v.verified);
    f.required("scanned_calls", v.scanned_calls);
    f.required("sampled_elements_per_call", v.sampled_elements_per_call);
    f.required("sampled_max_rel_err", v.sampled_max_rel_err);
}

void read_value(const json& j, const std::string& path, ClockSettleFacts& v) {
    const Fields f(j, path, {"calls", "seconds", "settled"});
    f.required("calls", v.calls);
    f.required("seconds", v.seconds);
    f.required("settled", v.settled);
}

void read_value(const json& j, const std::string& path, SamplingEvidence& v) {
    const Fields f(j, path,
                   {"stop", "confidence", "relative_half_width", "noise_target", "time_cap_s", "min_span_s", "span_s",
                    "clock_settle"});
    f.required("stop", v.stop);
    f.required("confidence", v.confidence);
    f.optional("relative_half_width", v.relative_half_width);
    f.optional("noise_target", v.noise_target);
    f.optional("time_cap_s", v.time_cap_s);
    f.optional("min_span_s", v.min_span_s);
    f.optional("span_s", v.span_s);
    f.optional("clock_settle", v.clock_settle);
}

void read_value(const json& j, const std::string& path, RooflineEvidence& v) {
    const Fields f(j, path,
                   {"ceiling",
                    "unavailable",
                    "flops",
                    "min_dram_bytes",
                    "arithmetic_intensity",
                    "modelled_ai",
                    "achieved_tflops",
                    "measured_peak_tflops",
                    "fraction_of_measured_peak",
                    "computed_peak_tflops",
                    "fraction_of_computed_peak",
                    "peak_tflops",
                    "bandwidth_gbps",
                    "ridge_ai",
                    "bound",
                    "floor_ms",
                    "safety_factor",
                    "faster_than_floor",
                    "achieved_gbps",
                    "fraction_of_copy_bandwidth"});
    f.optional("ceiling", v.ceiling);
    f.optional("unavailable", v.unavailable);
    f.optional("flops", v.flops);
    f.optional("min_dram_bytes", v.min_dram_bytes);
    f.optional("arithmetic_intensity", v.arithmetic_intensity);
    f.optional("modelled_ai", v.modelled_ai);
    f.optional("achieved_tflops", v.achieved_tflops);
    f.optional("measured_peak_tflops", v.measured_peak_tflops);
    f.optional("fraction_of_measured_peak", v.fraction_of_measured_peak);
    f.optional("computed_peak_tflops", v.computed_peak_tflops);
    f.optional("fraction_of_computed_peak", v.fraction_of_computed_peak);
    f.optional("peak_tflops", v.peak_tflops);
    f.optional("bandwidth_gbps", v.bandwidth_gbps);
    f.optional("ridge_ai", v.ridge_ai);
    f.optional("bound", v.bound);
    f.optional("floor_ms", v.floor_ms);
    f.optional("safety_factor", v.safety_factor);
    f.optional("faster_than_floor", v.faster_than_floor);
    f.optional("achieved_gbps", v.achieved_gbps);
    f.optional("fraction_of_copy_bandwidth", v.fraction_of_copy_bandwidth);
}

void read_value(const json& j, const std::string& path, TrustedCheckEvidence& v) {
    const Fields f(j, path, {"calls_checked", "passed", "call_seeds"});
    f.required("calls_checked", v.calls_checked);
    f.required("passed", v.passed);
    f.required("call_seeds", v.call_seeds);
}

void read_value(const json& j, const std::string& path, TimingClaims& v) {
    const Fields f(j, path,
                   {"claimed_median_ms", "grader_bound_median_ms", "believed", "harness_allowance_ms",
                    "harness_allowance_error_ms", "calibration", "no_bound", "harness_cpu_allowance_ms", "bound_from",
                    "no_cpu_bound", "claimed_cpu_median_ms"});
    f.required("claimed_median_ms", v.claimed_median_ms);
    f.required("grader_bound_median_ms", v.grader_bound_median_ms);
    f.required("believed", v.believed);
    f.optional("harness_allowance_error_ms", v.harness_allowance_error_ms);
    f.optional("calibration", v.calibration);
    f.optional("no_bound", v.no_bound);
    f.optional("harness_cpu_allowance_ms", v.harness_cpu_allowance_ms);
    f.optional("bound_from", v.bound_from);
    f.optional("no_cpu_bound", v.no_cpu_bound);
    f.optional("claimed_cpu_median_ms", v.claimed_cpu_median_ms);
    // Without a bound the allowance is absent (older reports wrote "uncalibrated").
    const auto allowance = j.find("harness_allowance_ms");
    if ((allowance == j.end() && v.no_bound) || (allowance != j.end() && *allowance == "uncalibrated"))
        v.harness_allowance_ms = std::numeric_limits<double>::infinity();
    else
        f.required("harness_allowance_ms", v.harness_allowance_ms);
}

void read_value(const json& j, const std::string& path, RecordExtras& v) {
    const Fields f(j, path,
                   {"device",           "device_uuid",        "launch",         "launch_error",     "attributes",
                    "attributes_error", "model_bytes",        "verify_sampled", "warm_cache",       "l2_flush_bytes",
                    "timing_method",    "launch_overhead_ms", "hold_timeouts",  "hold_timeout_s",   "kernel_time",
                    "timer_fallback",   "anticheat",          "call_checks",    "sampling",         "roofline",
                    "trusted_check",    "timing_claims",      "c_fence",        "c_fence_fallback", "variant"});
    f.optional("device", v.device);
    f.optional("device_uuid", v.device_uuid);
    f.optional("launch", v.launch);
    f.optional("launch_error", v.launch_error);
    f.optional("attributes", v.attributes);
    f.optional("attributes_error", v.attributes_error);
    f.optional("model_bytes", v.model_bytes);
    f.optional("verify_sampled", v.verify_sampled);
    f.optional("warm_cache", v.warm_cache);
    f.optional("l2_flush_bytes", v.l2_flush_bytes);
    f.optional("timing_method", v.timing_method);
    f.optional("launch_overhead_ms", v.launch_overhead_ms);
    f.optional("hold_timeouts", v.hold_timeouts);
    f.optional("hold_timeout_s", v.hold_timeout_s);
    f.optional("kernel_time", v.kernel_time);
    f.optional("timer_fallback", v.timer_fallback);
    f.optional("c_fence", v.c_fence);
    f.optional("c_fence_fallback", v.c_fence_fallback);
    f.optional("variant", v.variant);
    f.optional("anticheat", v.anticheat);
    f.optional("call_checks", v.call_checks);
    f.optional("sampling", v.sampling);
    f.optional("roofline", v.roofline);
    f.optional("trusted_check", v.trusted_check);
    f.optional("timing_claims", v.timing_claims);
}

}  // namespace

void to_json(json& j, const LaunchInfo& v) {
    j = {{"grid", v.grid}, {"block", v.block}, {"dynamic_smem", v.dynamic_smem}};
}
void from_json(const json& j, LaunchInfo& v) { read_value(j, "", v); }

void to_json(json& j, const KernelAttributes& v) {
    j = {{"registers", v.registers},
         {"static_shared_bytes", v.static_shared_bytes},
         {"max_dynamic_shared_bytes", v.max_dynamic_shared_bytes},
         {"local_bytes", v.local_bytes},
         {"max_threads_per_block", v.max_threads_per_block},
         {"ptx_version", v.ptx_version},
         {"binary_version", v.binary_version}};
}
void from_json(const json& j, KernelAttributes& v) { read_value(j, "", v); }

void to_json(json& j, const AnticheatEvidence& v) {
    j = {{"strict", v.strict},
         {"calls", v.calls},
         {"calls_verified", v.calls_verified},
         {"calls_exported", v.calls_exported},
         {"every_call_checked", v.every_call_checked},
         {"fresh_inputs", v.fresh_inputs},
         {"fresh_buffers", v.fresh_buffers},
         {"buffer_sets", v.buffer_sets},
         {"input_checksums", v.input_checksums}};
    put(j, "failed_at", v.failed_at);
    put(j, "device_wide_sync", v.device_wide_sync);
    put(j, "threads_left_running", v.threads_left_running);
    put(j, "max_threads_left", v.max_threads_left);
    put(j, "guard_band_elements", v.guard_band_elements);
    put(j, "guard_page_bytes", v.guard_page_bytes);
    put(j, "off_stream_calls", v.off_stream_calls);
    put(j, "outliving_calls", v.outliving_calls);
    if (v.timing) {
        j["timing_mismatch"] = v.timing->timing_mismatch;
        j["mismatched_calls"] = v.timing->mismatched_calls;
        j["event_ms_median"] = v.timing->event_ms_median;
        j["wall_ms_median"] = v.timing->wall_ms_median;
        j["slack_ms"] = v.timing->slack_ms;
    }
}
void from_json(const json& j, AnticheatEvidence& v) { read_value(j, "", v); }

void to_json(json& j, const KernelTimeEvidence& v) {
    j = {{"calls", v.calls},
         {"span_ms_median", v.span_ms_median},
         {"kernel_sum_ms_median", v.kernel_sum_ms_median},
         {"kernels_median", v.kernels_median},
         {"memcpys_median", v.memcpys_median},
         {"memsets_median", v.memsets_median},
         {"streams_max", v.streams_max},
         {"off_stream_calls", v.off_stream_calls},
         {"off_stream_ms_median", v.off_stream_ms_median},
         {"outliving_calls", v.outliving_calls},
         {"outlived_ms_max", v.outlived_ms_max},
         {"calls_without_records", v.calls_without_records},
         {"late_record_calls", v.late_record_calls}};
    put(j, "event_ms_median", v.event_ms_median);
}
void from_json(const json& j, KernelTimeEvidence& v) { read_value(j, "", v); }

void to_json(json& j, const CallChecks& v) {
    j = {{"verified", v.verified},
         {"scanned_calls", v.scanned_calls},
         {"sampled_elements_per_call", v.sampled_elements_per_call},
         {"sampled_max_rel_err", v.sampled_max_rel_err}};
}
void from_json(const json& j, CallChecks& v) { read_value(j, "", v); }

void to_json(json& j, const ClockSettleFacts& v) {
    j = {{"calls", v.calls}, {"seconds", v.seconds}, {"settled", v.settled}};
}
void from_json(const json& j, ClockSettleFacts& v) { read_value(j, "", v); }

void to_json(json& j, const SamplingEvidence& v) {
    j = {{"stop", v.stop}, {"confidence", v.confidence}};
    put(j, "relative_half_width", v.relative_half_width);
    put(j, "noise_target", v.noise_target);
    put(j, "time_cap_s", v.time_cap_s);
    put(j, "min_span_s", v.min_span_s);
    put(j, "span_s", v.span_s);
    put(j, "clock_settle", v.clock_settle);
}
void from_json(const json& j, SamplingEvidence& v) { read_value(j, "", v); }

void to_json(json& j, const RooflineEvidence& v) {
    j = json::object();
    put(j, "ceiling", v.ceiling);
    put(j, "unavailable", v.unavailable);
    put(j, "flops", v.flops);
    put(j, "min_dram_bytes", v.min_dram_bytes);
    put(j, "arithmetic_intensity", v.arithmetic_intensity);
    put(j, "modelled_ai", v.modelled_ai);
    put(j, "achieved_tflops", v.achieved_tflops);
    put(j, "measured_peak_tflops", v.measured_peak_tflops);
    put(j, "fraction_of_measured_peak", v.fraction_of_measured_peak);
    put(j, "computed_peak_tflops", v.computed_peak_tflops);
    put(j, "fraction_of_computed_peak", v.fraction_of_computed_peak);
    put(j, "peak_tflops", v.peak_tflops);
    put(j, "bandwidth_gbps", v.bandwidth_gbps);
    put(j, "ridge_ai", v.ridge_ai);
    put(j, "bound", v.bound);
    put(j, "floor_ms", v.floor_ms);
    put(j, "safety_factor", v.safety_factor);
    put(j, "faster_than_floor", v.faster_than_floor);
    put(j, "achieved_gbps", v.achieved_gbps);
    put(j, "fraction_of_copy_bandwidth", v.fraction_of_copy_bandwidth);
}
void from_json(const json& j, RooflineEvidence& v) { read_value(j, "", v); }

void to_json(json& j, const TrustedCheckEvidence& v) {
    j = {{"calls_checked", v.calls_checked}, {"passed", v.passed}, {"call_seeds", v.call_seeds}};
}
void from_json(const json& j, TrustedCheckEvidence& v) { read_value(j, "", v); }

void to_json(json& j, const TimingClaims& v) {
    j = {{"claimed_median_ms", v.claimed_median_ms},
         {"grader_bound_median_ms", v.grader_bound_median_ms},
         {"believed", v.believed}};
    if (std::isfinite(v.harness_allowance_ms))
        j["harness_allowance_ms"] = v.harness_allowance_ms;
    else
        j["no_bound"] =
            v.no_bound.value_or("no harness allowance was measured: the claims that fit their windows stand");
    if (v.harness_allowance_error_ms) j["harness_allowance_error_ms"] = *v.harness_allowance_error_ms;
    if (v.calibration) j["calibration"] = *v.calibration;
    if (v.harness_cpu_allowance_ms) j["harness_cpu_allowance_ms"] = *v.harness_cpu_allowance_ms;
    if (v.bound_from) j["bound_from"] = *v.bound_from;
    if (v.no_cpu_bound) j["no_cpu_bound"] = *v.no_cpu_bound;
    if (v.claimed_cpu_median_ms) j["claimed_cpu_median_ms"] = *v.claimed_cpu_median_ms;
}
void from_json(const json& j, TimingClaims& v) { read_value(j, "", v); }

bool RecordExtras::empty() const { return json(*this).empty(); }

void to_json(json& j, const RecordExtras& v) {
    j = json::object();
    put(j, "device", v.device);
    put(j, "device_uuid", v.device_uuid);
    put(j, "launch", v.launch);
    put(j, "launch_error", v.launch_error);
    put(j, "attributes", v.attributes);
    put(j, "attributes_error", v.attributes_error);
    put(j, "model_bytes", v.model_bytes);
    put(j, "verify_sampled", v.verify_sampled);
    put(j, "warm_cache", v.warm_cache);
    put(j, "l2_flush_bytes", v.l2_flush_bytes);
    put(j, "timing_method", v.timing_method);
    put(j, "launch_overhead_ms", v.launch_overhead_ms);
    put(j, "hold_timeouts", v.hold_timeouts);
    put(j, "hold_timeout_s", v.hold_timeout_s);
    put(j, "kernel_time", v.kernel_time);
    put(j, "timer_fallback", v.timer_fallback);
    put(j, "c_fence", v.c_fence);
    put(j, "c_fence_fallback", v.c_fence_fallback);
    put(j, "variant", v.variant);
    put(j, "anticheat", v.anticheat);
    put(j, "call_checks", v.call_checks);
    put(j, "sampling", v.sampling);
    put(j, "roofline", v.roofline);
    put(j, "trusted_check", v.trusted_check);
    put(j, "timing_claims", v.timing_claims);
}
void from_json(const json& j, RecordExtras& v) { read_value(j, "/extra", v); }

}  // namespace kreg
