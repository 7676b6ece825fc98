// Step 3 — shared-memory bank conflicts, and padding as the fix.
//
// Shared memory has 32 banks of 4 bytes; a warp's accesses that hit one bank at different addresses
// are serialised. Here both tiles are stored transposed — A as at[k][m] (the layout the vectorised
// steps later want), B as bt[n][k] — so in the inner loop a warp (32 consecutive n) reads down a column
// of bt: with a row stride of 32 words every one of those 32 reads lands in the same bank (32-way
// conflict, also on every store of the transposed tiles). Global traffic is exactly that of step 2.
//
//   cuda_03_conflicts          TILE 32, stride 32: 32-way conflicts, expect several times slower than step 2
//   cuda_03_padded             stride 33 (+1 word): the column walks all 32 banks, back to step-2 speed
//   cuda_03_padded_dynamic     the same padding in ONE extern __shared__ buffer carved into the two padded
//                              tiles, its size given at launch: the tile becomes a run-time-sized choice
//   cuda_03_padded_dynamic96   TILE 96 (each thread 3x3 outputs): 2·96·97·4 = 74,496 B, above the 48 KiB a
//                              block gets by default, so it opts in once with cudaFuncSetAttribute;
//                              A/B are re-read N/96, M/96 times (24 FLOP/B) but only one block fits an SM
#include "../cuda_common/gemm_common.cuh"

namespace {

using kreg_cuda::Fp32Gemm;

// One output per thread; PAD words of padding per shared row (0: conflicts, 1: none).
template <int TILE, int PAD>
__global__ void __launch_bounds__(TILE* TILE) transposed_tile_gemm(Fp32Gemm p) {
    __shared__ float at[TILE][TILE + PAD];  // at[k][m] = A(row0 + m, k0 + k)
    __shared__ float bt[TILE][TILE + PAD];  // bt[n][k] = B(k0 + k, col0 + n)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc = 0.0f;
    for (int k0 = 0; k0 < p.k; k0 += TILE) {
        // Global reads stay coalesced (tx runs along k for A, along n for B); the transpose happens in
        // the shared store, whose address tx * (TILE + PAD) + ty is one bank for all tx when PAD == 0.
        at[tx][ty] = kreg_cuda::load_or_zero(p.a, p.lda, row0 + ty, k0 + tx, p.m, p.k);
        bt[tx][ty] = kreg_cuda::load_or_zero(p.b, p.ldb, k0 + ty, col0 + tx, p.k, p.n);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc = fmaf(at[kk][ty], bt[tx][kk], acc);  // at: broadcast; bt: column
        __syncthreads();
    }
    kreg_cuda::store_output(p, row0 + ty, col0 + tx, acc);
}

// 32x32 threads, TILE = 32·R, each thread R x R outputs at (ty + 32i, tx + 32j). Both padded tiles live in
// one dynamic buffer of 2·TILE·(TILE+1) floats. A row stride of TILE+1 ≡ 1 (mod 32) keeps every column
// walk and every transposed store conflict-free.
constexpr int kDynThreads = 32;

template <int TILE>
__global__ void __launch_bounds__(kDynThreads* kDynThreads) padded_dynamic_gemm(Fp32Gemm p) {
    static_assert(TILE % kDynThreads == 0, "TILE must be a multiple of 32");
    constexpr int R = TILE / kDynThreads;
    constexpr int LD = TILE + 1;
    extern __shared__ float smem[];
    float* at = smem;              // at[k * LD + m]
    float* bt = smem + TILE * LD;  // bt[n * LD + k]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[R][R] = {};
    for (int k0 = 0; k0 < p.k; k0 += TILE) {
#pragma unroll
        for (int i = 0; i < R; ++i) {
#pragma unroll
            for (int j = 0; j < R; ++j) {
                const int m = ty + kDynThreads * i, kk = tx + kDynThreads * j;  // A tile element (m, kk)
                at[kk * LD + m] = kreg_cuda::load_or_zero(p.a, p.lda, row0 + m, k0 + kk, p.m, p.k);
                const int kb = ty + kDynThreads * i, n = tx + kDynThreads * j;  // B tile element (kb, n)
                bt[n * LD + kb] = kreg_cuda::load_or_zero(p.b, p.ldb, k0 + kb, col0 + n, p.k, p.n);
            }
        }
        __syncthreads();
#pragma unroll 4
        for (int kk = 0; kk < TILE; ++kk) {
            float a[R], b[R];
#pragma unroll
            for (int i = 0; i < R; ++i) a[i] = at[kk * LD + ty + kDynThreads * i];
#pragma unroll
            for (int j = 0; j < R; ++j) b[j] = bt[(tx + kDynThreads * j) * LD + kk];
#pragma unroll
            for (int i = 0; i < R; ++i)
#pragma unroll
                for (int j = 0; j < R; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < R; ++j)
            kreg_cuda::store_output(p, row0 + ty + kDynThreads * i, col0 + tx + kDynThreads * j, acc[i][j]);
}

template <int PAD>
class TransposedTile final : public kreg_cuda::SimtKernel<TransposedTile<PAD>> {
public:
    static constexpr int kTile = 32;
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec(
            PAD == 0 ? "cuda_03_conflicts" : "cuda_03_padded",
            PAD == 0 ? "32x32 tiles stored transposed, row stride 32: 32-way shared-memory bank conflicts"
                     : "32x32 tiles stored transposed, row stride 33: padding removes the bank conflicts",
            70, &kreg_cuda::block_tile_bytes<kTile, kTile>);
    }
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) const {
        return {&transposed_tile_gemm<kTile, PAD>, kreg_cuda::tile_grid(p, kTile, kTile), dim3(kTile, kTile), 0};
    }
};

template <int TILE>
class PaddedDynamic final : public kreg_cuda::SimtKernel<PaddedDynamic<TILE>> {
public:
    static constexpr int kSmemBytes = 2 * TILE * (TILE + 1) * static_cast<int>(sizeof(float));
    static constexpr const char* kName = TILE == 32 ? "cuda_03_padded_dynamic" : "cuda_03_padded_dynamic96";

    static kreg::KernelSpec spec() {
        static_assert(TILE == 32 || TILE == 96, "registered tiles are 32 and 96");
        return kreg_cuda::simt_spec(kName,
                                    TILE == 32 ? "padded 32x32 tiles carved from one dynamic shared buffer"
                                               : "padded 96x96 tiles (3x3 per thread) in 74,496 B of opted-in "
                                                 "dynamic shared memory",
                                    70, &kreg_cuda::block_tile_bytes<TILE, TILE>);
    }
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) {
        if (kSmemBytes > 48 * 1024)
            kreg_cuda::allow_dynamic_smem(reinterpret_cast<const void*>(&padded_dynamic_gemm<TILE>), kSmemBytes, kName,
                                          configured_device_);
        return {&padded_dynamic_gemm<TILE>, kreg_cuda::tile_grid(p, TILE, TILE), dim3(kDynThreads, kDynThreads),
                static_cast<unsigned>(kSmemBytes)};
    }

private:
    int configured_device_ = -1;
};

using Conflicts = TransposedTile<0>;
using Padded = TransposedTile<1>;
using PaddedDynamic32 = PaddedDynamic<32>;
using PaddedDynamic96 = PaddedDynamic<96>;

}  // namespace

KREG_PLUGIN("cuda_03_bank_conflicts", "1.0.0", Conflicts, Padded, PaddedDynamic32, PaddedDynamic96)
