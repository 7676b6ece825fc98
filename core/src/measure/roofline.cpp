#include "measure/roofline.hpp"

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

nlohmann::json or_null(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

const char* measured_key(DType d) {
    switch (d) {
        case DType::fp32: return "sgemm_tflops";
        case DType::tf32: return "tf32_tflops";
        case DType::bf16: return "bf16_tflops";
        case DType::fp16: return nullptr;
    }
    return nullptr;
}

const char* computed_key(DType d) {
    switch (d) {
        case DType::fp32: return "fp32_tflops";
        case DType::tf32: return "tf32_tensor_tflops";
        case DType::bf16: return "bf16_tensor_tflops";
        case DType::fp16: return nullptr;
    }
    return nullptr;
}

}  // namespace

void annotate_roofline(Record& r, const nlohmann::json& device_facts, const nlohmann::json& ceilings) {
    if (r.status != RowStatus::ok || !r.stats || !(r.stats->median_ms > 0)) return;
    const double m = double(r.shape.m), n = double(r.shape.n), k = double(r.shape.k);
    const double median_ms = r.stats->median_ms;
    const double input_bytes = (r.dtype == DType::bf16 || r.dtype == DType::fp16) ? 2.0 : 4.0;

    const double flops = r.shape.flops();
    const double min_bytes = input_bytes * (m * k + k * n) + 4.0 * m * n;
    const double achieved_tflops = flops / (median_ms * 1e-3) / 1e12;

    static const nlohmann::json kNone = nlohmann::json::object();
    const nlohmann::json& peaks = device_facts.is_object() && device_facts.contains("peaks") ? device_facts["peaks"] : kNone;
    const char* mkey = measured_key(r.dtype);
    const char* ckey = computed_key(r.dtype);
    const std::optional<double> measured_peak = mkey ? positive_number(ceilings, mkey) : std::nullopt;
    const std::optional<double> computed_peak = ckey ? positive_number(peaks, ckey) : std::nullopt;
    const std::optional<double> peak = larger(measured_peak, computed_peak);
    const std::optional<double> bandwidth =
        larger(positive_number(ceilings, "dram_copy_gbps"), positive_number(peaks, "dram_gbps"));

    nlohmann::json roof;
    roof["flops"] = flops;
    roof["min_dram_bytes"] = min_bytes;
    roof["arithmetic_intensity"] = flops / min_bytes;
    if (const auto model_bytes = positive_number(r.extra, "model_bytes")) roof["modelled_ai"] = flops / *model_bytes;
    roof["achieved_tflops"] = achieved_tflops;
    roof["measured_peak_tflops"] = or_null(measured_peak);
    roof["fraction_of_measured_peak"] = or_null(measured_peak ? std::optional<double>(achieved_tflops / *measured_peak) : std::nullopt);
    roof["computed_peak_tflops"] = or_null(computed_peak);
    roof["fraction_of_computed_peak"] = or_null(computed_peak ? std::optional<double>(achieved_tflops / *computed_peak) : std::nullopt);
    roof["peak_tflops"] = or_null(peak);
    roof["bandwidth_gbps"] = or_null(bandwidth);

    // TFLOP/s over GB/s is 1e3 FLOP per byte.
    std::optional<double> ridge;
    if (peak && bandwidth) ridge = *peak * 1e3 / *bandwidth;
    roof["ridge_ai"] = or_null(ridge);
    roof["bound"] = ridge ? nlohmann::json(flops / min_bytes < *ridge ? "memory" : "compute") : nlohmann::json(nullptr);

    std::optional<double> floor_ms;
    if (peak) floor_ms = flops / (*peak * 1e12) * 1e3;
    if (bandwidth) floor_ms = std::max(floor_ms.value_or(0.0), min_bytes / (*bandwidth * 1e9) * 1e3);
    roof["floor_ms"] = or_null(floor_ms);
    roof["faster_than_floor"] = floor_ms ? nlohmann::json(median_ms < 0.9 * *floor_ms) : nlohmann::json(nullptr);

    r.extra["roofline"] = std::move(roof);
}

}  // namespace kreg
