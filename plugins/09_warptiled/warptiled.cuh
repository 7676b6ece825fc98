// Step 9 — warp tiling, tuned for the H200: the best SIMT fp32 kernel of the lab.
//
// The block tile (128x256, 256 threads) is split into warp tiles (64x64, 2x4 warps) and each warp tile into
// thread tiles (8x16, as 2x4 sub-tiles of 4x4). What the hierarchy buys over step 8:
//   - 128 FMAs per k step for 6 LDS.128 (step 8: 64 for 4); a warp's 32 lanes read 8 distinct A float4s
//     and 4 distinct B float4s per load, so the loads are conflict-free wavefronts;
//   - the 4x4 sub-tiles sit WM/2 and WN/4 apart, so a lane's float4 reads stay aligned and contiguous
//     across lanes (one contiguous 8x16 block per lane would put lanes 64 bytes apart: conflicts);
//   - BK = 16 and 3 cp.async stages (74,496 B, opted in): two tiles in flight, one barrier per 2048 FMAs;
//   - copy addresses computed once per thread and advanced per tile (the generic loaders of step 8 spent
//     ~100 integer instructions per tile, >10% of the issue slots, in ncu on the H200);
//   - blocks are numbered in groups of 8 block rows (a 1D grid swizzle) so co-running blocks share panels
//     of A and B in L2; __launch_bounds__(256, 1) lets the 128 accumulators live in registers (254, no spill).
// Traffic by the model: A read N/256 and B M/128 times, ~43 FLOP/B. Measured on an H200 (one run, warm L2,
// median of 20, TFLOP/s, cuBLAS SGEMM of the same run in brackets): 2048³ 47.3 (49.2), 4096³ 48.8 (51.0),
// 8192³ 49.3 (51.0). When that grid is too coarse for the GPU (a ragged or partly empty last wave) a
// 64x128 configuration (128 threads, 8x8 per lane) runs instead: 1024³ 30.9 (32.6), 1000x3000x257 27.8
// (27.5); see prefer_small.
//
// Edges: any M, N, K, lda, ldb, ldc. A moves by 4-byte cp.async (which transposes it into as[k][m]),
// B by 16-byte cp.async where a vector is aligned and inside B (4-byte copies else), C by float4 stores where aligned
// and in range; everything else falls back to scalars. Out-of-range inputs are zero-filled, not skipped.
//
// A header, so that kernels built on the same tiles (plugins/cuda_splitk, cuda_small_tile, the dispatch plugin)
// compile this code into their own .so instead of copying it; warptiled.cu exports it as cuda_09_warptiled.
// compute_tile is the whole block's work on one tile of C, given as a Fp32Gemm: a split-K kernel hands it a
// K slice of A and B and a workspace slice as C.
#pragma once

#include "../cuda_common/gemm_common.cuh"

#include <climits>

namespace kreg_warptiled {

using kreg_cuda::Fp32Gemm;

template <int BM_, int BN_, int BK_, int WM_, int WN_, int TN_, int STAGES_, int MIN_BLOCKS_>
struct Config {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
    static constexpr int TM = 8, TN = TN_;  // outputs per lane: TM x TN, as (TM/4) x (TN/4) sub-tiles of 4x4
    static constexpr int kStages = STAGES_;
    static constexpr int kMinBlocks = MIN_BLOCKS_;
    static constexpr int kWarpsN = BN / WN, kWarps = (BM / WM) * (BN / WN), kThreads = kWarps * 32;
    // A warp's 32 lanes form kLanesM x kLanesN; sub-tiles of one lane sit WM/(TM/4) and WN/(TN/4) apart.
    static constexpr int kLanesN = WN / TN, kLanesM = 32 / kLanesN;
    static constexpr int kSubM = TM / 4, kSubN = TN / 4;
    static constexpr int kLdA = BM + 4;  // ≡ 4 (mod 32): conflict-free transposing copies, float4-aligned rows
    static constexpr int kStageFloats = BK * kLdA + BK * BN;
    static constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float));
    static constexpr int kGroupM = 8;  // block rows per swizzle group
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
    static_assert(kLanesM * kLanesN == 32 && kLanesM * TM == WM, "TM x TN per lane must cover the warp tile");
    static_assert(BM % 32 == 0 && (BK * kLdA) % 4 == 0 && kStageFloats % 4 == 0, "alignment of the stages");
};

//                         BM   BN  BK  WM  WN  TN stages min blocks/SM
using LargeConfig = Config<128, 256, 16, 64, 64, 16, 3, 1>;  // 256 threads, 254 registers, 74,496 B
using SmallConfig = Config<64, 128, 16, 32, 64, 8, 3, 2>;    // 128 threads, 167 registers, 37,120 B

// Step 9's copy plan: every address a thread copies from or to is computed once, then only advanced by a
// tile per iteration. (The generic loaders of step 8 recompute them per tile: ~100 integer instructions
// per 512 FMAs, over 10% of the issue slots, measured with ncu on the H200.)
template <class C>
struct TileCopier {
    static constexpr int kALoads = C::BM * C::BK / C::kThreads;      // 4-byte copies of A per thread per tile
    static constexpr int kARowStep = C::kThreads / C::BK;            // rows between them
    static constexpr int kBLoads = C::BK * C::BN / 4 / C::kThreads;  // 16-byte copies of B
    static constexpr int kBRowStep = C::kThreads / (C::BN / 4);
    static constexpr unsigned kStageBytes = C::kStageFloats * sizeof(float);
    static_assert(C::kThreads % C::BK == 0 && C::kThreads % (C::BN / 4) == 0 && kALoads >= 1 && kBLoads >= 1,
                  "each thread keeps one k column of A and one 4-column slice of B");

    const float* a_src;     // A(row0 + a_m, k0 + a_k) for the current tile; copy l adds l * kARowStep rows
    const float* b_src;     // B(k0 + b_k, col0 + b_c) for the current tile; copy l adds l * kBRowStep rows
    unsigned a_dst, b_dst;  // their shared addresses in stage 0
    unsigned a_rows_ok;     // bit l: copy l's row of A is inside the matrix
    bool b_vector;          // B's rows are 16-byte aligned and this thread's 4 columns are inside B: one
                            // 16-byte copy per row; else the generic 4-byte copies (edges, odd ldb)

    static __device__ __forceinline__ int a_k_of(int tid) { return tid % C::BK; }
    static __device__ __forceinline__ int b_k_of(int tid) { return tid / (C::BN / 4); }

    __device__ __forceinline__ TileCopier(const Fp32Gemm& p, const float* smem, int row0, int col0, int tid) {
        const int a_k = a_k_of(tid);
        const int a_m = tid / C::BK;
        a_rows_ok = 0;
#pragma unroll
        for (int l = 0; l < kALoads; ++l)
            if (row0 + a_m + l * kARowStep < p.m) a_rows_ok |= 1u << l;
        a_src = p.a + static_cast<size_t>(row0 + a_m) * p.lda + a_k;
        const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
        a_dst = base + (a_k * C::kLdA + a_m) * 4u;

        const int b_k = b_k_of(tid);
        const int b_c = (tid % (C::BN / 4)) * 4;
        b_src = p.b + static_cast<size_t>(b_k) * p.ldb + col0 + b_c;
        b_dst = base + (C::BK * C::kLdA + b_k * C::BN + b_c) * 4u;
        b_vector = kreg_cuda::aligned16(p.b) && p.ldb % 4 == 0 && col0 + b_c + 3 < p.n;
    }

    // Issues the copies of the tile at k0 into `stage` and moves on to the next tile.
    __device__ __forceinline__ void copy(const Fp32Gemm& p, float* smem, int stage, int k0, int col0, int tid) {
        const unsigned stage_offset = stage * kStageBytes;
        const bool k_ok = k0 + a_k_of(tid) < p.k;
#pragma unroll
        for (int l = 0; l < kALoads; ++l) {
            const bool ok = k_ok && ((a_rows_ok >> l) & 1u);
            const float* src = a_src + static_cast<size_t>(l * kARowStep) * p.lda;
            kreg_cuda::cp_async4_at(a_dst + stage_offset + l * kARowStep * 4u, ok ? src : p.a, ok ? 4 : 0);
        }
        if (b_vector) {
#pragma unroll
            for (int l = 0; l < kBLoads; ++l) {
                const bool ok = k0 + b_k_of(tid) + l * kBRowStep < p.k;
                const float* src = b_src + static_cast<size_t>(l * kBRowStep) * p.ldb;
                kreg_cuda::cp_async16_at(b_dst + stage_offset + l * kBRowStep * C::BN * 4u, ok ? src : p.b,
                                         ok ? 16 : 0);
            }
        } else {
            kreg_cuda::async_load_b<C::BK, C::BN, C::kThreads>(smem + stage * C::kStageFloats + C::BK * C::kLdA, p, k0,
                                                               col0, tid);
        }
        a_src += C::BK;
        b_src += static_cast<size_t>(C::BK) * p.ldb;
    }
};

// The block's whole work on tile number `tile` (in the grouped order) of C = alpha * A * B + beta * C, with
// smem the kernel's dynamic shared memory (C::kSmemBytes).
template <class C>
__device__ __forceinline__ void compute_tile(const Fp32Gemm& p, float* smem, int tile) {
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;

    // Grouped block order: consecutive blocks walk down kGroupM block rows before moving right.
    const int tiles_m = (p.m + C::BM - 1) / C::BM, tiles_n = (p.n + C::BN - 1) / C::BN;
    const int blocks_per_group = C::kGroupM * tiles_n;
    const int group = tile / blocks_per_group;
    const int first_tile_m = group * C::kGroupM;
    const int group_rows = min(tiles_m - first_tile_m, C::kGroupM);
    const int in_group = tile % blocks_per_group;
    const int row0 = (first_tile_m + in_group % group_rows) * C::BM;
    const int col0 = (in_group / group_rows) * C::BN;

    // This lane's first sub-tile: warp tile origin plus lane offset, in the block tile.
    const int lane_m = (warp / C::kWarpsN) * C::WM + (lane / C::kLanesN) * 4;
    const int lane_n = (warp % C::kWarpsN) * C::WN + (lane % C::kLanesN) * 4;

    const int k_tiles = (p.k + C::BK - 1) / C::BK;
    TileCopier<C> copier(p, smem, row0, col0, tid);
#pragma unroll
    for (int s = 0; s < C::kStages - 1; ++s) {
        if (s < k_tiles) copier.copy(p, smem, s, s * C::BK, col0, tid);
        kreg_cuda::cp_async_commit();
    }

    float acc[C::TM][C::TN] = {};
    int read_stage = 0, write_stage = C::kStages - 1;
    for (int t = 0; t < k_tiles; ++t) {
        // t + kStages - 1 groups committed; at most kStages - 2 pending means tile t has landed. The
        // barrier publishes it and ensures write_stage (tile t - 1) is no longer read before refilling it.
        kreg_cuda::cp_async_wait<C::kStages - 2>();
        __syncthreads();
        if (t + C::kStages - 1 < k_tiles) copier.copy(p, smem, write_stage, (t + C::kStages - 1) * C::BK, col0, tid);
        kreg_cuda::cp_async_commit();

        const float* as = smem + read_stage * C::kStageFloats;
        const float* bs = as + C::BK * C::kLdA;
#pragma unroll
        for (int kk = 0; kk < C::BK; ++kk) {
            float a[C::TM], b[C::TN];
#pragma unroll
            for (int s = 0; s < C::kSubM; ++s) {
                const float4 v = *reinterpret_cast<const float4*>(as + kk * C::kLdA + lane_m + s * (C::WM / C::kSubM));
                a[4 * s] = v.x, a[4 * s + 1] = v.y, a[4 * s + 2] = v.z, a[4 * s + 3] = v.w;
            }
#pragma unroll
            for (int s = 0; s < C::kSubN; ++s) {
                const float4 v = *reinterpret_cast<const float4*>(bs + kk * C::BN + lane_n + s * (C::WN / C::kSubN));
                b[4 * s] = v.x, b[4 * s + 1] = v.y, b[4 * s + 2] = v.z, b[4 * s + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < C::TM; ++i)
#pragma unroll
                for (int j = 0; j < C::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        read_stage = read_stage + 1 == C::kStages ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == C::kStages ? 0 : write_stage + 1;
    }

#pragma unroll
    for (int i = 0; i < C::TM; ++i) {
        const int row = row0 + lane_m + (i % 4) + (i / 4) * (C::WM / C::kSubM);
#pragma unroll
        for (int s = 0; s < C::kSubN; ++s) {
            const int col = col0 + lane_n + s * (C::WN / C::kSubN);
            kreg_cuda::store_output4(
                p, row, col, make_float4(acc[i][4 * s], acc[i][4 * s + 1], acc[i][4 * s + 2], acc[i][4 * s + 3]));
        }
    }
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks) warptiled_gemm(Fp32Gemm p) {
    extern __shared__ __align__(16) float smem[];
    compute_tile<C>(p, smem, blockIdx.x);
}

// One configuration's launch; opts in to more than 48 KiB of dynamic shared memory once per device.
template <class C>
class ConfigLauncher {
public:
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) {
        if (C::kSmemBytes > 48 * 1024)
            kreg_cuda::allow_dynamic_smem(reinterpret_cast<const void*>(&warptiled_gemm<C>), C::kSmemBytes,
                                          "cuda_09_warptiled", configured_device_);
        const int64_t blocks = int64_t{kreg_cuda::ceil_div(p.m, C::BM)} * kreg_cuda::ceil_div(p.n, C::BN);
        if (blocks > INT_MAX)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "cuda_09_warptiled: " + std::to_string(blocks) +
                                                                " blocks exceed the 1D grid this kernel uses");
        return {&warptiled_gemm<C>, dim3(static_cast<unsigned>(blocks)), dim3(C::kThreads),
                static_cast<unsigned>(C::kSmemBytes)};
    }

private:
    int configured_device_ = -1;
};

class Warptiled final : public kreg_cuda::SimtKernel<Warptiled> {
public:
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec("cuda_09_warptiled",
                                    "128x256 block / 64x64 warp / 8x16 thread tiles, BK 16, 3-stage cp.async, grouped "
                                    "grid (64x128 tiles when the large grid would not fill the GPU)",
                                    80, &model_bytes);
    }

    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) {
        return prefer_small(p.m, p.n, sm_count()) ? small_.plan(p) : large_.plan(p);
    }

private:
    // Which configuration finishes first, if an SM gets through its blocks at one rate whatever their
    // number (compute-bound) and the busiest SM holds ceil(blocks / SMs) of them; the small tile runs at
    // about 0.9 of the large one's rate (measured at 4096³ and 8192³).
    static bool prefer_small(int64_t m, int64_t n, int64_t sms) {
        auto busiest_sm_work = [&](int64_t bm, int64_t bn) {
            const int64_t blocks = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
            return static_cast<double>((blocks + sms - 1) / sms) * static_cast<double>(bm * bn);
        };
        return busiest_sm_work(SmallConfig::BM, SmallConfig::BN) / 0.9 <
               busiest_sm_work(LargeConfig::BM, LargeConfig::BN);
    }

    // The model follows the same choice, with the H200's 132 SMs standing in for the device.
    static double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) {
        return prefer_small(m, n, 132) ? kreg_cuda::block_tile_bytes<SmallConfig::BM, SmallConfig::BN>(m, n, k, dtype)
                                       : kreg_cuda::block_tile_bytes<LargeConfig::BM, LargeConfig::BN>(m, n, k, dtype);
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

    ConfigLauncher<LargeConfig> large_;
    ConfigLauncher<SmallConfig> small_;
    int sm_count_ = 0;
    int sm_count_device_ = -1;
};

}  // namespace kreg_warptiled
