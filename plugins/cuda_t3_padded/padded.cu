// Transpose step 3 — step 2 with one word of padding per tile row: no bank conflicts.
//
// The tile is declared [32][33]. Element (r, c) is at word r * 33 + c, so the column read
// tile[threadIdx.x][c] touches words 33 * lane + c, whose banks (33 * lane + c) mod 32 = (lane + c) mod 32
// are 32 different banks: one wavefront instead of 32. The row writes tile[r][threadIdx.x] stay
// conflict-free (consecutive words). Nothing else changes: the same 32x8 threads, 4 elements each, the
// same global traffic, 128 bytes more shared memory per block. This is the classic kernel that moves data
// at close to copy speed; step 4 adds 16-byte accesses and more bytes in flight per thread.
#include "../cuda_common/transpose_common.cuh"

namespace {

using kreg_transpose::Fp32Transpose;

constexpr int kTile = 32;
constexpr int kRows = 8;

__global__ void __launch_bounds__(kTile* kRows) padded_transpose(Fp32Transpose p) {
    __shared__ float tile[kTile][kTile + 1];  // row stride 33 words ≡ 1 (mod 32): a column walks all banks
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col0 = blockIdx.x * kTile;
    for (int row0 = blockIdx.y * kTile; row0 < p.m; row0 += gridDim.y * kTile) {
        const int col = col0 + tx;
#pragma unroll
        for (int r = ty; r < kTile; r += kRows)
            if (row0 + r < p.m && col < p.n) tile[r][tx] = p.a[static_cast<size_t>(row0 + r) * p.lda + col];
        __syncthreads();
        const int bcol = row0 + tx;
#pragma unroll
        for (int c = ty; c < kTile; c += kRows)
            if (col0 + c < p.n && bcol < p.m) p.b[static_cast<size_t>(col0 + c) * p.ldb + bcol] = tile[tx][c];
        if (row0 + gridDim.y * kTile < p.m) __syncthreads();
    }
}

kreg_transpose::TransposeLaunch padded_plan(const Fp32Transpose& p) {
    return {&padded_transpose, kreg_transpose::tile_grid(p.m, p.n, kTile, kTile), dim3(kTile, kRows), 0};
}

class Padded final : public kreg_transpose::TransposeKernel<Padded> {
public:
    static kreg::KernelSpec spec() { return kreg_transpose::cuda_spec("cuda_t3_padded", "32x32 shared tile padded to a 33-word row stride: no bank conflicts"); }
    kreg_transpose::TransposeLaunch plan(const Fp32Transpose& p) const { return padded_plan(p); }
};

}  // namespace

KREG_PLUGIN("cuda_t3_padded", "1.0.0", Padded)
