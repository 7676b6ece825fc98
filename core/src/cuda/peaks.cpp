#include "cuda/peaks.hpp"

namespace kreg {
namespace {

struct Entry {
    int major, minor;
    int fp32_lanes;  // FP32 FMA units per SM
    int tf32_flop;   // dense tensor FLOP/clk/SM with tf32 inputs, 0 where not tabulated
    int bf16_flop;   // dense tensor FLOP/clk/SM with bf16 inputs, fp32 accumulate, 0 where not tabulated
};

// FP32 lanes: the CUDA C++ Programming Guide's arithmetic-instruction throughput table (results per
// clock per SM for 32-bit fp add/multiply/FMA).
// Tensor figures, checked against the datasheets:
//   sm_80 (A100): 108 SMs x 1410 MHz x 1024 = 156 TFLOP/s TF32, x 2048 = 312 TFLOP/s BF16.
//   sm_90 (H100 SXM): 132 SMs x 1830 MHz x 2048 = 495 TFLOP/s TF32, x 4096 = 989 TFLOP/s BF16.
//   (NVIDIA quotes Hopper's tensor peaks at 1830 MHz, below the 1980 MHz maximum SM clock the device
//   reports; computed at the reported clock, as here, they are an upper bound about 8% above the
//   datasheet.) Consumer parts (sm_86/89) run fp32-accumulate tensor math at a SKU-dependent rate,
//   so they get no tensor entry.
constexpr Entry kTable[] = {
    {7, 0, 64, 0, 0},  {7, 5, 64, 0, 0},        {8, 0, 64, 1024, 2048}, {8, 6, 128, 0, 0},  {8, 7, 128, 0, 0},
    {8, 9, 128, 0, 0}, {9, 0, 128, 2048, 4096}, {10, 0, 128, 0, 0},     {12, 0, 128, 0, 0},
};

const Entry* find(int major, int minor) {
    for (const Entry& e : kTable)
        if (e.major == major && e.minor == minor) return &e;
    return nullptr;
}

std::optional<int> positive(int v) { return v > 0 ? std::optional<int>(v) : std::nullopt; }

}  // namespace

std::optional<int> fp32_lanes_per_sm(int cc_major, int cc_minor) {
    const Entry* e = find(cc_major, cc_minor);
    return e ? positive(e->fp32_lanes) : std::nullopt;
}

std::optional<int> tf32_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor) {
    const Entry* e = find(cc_major, cc_minor);
    return e ? positive(e->tf32_flop) : std::nullopt;
}

std::optional<int> bf16_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor) {
    const Entry* e = find(cc_major, cc_minor);
    return e ? positive(e->bf16_flop) : std::nullopt;
}

nlohmann::json computed_peaks(int cc_major, int cc_minor, int sm_count, double sm_clock_khz, double memory_clock_khz,
                              int memory_bus_bits) {
    nlohmann::json p = nlohmann::json::object();
    const bool have_sm_clock = sm_count > 0 && sm_clock_khz > 0;
    // TFLOP/s = SMs x (kHz x 1e3) x FLOP/clk / 1e12
    const auto tflops = [&](std::optional<int> flop_per_clock) -> nlohmann::json {
        if (!have_sm_clock || !flop_per_clock) return nullptr;
        return double(sm_count) * sm_clock_khz * 1e3 * double(*flop_per_clock) / 1e12;
    };
    const std::optional<int> lanes = fp32_lanes_per_sm(cc_major, cc_minor);
    p["fp32_lanes_per_sm"] = lanes ? nlohmann::json(*lanes) : nlohmann::json(nullptr);
    p["fp32_tflops"] = tflops(lanes ? std::optional<int>(2 * *lanes) : std::nullopt);
    p["tf32_tensor_tflops"] = tflops(tf32_tensor_flop_per_clock_per_sm(cc_major, cc_minor));
    p["bf16_tensor_tflops"] = tflops(bf16_tensor_flop_per_clock_per_sm(cc_major, cc_minor));
    if (memory_clock_khz > 0 && memory_bus_bits > 0)
        p["dram_gbps"] = 2.0 * memory_clock_khz * 1e3 * double(memory_bus_bits) / 8.0 / 1e9;
    else
        p["dram_gbps"] = nullptr;
    p["basis"] =
        "fp32: SMs x max SM clock x 2 x FP32 lanes/SM; dram: 2 x memory clock x bus bytes; tensor (dense): "
        "SMs x max SM clock x FLOP/clk/SM from the A100/H100 whitepapers (an upper bound on Hopper, whose "
        "datasheet uses a 1830 MHz tensor clock)";
    return p;
}

}  // namespace kreg
