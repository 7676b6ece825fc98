// What a report says about a GPU: its facts (cuda/device_facts.hpp), the ceilings measured on it once per run
// (cuda/calibrate.hpp), and why there are none. Typed, with one field table each (common/field_table.hpp), so
// that the sweep, --devices, the grader and the readers of a report share one spelling of every key.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// The key, in a worker's device reply and in meta.gpu, that says why ceilings is null though they were asked for.
inline constexpr const char* kCeilingsUnavailableKey = "ceilings_unavailable";

// The plugin that measured the GEMM ceilings: name and version as it says (its version names the cuBLAS it
// runs on), path and sha256 as the parent read the file (sha256 null when it was gone by then).
struct CeilingPlugin {
    std::string name, version, path;
    std::optional<std::string> sha256;
};
void to_json(nlohmann::json& j, const CeilingPlugin& p);
void from_json(const nlohmann::json& j, CeilingPlugin& p);

// meta.gpu.ceilings: calibrate_ceilings()'s measurements.
struct GpuCeilings {
    std::optional<double> dram_copy_gbps;                          // device-to-device copy, read + write bytes
    std::optional<double> sgemm_tflops, tf32_tflops, bf16_tflops;  // null where there is no kernel for it
    std::map<std::string, std::string> unavailable;                // why a GEMM ceiling is null, by its key
    std::optional<int64_t> size;                                   // the GEMMs' n
    std::optional<int64_t> copy_bytes;                             // bytes one copy reads
    std::optional<int64_t> repeats;                                // timed calls per ceiling (the median's)
    std::optional<double> seconds;                                 // the calibration took
    std::optional<CeilingPlugin> plugin;
};
void to_json(nlohmann::json& j, const GpuCeilings& c);
void from_json(const nlohmann::json& j, GpuCeilings& c);

// meta.gpu: {"facts", "ceilings" (null when not measured), "ceilings_unavailable" (only when asked for and
// not measured)}. The facts stay the JSON describe_device() makes (documented in cuda/device_facts.hpp):
// the CUDA side owns their keys and the runner passes them through; name() and uuid() read the two the
// runner needs.
struct GpuInfo {
    nlohmann::json facts = nullptr;
    std::optional<GpuCeilings> ceilings;
    std::optional<std::string> ceilings_unavailable;

    std::string name() const;                 // facts.name, "?" when there is none
    std::optional<std::string> uuid() const;  // facts.uuid
    std::optional<double> dram_copy_gbps() const;
};
void to_json(nlohmann::json& j, const GpuInfo& g);
// Throws std::invalid_argument naming the key under meta.gpu whose value has the wrong type.
void from_json(const nlohmann::json& j, GpuInfo& g);

// The keys each table writes (for the test that holds them to configs/schema/report.schema.json).
std::vector<std::string> gpu_info_keys();
std::vector<std::string> gpu_ceilings_keys();
std::vector<std::string> ceiling_plugin_keys();

}  // namespace kreg
