// Transpose step 4 — 16-byte loads and stores, a 64x64 tile, eight vectors in flight per thread.
//
// What this step changes is the width of every global access: one float4 per lane, 512 bytes per warp
// instruction, a quarter of step 3's load and store instructions. Each thread loads eight float4 (128
// bytes) per tile before the barrier; an H200 SM holds 9 blocks of 128 threads at this kernel's 50
// registers, about 144 KB of loads outstanding. The tile is 64 wide, so A and B are read and written in
// 256-byte row pieces, like step 3's 2 x 2 tiles. Measured on the H200 (docs/TRANSPOSE.md) the two then
// run at the same speed within 2 %: at this point DRAM, not instructions, sets the pace, and fewer
// instructions buy nothing more. (With 256 threads and four float4 each, the first version of this
// kernel reached 0.89-0.90 of the copy bandwidth at 8192^2; eight reach 0.91.)
//
// The tile is 64x64 floats, padded to a row stride of 65 words, 128 threads as 8 x 16:
//   in:  thread (tx, ty) reads A rows ty, ty + 16, ty + 32, ty + 48, columns 4tx..4tx+3 and 32+4tx..: one
//        float4 each. A warp (8 tx x 4 ty) reads four 128-byte row segments: every sector whole. It stores
//        its vectors as scalars (a padded row is not 16-byte aligned) at words 65r + 4tx + q, banks
//        (r + 4tx + q) mod 32: 4 consecutive r and 8 values of 4tx cover the 32 banks, no conflict.
//   out: thread (tx, ty) builds B's float4 at row col0 + c (c = ty, ty + 16, ...), columns row0 + r..r+3
//        (r = 4tx, 32 + 4tx) from the tile's column c: words 65(r + q) + c, banks (4tx + q + c) mod 32 —
//        again 32 distinct banks — and writes it with one 16-byte store.
// A vector is used only where it is whole inside the matrix and 16-byte aligned (the base pointers, lda,
// ldb and the tile's position decide; with an odd lda every other row is misaligned); elsewhere the
// same thread moves the elements one by one. So any M, N, lda, ldb is transposed exactly.
#include "../cuda_common/transpose_common.cuh"

namespace {

using kreg_transpose::aligned16;
using kreg_transpose::Fp32Transpose;

constexpr int kTile = 64;       // A rows and columns per tile
constexpr int kLd = kTile + 1;  // 65 ≡ 1 (mod 32): see the bank arithmetic above
constexpr int kThreadsX = 8;    // float4 columns per 32-column half of the tile
constexpr int kThreadsY = 16;
constexpr int kVectors = 2 * kTile / kThreadsY;  // 8 float4 per thread: 2 per row, rows ty + 16j

// A(row, col..col+3), zeros outside A: one 16-byte load when whole and aligned, else element by element.
__device__ __forceinline__ float4 load4(const Fp32Transpose& p, int row, int col) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= p.m || col >= p.n) return v;
    const float* src = p.a + static_cast<size_t>(row) * p.lda + col;
    if (col + 3 < p.n && aligned16(src)) return *reinterpret_cast<const float4*>(src);
    v.x = src[0];
    if (col + 1 < p.n) v.y = src[1];
    if (col + 2 < p.n) v.z = src[2];
    if (col + 3 < p.n) v.w = src[3];
    return v;
}

// B(row, col..col+3) = v for the elements inside B: one 16-byte store when whole and aligned.
__device__ __forceinline__ void store4(const Fp32Transpose& p, int row, int col, float4 v) {
    if (row >= p.n || col >= p.m) return;  // B is N x M
    float* dst = p.b + static_cast<size_t>(row) * p.ldb + col;
    if (col + 3 < p.m && aligned16(dst)) {
        *reinterpret_cast<float4*>(dst) = v;
        return;
    }
    dst[0] = v.x;
    if (col + 1 < p.m) dst[1] = v.y;
    if (col + 2 < p.m) dst[2] = v.z;
    if (col + 3 < p.m) dst[3] = v.w;
}

__global__ void __launch_bounds__(kThreadsX* kThreadsY) vectorized_transpose(Fp32Transpose p) {
    __shared__ float tile[kTile][kLd];  // tile[r][c] = A(row0 + r, col0 + c); zeros outside A
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col0 = blockIdx.x * kTile;
    for (int row0 = blockIdx.y * kTile; row0 < p.m; row0 += gridDim.y * kTile) {
        float4 in[kVectors];  // all eight loads issued before any is used
#pragma unroll
        for (int i = 0; i < kVectors; ++i)
            in[i] = load4(p, row0 + ty + (i >> 1) * kThreadsY, col0 + (i & 1) * 32 + 4 * tx);
#pragma unroll
        for (int i = 0; i < kVectors; ++i) {
            float* dst = &tile[ty + (i >> 1) * kThreadsY][(i & 1) * 32 + 4 * tx];
            dst[0] = in[i].x;
            dst[1] = in[i].y;
            dst[2] = in[i].z;
            dst[3] = in[i].w;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < kVectors; ++i) {
            const int c = ty + (i >> 1) * kThreadsY, r = (i & 1) * 32 + 4 * tx;
            const float4 v = make_float4(tile[r][c], tile[r + 1][c], tile[r + 2][c], tile[r + 3][c]);
            store4(p, col0 + c, row0 + r, v);
        }
        if (row0 + gridDim.y * kTile < p.m) __syncthreads();
    }
}

kreg_transpose::TransposeLaunch vectorized_plan(const Fp32Transpose& p) {
    return {&vectorized_transpose, kreg_transpose::tile_grid(p.m, p.n, kTile, kTile), dim3(kThreadsX, kThreadsY), 0};
}

class Vectorized final : public kreg_transpose::TransposeKernel<Vectorized> {
public:
    static kreg::KernelSpec spec() {
        return kreg_transpose::cuda_spec(
            "cuda_t4_vectorized",
            "64x64 padded tile, 16-byte loads and stores where aligned, 8 vectors in flight per thread");
    }
    kreg_transpose::TransposeLaunch plan(const Fp32Transpose& p) const { return vectorized_plan(p); }
};

}  // namespace

KREG_PLUGIN("cuda_t4_vectorized", "1.1.0", Vectorized)
