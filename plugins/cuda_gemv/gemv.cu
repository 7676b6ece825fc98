// cuda_gemv: the matrix-vector paths for M = 1 and N = 1 (gemv.cuh has the kernels and the split policy).
#include "gemv.cuh"

KREG_PLUGIN("cuda_gemv", "1.0.0", kreg_gemv::Gemv)
