// Step 1 — naive: one thread per element of C, no reuse at all.
//
// Each thread walks a row of A and a column of B straight from global memory: 2K loads of 4 bytes for 2K
// FLOPs, so the traffic model says 0.25 FLOP/B (2·M·N·K·4 bytes + C). The caches soften that in practice,
// but the kernel stays bound by load instructions, far below the FMA peak. threadIdx.x runs along the
// columns of C, so a warp's B loads are coalesced and its A load is one broadcast.
#include "../cuda_common/gemm_common.cuh"

namespace {

using kreg_cuda::Fp32Gemm;

constexpr int kBlockX = 32;  // columns of C per block
constexpr int kBlockY = 8;   // rows of C per block

__global__ void __launch_bounds__(kBlockX* kBlockY) naive_gemm(Fp32Gemm p) {
    const int col = blockIdx.x * kBlockX + threadIdx.x;
    const int row = blockIdx.y * kBlockY + threadIdx.y;
    if (row >= p.m || col >= p.n) return;
    const float* a = p.a + static_cast<size_t>(row) * p.lda;
    const float* b = p.b + col;
    float acc = 0.0f;
    for (int kk = 0; kk < p.k; ++kk) acc = fmaf(a[kk], b[static_cast<size_t>(kk) * p.ldb], acc);
    kreg_cuda::store_output(p, row, col, acc);
}

class Naive final : public kreg_cuda::SimtKernel<Naive> {
public:
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec("cuda_01_naive", "one thread per output, operands straight from global memory", 70,
                                    &kreg_cuda::block_tile_bytes<1, 1>);
    }
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) const {
        return {&naive_gemm, kreg_cuda::tile_grid(p, kBlockY, kBlockX), dim3(kBlockX, kBlockY), 0};
    }
};

}  // namespace

KREG_PLUGIN("cuda_01_naive", "1.0.0", Naive)
