// Datasheet-style peaks computed from what the device reports (pure C++, so it is testable anywhere).
//
// FP32 (non-tensor) peak = SMs x SM clock x FP32 lanes per SM x 2 (an FMA is two FLOPs).
// DRAM peak = 2 x memory clock x bus width / 8 (double data rate; the driver reports HBM/GDDR clocks
// such that this gives the datasheet figure: H100 SXM 2619 MHz x 5120 bit -> 3.35 TB/s).
// Tensor peaks (dense, no sparsity) come from a per-SM table and are given only where the whitepapers
// pin the per-clock figure down: see kTensorTable in peaks.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

namespace kreg {

// FP32 FMA lanes per SM for a compute capability, or nullopt if the table does not know it.
// 64 on sm_70/75/80 (V100, T4, A100: half the lanes of the consumer parts), 128 on sm_86/87/89/90/100/120.
std::optional<int> fp32_lanes_per_sm(int cc_major, int cc_minor);

// Dense tensor-core FLOP per clock per SM for tf32 and bf16 inputs (fp32 accumulate), or nullopt.
std::optional<int> tf32_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor);
std::optional<int> bf16_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor);

// {"fp32_lanes_per_sm", "fp32_tflops", "dram_gbps", "tf32_tensor_tflops", "bf16_tensor_tflops", "basis"}.
// A peak whose table entry is unknown (or whose inputs are not positive) is null.
nlohmann::json computed_peaks(int cc_major, int cc_minor, int sm_count, double sm_clock_khz, double memory_clock_khz,
                              int memory_bus_bits);

}  // namespace kreg
