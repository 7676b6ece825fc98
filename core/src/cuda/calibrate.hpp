// Ceilings measured on the device once per run, so every row can be compared with what the hardware
// actually reaches today (clocks, drivers and cuBLAS versions move datasheet numbers by several percent).
// The GEMM ceilings are the trusted cuBLAS plugin's kernels, called over the plugin ABI like any kernel:
// the runner itself does not link cuBLAS (issue 10, item 6).
#pragma once

#include "common/types.hpp"

#include <kreg/abi.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>

namespace kreg {

// A loaded plugin's GEMM kernel, ready to call: its ABI entry points and an instance made by its create().
// The plugin and the instance belong to the caller and must outlive the calibration.
struct CeilingKernel {
    const kreg_kernel_info* info = nullptr;
    void* instance = nullptr;
};

// The kernels the GEMM ceilings are measured with, by dtype (fp32: sgemm_tflops, tf32: tf32_tflops,
// bf16: bf16_tflops), and why a dtype has none ("plugin has no kernel 'cublas_bf16'", "needs compute
// capability 8.0, device has 7.0"): its ceiling is then null and the reason is under "unavailable".
struct CeilingKernels {
    std::map<DType, CeilingKernel> kernels;
    std::map<DType, std::string> unavailable;
};

// The key of a dtype's GEMM ceiling: "sgemm_tflops", "tf32_tflops", "bf16_tflops"; "" for others.
const char* ceiling_key(DType dtype);

// Measures, on device:
//   dram_copy_gbps: device-to-device cudaMemcpyAsync of 1 GiB, counting read + write bytes (2 GiB per copy);
//   sgemm_tflops, tf32_tflops, bf16_tflops: each dtype's kernel (C = A*B, fp32 C; bf16 A and B rounded on
//                   the host);
// each the median of 10 event-timed calls after 2 warm-up calls, GEMMs at size^3 on random data in
// [-1, 1). Returns {"dram_copy_gbps", "sgemm_tflops", "tf32_tflops", "bf16_tflops" (null where no kernel),
// "unavailable" ({key: reason}, only when some GEMM ceiling is null), "size", "copy_bytes", "repeats",
// "seconds"}. About 2 s on an H200. Throws CudaError, or std::runtime_error naming the kernel when one
// returns an error.
nlohmann::json calibrate_ceilings(int device, const CeilingKernels& gemm);

}  // namespace kreg
