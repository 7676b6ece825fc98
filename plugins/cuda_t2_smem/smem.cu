// Transpose step 2 — a 32x32 tile staged in shared memory: coalesced on both sides, 32-way bank
// conflicts on the way out.
//
// A block of 32x8 threads reads a 32x32 tile of A row by row (each warp one 128-byte row: coalesced)
// into tile[r][c], waits, and writes B row by row (again one 128-byte row per warp), taking each value
// from a column of the tile: tile[threadIdx.x][k]. Those 32 addresses are 32 words apart, and shared
// memory has 32 banks of one word (bank = word address mod 32), so all 32 land in the same bank: the
// hardware splits the load into 32 wavefronts, one per lane. Global traffic is now the minimum (each
// byte read once, written once, in whole sectors); the shared-memory loads are 32x slower than they
// need be. Step 3 removes that with one word of padding per row.
#include "../cuda_common/transpose_common.cuh"

namespace {

using kreg_transpose::Fp32Transpose;

constexpr int kTile = 32;  // the tile is kTile x kTile elements of A
constexpr int kRows = 8;   // thread rows: each thread moves kTile / kRows = 4 elements

__global__ void __launch_bounds__(kTile* kRows) smem_transpose(Fp32Transpose p) {
    __shared__ float tile[kTile][kTile];  // tile[r][c] = A(row0 + r, col0 + c); row stride 32 words
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col0 = blockIdx.x * kTile;
    for (int row0 = blockIdx.y * kTile; row0 < p.m; row0 += gridDim.y * kTile) {
        const int col = col0 + tx;
#pragma unroll
        for (int r = ty; r < kTile; r += kRows)
            if (row0 + r < p.m && col < p.n) tile[r][tx] = p.a[static_cast<size_t>(row0 + r) * p.lda + col];
        __syncthreads();
        // Row col0 + c of B holds column c of the tile; lane tx writes B(col0 + c, row0 + tx).
        const int bcol = row0 + tx;
#pragma unroll
        for (int c = ty; c < kTile; c += kRows)
            if (col0 + c < p.n && bcol < p.m) p.b[static_cast<size_t>(col0 + c) * p.ldb + bcol] = tile[tx][c];
        // The next row tile (only when the grid is capped) overwrites the tile: wait for every reader.
        if (row0 + gridDim.y * kTile < p.m) __syncthreads();
    }
}

kreg_transpose::TransposeLaunch smem_plan(const Fp32Transpose& p) {
    return {&smem_transpose, kreg_transpose::tile_grid(p.m, p.n, kTile, kTile), dim3(kTile, kRows), 0};
}

class Smem final : public kreg_transpose::TransposeKernel<Smem> {
public:
    static kreg::KernelSpec spec() {
        return kreg_transpose::cuda_spec(
            "cuda_t2_smem", "32x32 shared tile, coalesced both ways; column reads of the tile: 32-way bank conflicts");
    }
    kreg_transpose::TransposeLaunch plan(const Fp32Transpose& p) const { return smem_plan(p); }
};

}  // namespace

KREG_PLUGIN("cuda_t2_smem", "1.0.0", Smem)
