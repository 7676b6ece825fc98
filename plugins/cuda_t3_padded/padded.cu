// Transpose step 3 — step 2 with one word of padding per tile row: no bank conflicts.
//
// The tile is declared [32][33]. Element (r, c) is at word r * 33 + c, so the column read
// tile[threadIdx.x][c] touches words 33 * lane + c, whose banks (33 * lane + c) mod 32 = (lane + c) mod 32
// are 32 different banks: one wavefront instead of 32. The row writes tile[r][threadIdx.x] stay
// conflict-free (consecutive words). That padding is the step.
//
// What it takes to reach copy speed on an H200 (measured, docs/TRANSPOSE.md): with one 32x33 tile per
// block, as in step 2, this kernel reached only 0.78 of the copy bandwidth at 8192^2, banks or no banks.
// Two things were missing, neither about shared memory:
//   - Bytes in flight. Each thread had four 4-byte loads outstanding before the barrier; HBM needs
//     tens of KB per SM outstanding to stay busy. Here each thread issues 16 loads before the barrier.
//   - Run length in DRAM. One 32-wide tile reads and writes 128-byte pieces of 32 different rows; two
//     tiles side by side make the pieces 256 bytes on both sides (measured: 256-byte pieces on the write
//     side matter most), which the memory system serves closer to a copy's long runs.
// So a block moves a 2 x 2 group of padded tiles, a 64 x 64 piece of A: the same tile, the same bank
// arithmetic, four of them. 32 x 8 threads; each thread moves 4 elements of every tile.
#include "../cuda_common/transpose_common.cuh"

namespace {

using kreg_transpose::Fp32Transpose;

constexpr int kTile = 32;              // the padded tile of this step
constexpr int kRows = 8;               // thread rows: 32 x 8 threads, each 4 rows of every tile
constexpr int kTiles = 2;              // a block moves kTiles x kTiles tiles
constexpr int kSpan = kTile * kTiles;  // 64: A rows and columns per block
constexpr int kPerTile = kTile / kRows;

__global__ void __launch_bounds__(kTile* kRows) padded_transpose(Fp32Transpose p) {
    // tile[u][w] holds A(row0 + 32u .. +31, col0 + 32w .. +31); row stride 33 words ≡ 1 (mod 32): a column
    // walks all banks.
    __shared__ float tile[kTiles][kTiles][kTile][kTile + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col0 = blockIdx.x * kSpan;
    for (int row0 = blockIdx.y * kSpan; row0 < p.m; row0 += gridDim.y * kSpan) {
        float v[kTiles][kTiles][kPerTile];  // all 16 loads issued before the first is stored
#pragma unroll
        for (int i = 0; i < kPerTile; ++i)
#pragma unroll
            for (int u = 0; u < kTiles; ++u)
#pragma unroll
                for (int w = 0; w < kTiles; ++w) {  // w inner: a warp reads 256 contiguous bytes of a row
                    const int row = row0 + u * kTile + ty + i * kRows, col = col0 + w * kTile + tx;
                    v[u][w][i] = (row < p.m && col < p.n) ? p.a[static_cast<size_t>(row) * p.lda + col] : 0.0f;
                }
#pragma unroll
        for (int i = 0; i < kPerTile; ++i)
#pragma unroll
            for (int u = 0; u < kTiles; ++u)
#pragma unroll
                for (int w = 0; w < kTiles; ++w) tile[u][w][ty + i * kRows][tx] = v[u][w][i];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < kPerTile; ++i)
#pragma unroll
            for (int w = 0; w < kTiles; ++w)
#pragma unroll
                for (int u = 0; u < kTiles; ++u) {  // u inner: a warp writes 256 contiguous bytes of a B row
                    const int c = ty + i * kRows;
                    const int brow = col0 + w * kTile + c, bcol = row0 + u * kTile + tx;
                    if (brow < p.n && bcol < p.m) p.b[static_cast<size_t>(brow) * p.ldb + bcol] = tile[u][w][tx][c];
                }
        if (row0 + gridDim.y * kSpan < p.m) __syncthreads();
    }
}

kreg_transpose::TransposeLaunch padded_plan(const Fp32Transpose& p) {
    return {&padded_transpose, kreg_transpose::tile_grid(p.m, p.n, kSpan, kSpan), dim3(kTile, kRows), 0};
}

class Padded final : public kreg_transpose::TransposeKernel<Padded> {
public:
    static kreg::KernelSpec spec() {
        return kreg_transpose::cuda_spec(
            "cuda_t3_padded",
            "32x32 shared tiles padded to a 33-word row stride (no bank conflicts), 2x2 of them per block");
    }
    kreg_transpose::TransposeLaunch plan(const Fp32Transpose& p) const { return padded_plan(p); }
};

}  // namespace

KREG_PLUGIN("cuda_t3_padded", "1.1.0", Padded)
