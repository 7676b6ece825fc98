#include "cuda/cublas_gemm.hpp"

#include "cuda/cuda_check.hpp"

namespace kreg {

void cublas_gemm_row_major(cublasHandle_t handle, DType dtype, int64_t m, int64_t n, int64_t k, const void* a,
                           const void* b, float* c) {
    const float alpha = 1.0f, beta = 0.0f;
    KREG_RUNNER_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    switch (dtype) {
        case DType::fp32:
            KREG_RUNNER_CUBLAS_CHECK(cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                                    static_cast<const float*>(b), n, static_cast<const float*>(a), k,
                                                    &beta, c, n));
            return;
        case DType::tf32:
            KREG_RUNNER_CUBLAS_CHECK(cublasGemmEx_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, CUDA_R_32F, n,
                                                     a, CUDA_R_32F, k, &beta, c, CUDA_R_32F, n,
                                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
            return;
        case DType::bf16:
        case DType::fp16: {
            const cudaDataType_t in = dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
            KREG_RUNNER_CUBLAS_CHECK(cublasGemmEx_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, in, n, a, in,
                                                     k, &beta, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                                                     CUBLAS_GEMM_DEFAULT));
            return;
        }
    }
}

}  // namespace kreg
