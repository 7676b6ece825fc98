// Step 2 — shared-memory tiling: a block stages a TILE x TILE tile of A and of B in shared memory and
// every thread reuses each staged element TILE times.
//
// Global loads fall by a factor TILE: A is read N/TILE times and B M/TILE times instead of N and M times,
// so the traffic model goes from 0.25 FLOP/B (naive) to TILE/4 FLOP/B: 4 for 16x16, 8 for 32x32.
// What remains is two shared loads per FMA, which now bounds the kernel (next steps cut that ratio).
#include "../cuda_common/gemm_common.cuh"

namespace {

using kreg_cuda::Fp32Gemm;

template <int TILE>
__global__ void __launch_bounds__(TILE* TILE) tiled_gemm(Fp32Gemm p) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < p.k; k0 += TILE) {
        // Every thread loads (zero outside the matrices) and reaches both barriers, even off the edge of C.
        as[ty][tx] = kreg_cuda::load_or_zero(p.a, p.lda, row, k0 + tx, p.m, p.k);
        bs[ty][tx] = kreg_cuda::load_or_zero(p.b, p.ldb, k0 + ty, col, p.k, p.n);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc = fmaf(as[ty][kk], bs[kk][tx], acc);
        __syncthreads();
    }
    kreg_cuda::store_output(p, row, col, acc);
}

template <int TILE>
class Tiled final : public kreg_cuda::SimtKernel<Tiled<TILE>> {
public:
    static kreg::KernelSpec spec() {
        static_assert(TILE == 16 || TILE == 32, "registered tiles are 16 and 32");
        return kreg_cuda::simt_spec(TILE == 16 ? "cuda_02_tiled16" : "cuda_02_tiled32",
                                    TILE == 16 ? "16x16 shared-memory tiles, one output per thread"
                                               : "32x32 shared-memory tiles, one output per thread",
                                    70, &kreg_cuda::block_tile_bytes<TILE, TILE>);
    }
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) const {
        return {&tiled_gemm<TILE>, kreg_cuda::tile_grid(p, TILE, TILE), dim3(TILE, TILE), 0};
    }
};

using Tiled16 = Tiled<16>;
using Tiled32 = Tiled<32>;

}  // namespace

KREG_PLUGIN("cuda_02_tiled", "1.0.0", Tiled16, Tiled32)
