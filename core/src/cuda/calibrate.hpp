// Ceilings measured on the device once per run, so every row can be compared with what the hardware
// actually reaches today (clocks, drivers and cuBLAS versions move datasheet numbers by several percent).
#pragma once

#include <nlohmann/json.hpp>

namespace kreg {

// Measures, on device:
//   dram_copy_gbps: device-to-device cudaMemcpyAsync of 1 GiB, counting read + write bytes (2 GiB per copy);
//   sgemm_tflops:   cuBLAS SGEMM (fp32, no TF32);
//   tf32_tflops:    cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32;
//   bf16_tflops:    cublasGemmEx, bf16 A and B, fp32 C and accumulate;
// each the median of 10 event-timed calls after 2 warm-up calls, GEMMs at size^3 on random data in
// [-1, 1). Returns {"dram_copy_gbps", "sgemm_tflops", "tf32_tflops", "bf16_tflops", "size",
// "copy_bytes", "repeats", "seconds"}. About 2 s on an H200. Throws CudaError / CublasError.
nlohmann::json calibrate_ceilings(int device);

}  // namespace kreg
