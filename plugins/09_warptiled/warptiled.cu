// Step 9 — warp tiling, tuned for the H200: the best SIMT fp32 kernel of the lab.
//
// The block tile (128x128, 256 threads) is split into warp tiles (64x32, 2x4 warps) and each warp tile
// into thread tiles (8x8, as 2x2 sub-tiles of 4x4). What the hierarchy buys over step 8:
//   - a warp's shared reads touch few, contiguous addresses: per k step its 32 threads read 8 distinct
//     A float4s (one 128-byte wavefront) and 4 distinct B float4s, so every LDS.128 is conflict-free and
//     the whole warp needs 4 wavefronts for 64 FMAs per thread;
//   - the 4x4 sub-tiles sit WM/2 and WN/2 apart, so a thread's float4 reads stay 16-byte aligned and
//     contiguous across lanes (8x8 contiguous per thread would make lanes 32 bytes apart: conflicts);
//   - 4 cp.async stages (33 KB of shared memory, two blocks per SM) keep three tiles in flight;
//   - blocks are numbered in groups of 8 block rows (a 1D grid swizzle), so blocks that run together
//     share A and B panels in L2;
//   - __launch_bounds__(256, 2) caps registers at 128 so two blocks (16 warps) fit an SM.
// Traffic by the model: 32 FLOP/B (128x128 tile). Expected: near cuBLAS SGEMM from 2048 up. When the
// 128x128 grid would leave SMs idle (fewer blocks than SMs, e.g. 1024^2 gives 64 blocks on 132 SMs), a
// 64x128 configuration with 128 threads is launched instead (128 blocks at 1024^2).
//
// Edges: any M, N, K, lda, ldb, ldc. A moves by 4-byte cp.async (which transposes it into as[k][m]),
// B by 16-byte cp.async where aligned (zero-filled past the edge), C by float4 stores where aligned and
// in range; everything else falls back to scalars. Out-of-range inputs are zero-filled, not skipped.
#include "../cuda_common/gemm_common.cuh"

#include <climits>

namespace {

using kreg_cuda::Fp32Gemm;

template <int BM_, int BN_, int WM_, int WN_, int MIN_BLOCKS_>
struct Config {
    static constexpr int BM = BM_, BN = BN_, BK = 8, WM = WM_, WN = WN_;
    static constexpr int kStages = 4;
    static constexpr int kMinBlocks = MIN_BLOCKS_;
    static constexpr int kWarpsN = BN / WN, kWarps = (BM / WM) * (BN / WN), kThreads = kWarps * 32;
    // A warp's 32 lanes form kLanesM x kLanesN; each lane owns 8x8 outputs as 2x2 sub-tiles of 4x4.
    static constexpr int kLanesN = WN / 8, kLanesM = 32 / kLanesN;
    static constexpr int kLdA = BM + 4;  // ≡ 4 (mod 32): conflict-free transposing copies, float4-aligned rows
    static constexpr int kStageFloats = BK * kLdA + BK * BN;
    static constexpr int kGroupM = 8;    // block rows per swizzle group
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
    static_assert(kLanesM * kLanesN == 32 && kLanesM * 8 == WM, "8x8 per lane must cover the warp tile");
    static_assert(BM % 32 == 0 && (BK * kLdA) % 4 == 0 && kStageFloats % 4 == 0, "alignment of the stages");
};

using LargeConfig = Config<128, 128, 64, 32, 2>;  // 256 threads, warp tile 64x32
using SmallConfig = Config<64, 128, 32, 64, 2>;   // 128 threads, warp tile 32x64; at most ~2 blocks per SM when chosen

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks) warptiled_gemm(Fp32Gemm p) {
    __shared__ __align__(16) float smem[C::kStages * C::kStageFloats];
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;

    // Grouped block order: consecutive blocks walk down kGroupM block rows before moving right.
    const int tiles_m = (p.m + C::BM - 1) / C::BM, tiles_n = (p.n + C::BN - 1) / C::BN;
    const int blocks_per_group = C::kGroupM * tiles_n;
    const int group = blockIdx.x / blocks_per_group;
    const int first_tile_m = group * C::kGroupM;
    const int group_rows = min(tiles_m - first_tile_m, C::kGroupM);
    const int in_group = blockIdx.x % blocks_per_group;
    const int row0 = (first_tile_m + in_group % group_rows) * C::BM;
    const int col0 = (in_group / group_rows) * C::BN;

    // This lane's place: warp tile origin plus lane offset, in the block tile.
    const int lane_m = (warp / C::kWarpsN) * C::WM + (lane / C::kLanesN) * 4;
    const int lane_n = (warp % C::kWarpsN) * C::WN + (lane % C::kLanesN) * 4;

    const int k_tiles = (p.k + C::BK - 1) / C::BK;
    auto load_stage = [&](int stage, int tile) {
        float* as = smem + stage * C::kStageFloats;
        float* bs = as + C::BK * C::kLdA;
        kreg_cuda::async_load_a_transposed<C::BM, C::BK, C::kThreads, C::kLdA>(as, p, row0, tile * C::BK, tid);
        kreg_cuda::async_load_b<C::BK, C::BN, C::kThreads>(bs, p, tile * C::BK, col0, tid);
    };

#pragma unroll
    for (int s = 0; s < C::kStages - 1; ++s) {
        if (s < k_tiles) load_stage(s, s);
        kreg_cuda::cp_async_commit();
    }

    float acc[8][8] = {};
    for (int t = 0; t < k_tiles; ++t) {
        // t + kStages - 1 groups committed; at most kStages - 2 pending means tile t has landed. The
        // barrier publishes it and ensures stage (t - 1) % kStages is no longer read before refilling it.
        kreg_cuda::cp_async_wait<C::kStages - 2>();
        __syncthreads();
        const int next = t + C::kStages - 1;
        if (next < k_tiles) load_stage(next % C::kStages, next);
        kreg_cuda::cp_async_commit();

        const float* as = smem + (t % C::kStages) * C::kStageFloats;
        const float* bs = as + C::BK * C::kLdA;
#pragma unroll
        for (int kk = 0; kk < C::BK; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(as + kk * C::kLdA + lane_m);
            const float4 a1 = *reinterpret_cast<const float4*>(as + kk * C::kLdA + lane_m + C::WM / 2);
            const float4 b0 = *reinterpret_cast<const float4*>(bs + kk * C::BN + lane_n);
            const float4 b1 = *reinterpret_cast<const float4*>(bs + kk * C::BN + lane_n + C::WN / 2);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + lane_m + (i & 3) + (i >> 2) * (C::WM / 2);
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            const int col = col0 + lane_n + s * (C::WN / 2);
            kreg_cuda::store_output4(
                p, row, col, make_float4(acc[i][4 * s], acc[i][4 * s + 1], acc[i][4 * s + 2], acc[i][4 * s + 3]));
        }
    }
}

template <class C>
kreg_cuda::LaunchPlan plan_for(const Fp32Gemm& p) {
    const int64_t blocks = int64_t{kreg_cuda::ceil_div(p.m, C::BM)} * kreg_cuda::ceil_div(p.n, C::BN);
    if (blocks > INT_MAX)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "cuda_09_warptiled: " + std::to_string(blocks) +
                                                            " blocks exceed the 1D grid this kernel uses");
    return {&warptiled_gemm<C>, dim3(static_cast<unsigned>(blocks)), dim3(C::kThreads), 0};
}

class Warptiled final : public kreg_cuda::SimtKernel<Warptiled> {
public:
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec("cuda_09_warptiled",
                                    "128x128 block / 64x32 warp / 8x8 thread tiles, 4-stage cp.async, grouped grid "
                                    "(64x128 tiles when the grid would not fill the GPU)",
                                    80, &model_bytes);
    }

    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) {
        const int large_blocks = kreg_cuda::ceil_div(p.m, LargeConfig::BM) * kreg_cuda::ceil_div(p.n, LargeConfig::BN);
        return large_blocks >= sm_count() ? plan_for<LargeConfig>(p) : plan_for<SmallConfig>(p);
    }

private:
    // The model follows the same choice, with the H200's 132 SMs standing in for the device.
    static double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) {
        const int64_t large_blocks = ((m + 127) / 128) * ((n + 127) / 128);
        return large_blocks >= 132 ? kreg_cuda::block_tile_bytes<128, 128>(m, n, k, dtype)
                                   : kreg_cuda::block_tile_bytes<64, 128>(m, n, k, dtype);
    }

    int sm_count() {
        int device = 0;
        KREG_CUDA_CHECK(cudaGetDevice(&device));
        if (device != sm_count_device_) {
            KREG_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
            sm_count_device_ = device;
        }
        return sm_count_;
    }

    int sm_count_ = 0;
    int sm_count_device_ = -1;
};

}  // namespace

KREG_PLUGIN("cuda_09_warptiled", "1.0.0", Warptiled)
