// Transpose step 1 — naive: one thread per element, reads coalesced, writes not.
//
// threadIdx.x runs along a row of A, so a warp reads 32 consecutive floats (one 128-byte line) and
// writes them down a column of B, ldb floats apart: 32 separate 32-byte sectors for 128 useful bytes.
// Each sector is written back whole, so DRAM sees up to 8x the bytes of the writes unless L2 merges the
// neighbouring warps' sectors before evicting them. Swapping the roles (coalesced writes, strided
// reads) only moves the problem to the reads. Step 2 stages a tile in shared memory so that both sides
// are coalesced.
#include "../cuda_common/transpose_common.cuh"

namespace {

using kreg_transpose::Fp32Transpose;

constexpr int kCols = 32;  // columns of A per block: one warp along a row
constexpr int kRows = 8;   // rows of A per block

__global__ void __launch_bounds__(kCols* kRows) naive_transpose(Fp32Transpose p) {
    const int col = blockIdx.x * kCols + threadIdx.x;
    if (col >= p.n) return;  // no barrier below, so threads past the edge may leave
    for (int row = blockIdx.y * kRows + threadIdx.y; row < p.m; row += gridDim.y * kRows)
        p.b[static_cast<size_t>(col) * p.ldb + row] = p.a[static_cast<size_t>(row) * p.lda + col];
}

kreg_transpose::TransposeLaunch naive_plan(const Fp32Transpose& p) {
    return {&naive_transpose, kreg_transpose::tile_grid(p.m, p.n, kRows, kCols), dim3(kCols, kRows), 0};
}

class Naive final : public kreg_transpose::TransposeKernel<Naive> {
public:
    static kreg::KernelSpec spec() {
        return kreg_transpose::cuda_spec(
            "cuda_t1_naive", "one thread per element: coalesced reads, writes ldb floats apart (uncoalesced)");
    }
    kreg_transpose::TransposeLaunch plan(const Fp32Transpose& p) const { return naive_plan(p); }
};

}  // namespace

KREG_PLUGIN("cuda_t1_naive", "1.0.0", Naive)
