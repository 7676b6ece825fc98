// Step 8 — a multi-stage cp.async pipeline (sm_80+): step 7's tiling, but tiles travel global -> shared
// with cp.async, three stages deep.
//
// Step 7 staged the next tile through registers: the loads had to land before the thread could store
// them, and only one tile was ever in flight. cp.async copies straight into shared memory without
// occupying registers or the thread, so two tiles can be in flight while a third is consumed, hiding
// longer memory latency with fewer registers. Traffic is unchanged (32 FLOP/B by the model).
//
// B moves as 16-byte copies (4-byte ones at the right edge or when a row is not 16-byte aligned). A moves
// as 4-byte copies because they can transpose into as[k][m], which keeps the inner loop's float4 reads of
// A; out-of-range elements use the zero-fill form (src-size 0).
#include "../cuda_common/gemm_common.cuh"

namespace {

using kreg_cuda::Fp32Gemm;

constexpr int kBM = 128, kBN = 128, kBK = 8;
constexpr int kStages = 3;
constexpr int kThreadsM = 16, kThreadsN = 16;  // thread (ty, tx): rows ty*4 + {0..3} (+64), cols tx*4 + {0..3} (+64)
constexpr int kThreads = kThreadsM * kThreadsN;
constexpr int kLdA = kBM + 4;  // ≡ 4 (mod 32): the transposing 4-byte copies of a warp hit 32 banks
constexpr int kStageFloats = kBK * kLdA + kBK * kBN;
static_assert((kBK * kLdA * 4) % 16 == 0 && (kStageFloats * 4) % 16 == 0, "stages and B tiles stay 16-byte aligned");

__global__ void __launch_bounds__(kThreads, 2) cp_async_gemm(Fp32Gemm p) {
    __shared__ __align__(16) float smem[kStages * kStageFloats];
    const int tid = threadIdx.x;
    const int ty = tid / kThreadsN, tx = tid % kThreadsN;
    const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    const int k_tiles = (p.k + kBK - 1) / kBK;

    auto load_stage = [&](int stage, int tile) {
        float* as = smem + stage * kStageFloats;
        float* bs = as + kBK * kLdA;
        kreg_cuda::async_load_a_transposed<kBM, kBK, kThreads, kLdA>(as, p, row0, tile * kBK, tid);
        kreg_cuda::async_load_b<kBK, kBN, kThreads>(bs, p, tile * kBK, col0, tid);
    };

    // Prologue: tiles 0 .. kStages-2 in flight, one commit group each (empty groups keep the count uniform).
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < k_tiles) load_stage(s, s);
        kreg_cuda::cp_async_commit();
    }

    float acc[8][8] = {};
    int read_stage = 0, write_stage = kStages - 1;
    for (int t = 0; t < k_tiles; ++t) {
        // Groups committed so far: t + kStages - 1. Allowing kStages - 2 pending means tile t has landed
        // for this thread; the barrier makes every thread's copies visible and guarantees everyone has
        // finished computing on write_stage (tile t - 1) before it is refilled below.
        kreg_cuda::cp_async_wait<kStages - 2>();
        __syncthreads();
        if (t + kStages - 1 < k_tiles) load_stage(write_stage, t + kStages - 1);
        kreg_cuda::cp_async_commit();

        const float* as = smem + read_stage * kStageFloats;
        const float* bs = as + kBK * kLdA;
#pragma unroll
        for (int kk = 0; kk < kBK; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(as + kk * kLdA + ty * 4);
            const float4 a1 = *reinterpret_cast<const float4*>(as + kk * kLdA + ty * 4 + kBM / 2);
            const float4 b0 = *reinterpret_cast<const float4*>(bs + kk * kBN + tx * 4);
            const float4 b1 = *reinterpret_cast<const float4*>(bs + kk * kBN + tx * 4 + kBN / 2);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + ty * 4 + (i & 3) + (i >> 2) * (kBM / 2);
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            const int col = col0 + tx * 4 + s * (kBN / 2);
            kreg_cuda::store_output4(
                p, row, col, make_float4(acc[i][4 * s], acc[i][4 * s + 1], acc[i][4 * s + 2], acc[i][4 * s + 3]));
        }
    }
}

class CpAsync final : public kreg_cuda::SimtKernel<CpAsync> {
public:
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec("cuda_08_cp_async",
                                    "128x128 block tile, 8x8 per thread, 3-stage cp.async pipeline (zero-filled edges)",
                                    80, &kreg_cuda::block_tile_bytes<kBM, kBN>);
    }
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) const {
        return {&cp_async_gemm, kreg_cuda::tile_grid(p, kBM, kBN), dim3(kThreads), 0};
    }
};

}  // namespace

KREG_PLUGIN("cuda_08_cp_async", "1.0.0", CpAsync)
