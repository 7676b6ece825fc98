// Where a row sits on the roofline of the device it ran on: the two lower bounds on its time (FLOPs at
// peak, minimal bytes at bandwidth), which one binds, and how close the row came. Pure C++: it works on
// the JSON facts a worker reported, so reports can be annotated on a machine without CUDA.
#pragma once

#include "common/gpu_info.hpp"
#include "common/job.hpp"

#include <nlohmann/json.hpp>

namespace kreg {

// For a row with status ok and timing stats, sets r.extra.roofline (RooflineEvidence) to:
//   flops                      2 M N K
//   min_dram_bytes             each input read once, C written once: e(MK + KN) + 4 MN, with e = 4 for
//                              fp32/tf32 and 2 for bf16/fp16 (C is fp32 for every dtype)
//   arithmetic_intensity       flops / min_dram_bytes
//   modelled_ai                flops / r.extra.model_bytes (the kernel's own traffic model), only when present
//   achieved_tflops            flops / median
//   measured_peak_tflops       ceilings.sgemm_tflops (fp32), tf32_tflops (tf32), bf16_tflops (bf16); null otherwise
//   fraction_of_measured_peak  achieved / measured_peak_tflops
//   computed_peak_tflops       device_facts.peaks: fp32_tflops (fp32), tf32_tensor_tflops, bf16_tensor_tflops
//   fraction_of_computed_peak  achieved / computed_peak_tflops
//   peak_tflops, bandwidth_gbps  the roof: the larger of measured and computed (a physical bound must not
//                              be beaten by a good kernel), bandwidth from ceilings.dram_copy_gbps and
//                              device_facts.peaks.dram_gbps
//   ridge_ai                   peak / bandwidth (FLOP per byte)
//   bound                      "memory" if arithmetic_intensity < ridge_ai, else "compute"
//   floor_ms                   max(flops / peak, min_dram_bytes / bandwidth)
//   faster_than_floor          median < 0.9 floor_ms: faster than the hardware allows, so suspicious
// Transposes and block transposes (r.operation != gemm): memory only. flops 0, min_dram_bytes 2 M N 4,
// achieved_gbps, bandwidth_gbps = ceilings.dram_copy_gbps (measured; not the datasheet), its
// fraction_of_copy_bandwidth, floor_ms and faster_than_floor; without a measured copy bandwidth,
// "unavailable" says so.
// A value whose inputs are missing is unset (absent from the JSON). Rows that are not ok, or have no timing, are left
// untouched.
void annotate_roofline(Record& r, const nlohmann::json& device_facts, const nlohmann::json& ceilings);
// The same, against a report's meta.gpu.
void annotate_roofline(Record& r, const GpuInfo& gpu);

}  // namespace kreg
