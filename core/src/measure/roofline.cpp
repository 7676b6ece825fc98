#include "measure/roofline.hpp"

#include "common/operation_table.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace kreg {
namespace {

// j[key] as a positive number, or nullopt (missing, null, not a number, or not positive).
std::optional<double> positive_number(const nlohmann::json& j, const char* key) {
    if (!j.is_object()) return std::nullopt;
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    const double v = it->get<double>();
    return v > 0 ? std::optional<double>(v) : std::nullopt;
}

std::optional<double> larger(std::optional<double> a, std::optional<double> b) {
    if (a && b) return std::max(*a, *b);
    return a ? a : b;
}

const char* measured_key(DType d) {
    switch (d) {
        case DType::fp32:
            return "sgemm_tflops";
        case DType::tf32:
            return "tf32_tflops";
        case DType::bf16:
            return "bf16_tflops";
        case DType::fp16:
            return nullptr;
    }
    return nullptr;
}

const char* computed_key(DType d) {
    switch (d) {
        case DType::fp32:
            return "fp32_tflops";
        case DType::tf32:
            return "tf32_tensor_tflops";
        case DType::bf16:
            return "bf16_tensor_tflops";
        case DType::fp16:
            return nullptr;
    }
    return nullptr;
}

// A copy-bound operation (operations.def: data movement, no arithmetic to speak of): the only roof is memory,
// and the one it can reach is what a plain device-to-device copy of the same bytes reaches (read once,
// write once), as measured on this device. Bytes moved: the row's work model (inputs read once, the
// output written once; a transpose's 2 M N 4).
void annotate_data_movement(Record& r, const nlohmann::json& ceilings) {
    const double median_ms = r.stats->median_ms;
    const double bytes = work_bytes(r.operation, r.shape, r.dtype);
    RooflineEvidence roof;
    roof.flops = 0.0;
    roof.min_dram_bytes = bytes;
    roof.arithmetic_intensity = 0.0;
    roof.achieved_gbps = bytes / (median_ms * 1e-3) / 1e9;
    roof.bound = "memory";
    if (const std::optional<double> copy = positive_number(ceilings, "dram_copy_gbps")) {
        roof.bandwidth_gbps = copy;
        roof.fraction_of_copy_bandwidth = *roof.achieved_gbps / *copy;
        roof.floor_ms = bytes / (*copy * 1e9) * 1e3;
        // A transpose may not beat a copy by much; by this much is suspicious, as for GEMM.
        roof.faster_than_floor = median_ms < 0.9 * *roof.floor_ms;
    } else {
        roof.unavailable = "no measured device-to-device copy bandwidth (meta.gpu.ceilings.dram_copy_gbps)";
    }
    r.extra.roofline = std::move(roof);
}

}  // namespace

void annotate_roofline(Record& r, const nlohmann::json& device_facts, const nlohmann::json& ceilings) {
    if (r.status != RowStatus::ok || !r.stats || !(r.stats->median_ms > 0)) return;
    if (operation_row(r.operation).bound == Bound::copy) {
        annotate_data_movement(r, ceilings);
        return;
    }
    const double median_ms = r.stats->median_ms;
    const double flops = work_flops(r.operation, r.shape);
    const double min_bytes = work_bytes(r.operation, r.shape, r.dtype);
    const double achieved_tflops = flops / (median_ms * 1e-3) / 1e12;

    static const nlohmann::json kNone = nlohmann::json::object();
    const nlohmann::json& peaks =
        device_facts.is_object() && device_facts.contains("peaks") ? device_facts["peaks"] : kNone;
    const char* mkey = measured_key(r.dtype);
    const char* ckey = computed_key(r.dtype);
    const std::optional<double> measured_peak = mkey ? positive_number(ceilings, mkey) : std::nullopt;
    const std::optional<double> computed_peak = ckey ? positive_number(peaks, ckey) : std::nullopt;
    const std::optional<double> peak = larger(measured_peak, computed_peak);
    const std::optional<double> bandwidth =
        larger(positive_number(ceilings, "dram_copy_gbps"), positive_number(peaks, "dram_gbps"));

    RooflineEvidence roof;
    roof.flops = flops;
    roof.min_dram_bytes = min_bytes;
    roof.arithmetic_intensity = flops / min_bytes;
    if (r.extra.model_bytes && *r.extra.model_bytes > 0) roof.modelled_ai = flops / *r.extra.model_bytes;
    roof.achieved_tflops = achieved_tflops;
    roof.measured_peak_tflops = measured_peak;
    if (measured_peak) roof.fraction_of_measured_peak = achieved_tflops / *measured_peak;
    roof.computed_peak_tflops = computed_peak;
    if (computed_peak) roof.fraction_of_computed_peak = achieved_tflops / *computed_peak;
    roof.peak_tflops = peak;
    roof.bandwidth_gbps = bandwidth;

    // TFLOP/s over GB/s is 1e3 FLOP per byte.
    if (peak && bandwidth) roof.ridge_ai = *peak * 1e3 / *bandwidth;
    if (roof.ridge_ai) roof.bound = flops / min_bytes < *roof.ridge_ai ? "memory" : "compute";

    std::optional<double> floor_ms;
    if (peak) floor_ms = flops / (*peak * 1e12) * 1e3;
    if (bandwidth) floor_ms = std::max(floor_ms.value_or(0.0), min_bytes / (*bandwidth * 1e9) * 1e3);
    roof.floor_ms = floor_ms;
    if (floor_ms) roof.faster_than_floor = median_ms < 0.9 * *floor_ms;

    r.extra.roofline = std::move(roof);
}

void annotate_roofline(Record& r, const GpuInfo& gpu) {
    annotate_roofline(r, gpu.facts, gpu.ceilings ? nlohmann::json(*gpu.ceilings) : nlohmann::json());
}

}  // namespace kreg
