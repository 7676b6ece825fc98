// Row-major GEMM through cuBLAS (column-major): C = A*B row-major is C^T = B^T * A^T column-major, so
// the operands are passed swapped with no transposes.
#pragma once

#include "common/types.hpp"

#include <cublas_v2.h>

#include <cstdint>

namespace kreg {

// c (m x n, fp32) = a (m x k) * b (k x n), packed row-major on the device, on the handle's stream.
// fp32: cublasSgemm with CUBLAS_DEFAULT_MATH (full fp32, no TF32);
// tf32: fp32 buffers, CUBLAS_COMPUTE_32F_FAST_TF32; bf16 / fp16: 16-bit a and b, fp32 c and accumulate.
// Throws CublasError (or CudaError for a sticky error underneath).
void cublas_gemm_row_major(cublasHandle_t handle, DType dtype, int64_t m, int64_t n, int64_t k, const void* a,
                           const void* b, float* c);

}  // namespace kreg
