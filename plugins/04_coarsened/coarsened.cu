// Step 4 — thread coarsening: a 32x32 tile computed by 16x16 threads, each owning 2x2 outputs.
//
// Global traffic is that of the 32x32 tile (8 FLOP/B by the model). What changes is inside the SM: per
// k step a thread loads 2 values of A and 2 of B from shared memory for 4 FMAs (step 2: 2 loads per FMA),
// so shared-memory bandwidth stops being the limit; a quarter of the threads also means a quarter of the
// index arithmetic. Outputs sit at (ty + 16i, tx + 16j) so stores stay coalesced and the B reads of a
// warp (16 columns, two rows of threads) are conflict-free; A's rows are padded by one word because a warp
// spans two thread rows, ty and ty + 1, whose A rows would otherwise share a bank.
#include "../cuda_common/gemm_common.cuh"

namespace {

using kreg_cuda::Fp32Gemm;

constexpr int kTile = 32;
constexpr int kThreadsPerSide = 16;
constexpr int kThreads = kThreadsPerSide * kThreadsPerSide;

__global__ void __launch_bounds__(kThreads) coarsened_gemm(Fp32Gemm p) {
    __shared__ float as[kTile][kTile + 1];
    __shared__ float bs[kTile][kTile];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * kThreadsPerSide + tx;
    const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
    float acc[2][2] = {};
    for (int k0 = 0; k0 < p.k; k0 += kTile) {
        // 1024 elements per tile, 4 per thread; consecutive threads take consecutive columns (coalesced).
#pragma unroll
        for (int l = 0; l < kTile * kTile / kThreads; ++l) {
            const int e = tid + l * kThreads;
            const int r = e / kTile, c = e % kTile;
            as[r][c] = kreg_cuda::load_or_zero(p.a, p.lda, row0 + r, k0 + c, p.m, p.k);
            bs[r][c] = kreg_cuda::load_or_zero(p.b, p.ldb, k0 + r, col0 + c, p.k, p.n);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kTile; ++kk) {
            const float a0 = as[ty][kk], a1 = as[ty + kThreadsPerSide][kk];
            const float b0 = bs[kk][tx], b1 = bs[kk][tx + kThreadsPerSide];
            acc[0][0] = fmaf(a0, b0, acc[0][0]);
            acc[0][1] = fmaf(a0, b1, acc[0][1]);
            acc[1][0] = fmaf(a1, b0, acc[1][0]);
            acc[1][1] = fmaf(a1, b1, acc[1][1]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            kreg_cuda::store_output(p, row0 + ty + kThreadsPerSide * i, col0 + tx + kThreadsPerSide * j, acc[i][j]);
}

class Coarsened final : public kreg_cuda::SimtKernel<Coarsened> {
public:
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec("cuda_04_coarsened", "32x32 shared tile, 16x16 threads, 2x2 outputs per thread", 70,
                                    &kreg_cuda::block_tile_bytes<kTile, kTile>);
    }
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) const {
        return {&coarsened_gemm, kreg_cuda::tile_grid(p, kTile, kTile), dim3(kThreadsPerSide, kThreadsPerSide), 0};
    }
};

}  // namespace

KREG_PLUGIN("cuda_04_coarsened", "1.0.0", Coarsened)
