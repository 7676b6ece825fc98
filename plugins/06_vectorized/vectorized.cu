// Step 6 — vectorised global loads: step 5's kernel with each thread fetching its share of a tile as one
// 16-byte float4 instead of four 4-byte loads.
//
// Same traffic (16 FLOP/B by the model) and the same inner loop; the tile loads take a quarter of the
// load instructions and address computations, and the shared stores become 128-bit. A vector load is used
// only when its four elements are inside the matrix and its address is 16-byte aligned (that depends on
// the base pointer and the leading dimension); otherwise the thread falls back to guarded scalar loads,
// so any M, N, K, lda and ldb work.
#include "../cuda_common/gemm_common.cuh"

namespace {

using kreg_cuda::Fp32Gemm;

constexpr int kBM = 64, kBN = 64, kBK = 16;
constexpr int kT = 4;
constexpr int kThreadsM = kBM / kT, kThreadsN = kBN / kT;
constexpr int kThreads = kThreadsM * kThreadsN;
static_assert(kBM * kBK / 4 == kThreads && kBK * kBN / 4 == kThreads, "one float4 of each tile per thread");

__global__ void __launch_bounds__(kThreads) vectorized_gemm(Fp32Gemm p) {
    __shared__ __align__(16) float as[kBM][kBK];
    __shared__ __align__(16) float bs[kBK][kBN];
    const int tid = threadIdx.x;
    const int tr = tid / kThreadsN, tc = tid % kThreadsN;
    const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    // This thread's float4 in each tile.
    const int a_r = tid / (kBK / 4), a_c = (tid % (kBK / 4)) * 4;
    const int b_r = tid / (kBN / 4), b_c = (tid % (kBN / 4)) * 4;
    float acc[kT][kT] = {};
    for (int k0 = 0; k0 < p.k; k0 += kBK) {
        *reinterpret_cast<float4*>(&as[a_r][a_c]) =
            kreg_cuda::load4_or_zero(p.a, p.lda, row0 + a_r, k0 + a_c, p.m, p.k);
        *reinterpret_cast<float4*>(&bs[b_r][b_c]) =
            kreg_cuda::load4_or_zero(p.b, p.ldb, k0 + b_r, col0 + b_c, p.k, p.n);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kBK; ++kk) {
            float a[kT], b[kT];
#pragma unroll
            for (int i = 0; i < kT; ++i) a[i] = as[tr + kThreadsM * i][kk];
#pragma unroll
            for (int j = 0; j < kT; ++j) b[j] = bs[kk][tc + kThreadsN * j];
#pragma unroll
            for (int i = 0; i < kT; ++i)
#pragma unroll
                for (int j = 0; j < kT; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kT; ++i)
#pragma unroll
        for (int j = 0; j < kT; ++j)
            kreg_cuda::store_output(p, row0 + tr + kThreadsM * i, col0 + tc + kThreadsN * j, acc[i][j]);
}

class Vectorized final : public kreg_cuda::SimtKernel<Vectorized> {
public:
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec("cuda_06_vectorized",
                                    "64x64 block tile, 4x4 outputs per thread, float4 global loads (scalar at edges)",
                                    70, &kreg_cuda::block_tile_bytes<kBM, kBN>);
    }
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) const {
        return {&vectorized_gemm, kreg_cuda::tile_grid(p, kBM, kBN), dim3(kThreads), 0};
    }
};

}  // namespace

KREG_PLUGIN("cuda_06_vectorized", "1.0.0", Vectorized)
