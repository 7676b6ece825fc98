// Step 13 — persistent warp-specialised Hopper GEMM with a tile scheduler, built from step 12 one lever at a time
// (issue 25; README.md records every lever and its numbers, kept or not).
//
// The starting point is step 12's `cuda_12_wgmma_ws_c2` as committed (../12_wgmma_ws/wgmma_ws.cu, whose header
// explains the producer warp, the two consumer warpgroups with setmaxnreg, the persistent grid of one block per SM,
// the clusters of 2 with TMA multicast, the TMA-store epilogue, tf32 as C^T = B^T A^T with B^T from registers, and
// how every shape, pitch and alpha/beta is handled): the code below is that file, changed only where a lever says.
// One kernel, bf16 and tf32:
//   cuda_13_wgmma_persistent
//
// Lever 1 — the tile scheduler's order. Step 12 walks its work units (a cluster's tiles) in groups of 16 tile rows,
// column by column. Here unit u of the persistent walk (block b takes u = b, b + grid, ...) is the u-th unit along
// a generalised Hilbert curve over the unit grid (tile_scheduler.cuh): the units in flight at one time form a
// compact patch, which reads fewer distinct A rows and B columns from L2 per wave on every shape (at 4096^3 and
// 8192^3 the worst wave reads 40 and 46 tile-widths of operands against the bands' 42 and 50:
// tests/unit/tile_scheduler_test.cpp), with no group height to tune. Step 12's profile blames its 8192^3 clock
// (power) on L2 traffic, so the prediction is a small gain there and at 4096^3, none at 1024^3 (one wave).
#include "../cuda_common/gemm_common.cuh"
#include "../cuda_common/sm90.cuh"
#include "../cuda_common/tma_operands.cuh"
#include "../cuda_common/wgmma_ops.cuh"
#include "tile_scheduler.cuh"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

namespace {

using namespace kreg_cuda::sm90;
using kreg_cuda::store_one;  // the alpha/beta epilogue of steps 10-12 (gemm_common.cuh)
using kreg_cuda::store_pair;

struct WsGemm {
    float* c;
    int m, n, k;
    int ldc;
    float alpha, beta;
    bool c_tma;  // beta == 0 and C describable by TMA: the epilogue stores through map_c
};

// kCluster blocks on vertically adjacent tiles share B (the kernel's B: tf32's A rows) by multicast; kClusterN
// blocks on horizontally adjacent tiles share A (tf32: the B^T boxes). At most one of them is above 1.
template <bool kTf32, int BN_, int kCluster_, int kClusterN_ = 1>
struct Config {
    static constexpr bool kIsTf32 = kTf32;
    static constexpr int BM = 128, BN = BN_, kCluster = kCluster_, kClusterN = kClusterN_;
    static constexpr int kCTAs = kCluster * kClusterN;  // blocks per cluster
    static constexpr int kElem = kTf32 ? 4 : 2;
    static constexpr int BK = 128 / kElem;          // one 128-byte swizzle row of k
    static constexpr int kInstrK = kTf32 ? 8 : 16;  // k of one wgmma
    static constexpr int kThreads = 384;            // producer warpgroup + 2 consumer warpgroups
    static constexpr int kConsumerWarps = 8;
    static constexpr int kABytes = BM * 128;  // 16 KiB
    static constexpr int kBChunks = BN / 64, kBChunkBytes = 64 * 128;
    static constexpr int kBBytes = kBChunks * kBChunkBytes;
    static constexpr int kStageBytes = kABytes + kBBytes;
    static constexpr int kMaxSmem = 227 * 1024;  // the sm_90 per-block opt-in limit
    // The epilogue goes through shared memory: per consumer warpgroup 64 x 64 fp32 of C (two TMA boxes of 64
    // rows x 32 columns), stored by TMA while the warpgroup fills the next 64 or starts the next tile.
    static constexpr int kEpiBytes = 2 * 16384;
    static constexpr int kStages = std::min(8, (kMaxSmem - 1024 - 256 - kEpiBytes) / kStageBytes);
    static constexpr int kSmemBytes = 1024 + kStages * kStageBytes + kEpiBytes + 2 * kStages * 8;
    static constexpr int kAcc = BN / 2;
    static constexpr int kKSteps = BK / kInstrK;  // wgmma per k tile (4 in both dtypes)
    static_assert(kCluster == 1 || kBChunks % kCluster == 0, "each block of a cluster loads whole B chunks");
    static_assert(kCluster == 1 || kClusterN == 1, "clusters along one axis only");
    static_assert(kClusterN == 1 || kClusterN == 2, "A (bf16: 2 boxes of 64 rows; tf32: 4 of 32) splits in 2");
    static constexpr int kABoxRows = kTf32 ? 32 : BM / kClusterN;  // rows of one TMA box of the kernel's A
    static_assert(kStages >= 2, "the pipeline needs two stages");
};

// ---------------------------------------------------------------------------------------------------
// Device helpers of this step (the mbarrier, TMA and wgmma primitives are in ../cuda_common/sm90.cuh)

template <class C>
__device__ __forceinline__ void wgmma_bf16(float (&acc)[C::kAcc], uint64_t da, uint64_t db, int scale_d) {
    if constexpr (C::BN == 256)
        wgmma_m64n256k16_bf16(acc, da, db, scale_d);
    else if constexpr (C::BN == 128)
        wgmma_m64n128k16_bf16(acc, da, db, scale_d);
    else
        wgmma_m64n64k16_bf16(acc, da, db, scale_d);
}
template <class C>
__device__ __forceinline__ void wgmma_tf32(float (&acc)[C::kAcc], const uint32_t (&a)[4], uint64_t db, int scale_d) {
    if constexpr (C::BN == 256)
        wgmma_m64n256k8_tf32_rs(acc, a, db, scale_d);
    else if constexpr (C::BN == 128)
        wgmma_m64n128k8_tf32_rs(acc, a, db, scale_d);
    else
        wgmma_m64n64k8_tf32_rs(acc, a, db, scale_d);
}

// tf32 A-operand fragments (this warp's 16 tile rows, one k tile) from the stage's B^T tile, which TMA wrote
// as 4 boxes of 32 k rows x 32 n (128 bytes, 128-byte swizzle: 16-byte chunk c of row k sits at c ^ (k % 8)).
// wgmma's fragment gives lane (g, t4) rows g and g + 8, k t4 and t4 + 4 of each k8 step. Which n a tile row
// stands for is ours to choose (the epilogue undoes it): row g reads chunk cb + 4 (g / 4), row g + 8 the next
// chunk, word g % 4, with cb = 0 or 2 per warp pair. Then each load's 32 lanes hit 32 different banks (the
// chunks {cb, cb + 4} ^ t4 differ for the four t4), where the plain order (rows = 8 consecutive n) would
// collide two ways. Each value is rounded to tf32 (cvt.rna) as the tensor core would truncate it.
__device__ __forceinline__ int tf32_row_n(int w4, int g) { return 4 * (2 * (w4 & 1) + 4 * (g >> 2)) + (g & 3); }

template <class C>
__device__ __forceinline__ void load_tf32_fragments(uint32_t (&f)[C::kKSteps][4], uint32_t box, int n_lo, int t4) {
#pragma unroll
    for (int kk = 0; kk < C::kKSteps; ++kk) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int k = 8 * kk + t4 + 4 * (i >> 1), n = n_lo + 4 * (i & 1);
            const uint32_t addr = box + k * 128 + ((((n >> 2) ^ k) & 7) << 4) + (n & 3) * 4;
            float v;
            asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
            asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(f[kk][i]) : "f"(v));
        }
    }
}

// A consumer warp is done with a stage: it arrives on the stage's "empty" barrier in every block of the cluster
// (each block's producer refills the stage only when all consumers that read its multicast copies are done).
template <class C>
__device__ __forceinline__ void release(uint32_t empty_bar) {
    if constexpr (C::kCTAs > 1) {
#pragma unroll
        for (int r = 0; r < C::kCTAs; ++r) mbar_arrive_cluster(empty_bar, r);
    } else {
        mbar_arrive(empty_bar);
    }
}

// Work unit u (a cluster's tiles: kCluster vertically or kClusterN horizontally adjacent ones) -> its first tile
// row and column: the u-th unit along the Hilbert curve over the unit grid (lever 1, tile_scheduler.cuh).
template <class C>
__device__ __forceinline__ void unit_origin(int u, int unit_rows, int unit_cols, int& tile_m, int& tile_n) {
    int unit_row, unit_col;
    kreg_cuda::step13::hilbert_unit(u, unit_rows, unit_cols, unit_row, unit_col);
    tile_m = unit_row * C::kCluster;
    tile_n = unit_col * C::kClusterN;
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    ws_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_c, WsGemm p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t smem_raw[];
    // Every block of a cluster must see the same offsets (multicast and remote arrivals use them): the
    // dynamic shared window starts at the same place in each block, so aligning the address keeps that.
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const uint32_t epi = base + C::kStages * C::kStageBytes;  // the epilogue's buffers (1024-aligned)
    const uint32_t bars = epi + C::kEpiBytes;
    auto full = [&](int s) { return bars + 8u * s; };
    auto empty = [&](int s) { return bars + 8u * (C::kStages + s); };
    auto stage_a = [&](int s) { return base + static_cast<uint32_t>(s) * C::kStageBytes; };
    auto stage_b = [&](int s) { return stage_a(s) + C::kABytes; };

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const uint32_t rank = C::kCTAs > 1 ? cluster_rank() : 0;
    // This block's tile within its unit: the rank-th row (kCluster > 1) or column (kClusterN > 1) of it.
    const int rank_m = C::kCluster > 1 ? static_cast<int>(rank) : 0;
    const int rank_n = C::kClusterN > 1 ? static_cast<int>(rank) : 0;

    // tf32 computes C^T = B^T A^T (see the top of the file): a tile's rows are columns of C and its columns rows.
    const int rows = C::kIsTf32 ? p.n : p.m, cols = C::kIsTf32 ? p.m : p.n;
    const int tiles_m = (rows + C::BM - 1) / C::BM, tiles_n = (cols + C::BN - 1) / C::BN;
    const int unit_rows = (tiles_m + C::kCluster - 1) / C::kCluster;
    const int unit_cols = (tiles_n + C::kClusterN - 1) / C::kClusterN;
    const int units = unit_rows * unit_cols;
    const int first_unit = blockIdx.x / C::kCTAs, unit_stride = gridDim.x / C::kCTAs;
    const int k_tiles = (p.k + C::BK - 1) / C::BK;

    if (tid == 0) {
        for (int s = 0; s < C::kStages; ++s) {
            mbar_init(full(s), 1);                              // the producer's arrive.expect_tx + bytes
            mbar_init(empty(s), C::kConsumerWarps * C::kCTAs);  // every consumer warp of the cluster
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // The peer's TMA and consumers signal this block's barriers: all must be initialised cluster-wide first.
    if constexpr (C::kCTAs > 1)
        cluster_sync();
    else
        __syncthreads();

    if (warp < 4) {
        // ---- producer warpgroup: one thread issues all copies ----
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_a)) : "memory");
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_b)) : "memory");
            int it = 0;  // k tiles issued by this block so far, over all its tiles
            for (int u = first_unit; u < units; u += unit_stride) {
                int tile_m, tile_n;
                unit_origin<C>(u, unit_rows, unit_cols, tile_m, tile_n);
                const int row0 = (tile_m + rank_m) * C::BM, col0 = (tile_n + rank_n) * C::BN;
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                    const int s = it % C::kStages;
                    // Phase parity of the stage's previous use; a fresh barrier counts as released (parity 1).
                    mbar_wait(empty(s), ((it / C::kStages) & 1) ^ 1);
                    mbar_arrive_expect_tx(full(s), C::kStageBytes);
                    constexpr uint16_t kAll = static_cast<uint16_t>((1u << C::kCTAs) - 1);  // multicast to every block
                    if constexpr (C::kIsTf32) {
                        // B^T's 128 rows are 128 columns of B (K x N, N contiguous): 4 boxes of 32 k x 32 n. With
                        // kClusterN blocks sharing them, each loads 4 / kClusterN boxes for all of them.
#pragma unroll
                        for (int q = 0; q < 4; ++q) {
                            if constexpr (C::kClusterN > 1) {
                                if (q / (4 / C::kClusterN) == rank_n)
                                    tma_load_2d_multicast(stage_a(s) + q * 4096u, &map_a, full(s), row0 + 32 * q,
                                                          kt * C::BK, kAll);
                            } else {
                                tma_load_2d(stage_a(s) + q * 4096u, &map_a, full(s), row0 + 32 * q, kt * C::BK);
                            }
                        }
                    } else if constexpr (C::kClusterN > 1) {
                        // The blocks share A's 128 rows: each loads its kABoxRows of them for all.
                        const int r = rank_n * C::kABoxRows;
                        tma_load_2d_multicast(stage_a(s) + r * 128u, &map_a, full(s), kt * C::BK, row0 + r, kAll);
                    } else {
                        tma_load_2d(stage_a(s), &map_a, full(s), kt * C::BK, row0);
                    }
#pragma unroll
                    for (int j = 0; j < C::kBChunks; ++j) {
                        const uint32_t dst = stage_b(s) + j * C::kBChunkBytes;
                        // bf16 B is K x N (chunk j: columns col0 + 64 j..); tf32's is A^T, i.e. A's rows (M x K).
                        const int c0 = C::kIsTf32 ? kt * C::BK : col0 + 64 * j;
                        const int c1 = C::kIsTf32 ? col0 + 64 * j : kt * C::BK;
                        if constexpr (C::kCluster > 1) {
                            if (j % C::kCluster == static_cast<int>(rank))
                                tma_load_2d_multicast(dst, &map_b, full(s), c0, c1, kAll);
                        } else {
                            tma_load_2d(dst, &map_b, full(s), c0, c1);
                        }
                    }
                }
            }
        }
        __syncwarp();
    } else {
        // ---- consumer warpgroups: wgmma and the epilogue ----
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int wg = warp / 4 - 1;  // rows wg * 64.. of the tile
        const int w4 = warp % 4, g = lane >> 2, t4 = lane & 3;
        const uint32_t a_offset = static_cast<uint32_t>(wg) * 64u * 128u;
        // tf32: this warp's rows of B^T are in box 2 wg + w4 / 2 of the stage, at n tf32_row_n(w4, g) (+ 4).
        const uint32_t frag_box = static_cast<uint32_t>(2 * wg + w4 / 2) * 4096u;
        const int frag_n = tf32_row_n(w4, g);
        float acc[C::kAcc];
        uint32_t frag[C::kKSteps][4];  // tf32: this k tile's A fragments (B^T), loaded from the stage
        int it = 0;
        for (int u = first_unit; u < units; u += unit_stride) {
            int tile_m, tile_n;
            unit_origin<C>(u, unit_rows, unit_cols, tile_m, tile_n);
            const int row0 = (tile_m + rank_m) * C::BM, col0 = (tile_n + rank_n) * C::BN;
            for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                const int s = it % C::kStages;
                mbar_wait(full(s), (it / C::kStages) & 1);
                if constexpr (C::kIsTf32) load_tf32_fragments<C>(frag, stage_a(s) + frag_box, frag_n, t4);
                fence_accumulators(acc);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < C::kKSteps; ++kk) {
                    const int scale_d = (kt > 0 || kk > 0) ? 1 : 0;  // the tile's first product sets acc
                    if constexpr (C::kIsTf32) {
                        wgmma_tf32<C>(acc, frag[kk], smem_desc(stage_b(s) + kk * 32u, 16u, 1024u), scale_d);
                    } else {
                        const uint64_t da = smem_desc(stage_a(s) + a_offset + kk * 32u, 16u, 1024u);
                        wgmma_bf16<C>(acc, da, smem_desc(stage_b(s) + kk * 2048u, C::kBChunkBytes, 1024u), scale_d);
                    }
                }
                wgmma_commit();
                if constexpr (C::kIsTf32) {
                    // The next k tile's fragments overwrite registers this group reads: wait for all of it (ptxas
                    // would otherwise serialise every wgmma, warning C7513). The other consumer warpgroup's group
                    // keeps the tensor core busy meanwhile.
                    wgmma_wait<0>();
                    fence_accumulators(acc);
                    if (lane == 0) release<C>(empty(s));
                } else {
                    wgmma_wait<1>();  // the group of k tile it - 1 is done reading its stage
                    fence_accumulators(acc);
                    if (kt > 0 && lane == 0) release<C>(empty((it - 1) % C::kStages));
                }
            }
            if constexpr (!C::kIsTf32) {
                wgmma_wait<0>();
                fence_accumulators(acc);
                if (lane == 0) release<C>(empty((it - 1) % C::kStages));
            }
            __syncwarp();
            // The producer is already filling the next tile's stages while these stores drain.
            const int row = row0 + wg * 64 + w4 * 16 + g;  // bf16 without TMA: this thread's first row of C
            if (p.c_tma) {
                // 64 tile columns at a time: the warpgroup writes them (alpha applied) into its buffer in the
                // layout of two 128-byte-swizzled TMA boxes of 64 rows x 32 fp32 (a row's 16-byte chunk c sits at
                // c ^ (row % 8)), then one thread stores them with TMA, which clips at C's edges. Nobody waits
                // for the global writes, only (before the buffer is rewritten) for TMA to have read it.
                const uint32_t buf = epi + static_cast<uint32_t>(wg) * 16384u;
                const bool leader = tid % 128 == 0;
#pragma unroll
                for (int q = 0; q < C::BN / 64; ++q) {
                    if (leader) bulk_wait_read();
                    named_barrier(1 + wg, 128);
#pragma unroll
                    for (int jj = 0; jj < 8; ++jj) {
                        const int j = 8 * q + jj, c = 8 * jj + 2 * t4;  // c: tile column within the 64
                        if constexpr (C::kIsTf32) {
                            // Transposed: box w4 / 2 holds this warp's 32 columns of C (n, frag_n and frag_n + 4),
                            // its rows are the tile columns c and c + 1 (rows of C). Two-way bank conflicts.
                            const uint32_t box = buf + (w4 / 2) * 8192u + (frag_n & 3) * 4u;
                            const int ch = frag_n >> 2;
                            auto at = [&](int r, int chunk) { return box + r * 128u + ((chunk ^ (r & 7)) << 4); };
                            st_shared_f32(at(c, ch), p.alpha * acc[4 * j]);
                            st_shared_f32(at(c + 1, ch), p.alpha * acc[4 * j + 1]);
                            st_shared_f32(at(c, ch + 1), p.alpha * acc[4 * j + 2]);
                            st_shared_f32(at(c + 1, ch + 1), p.alpha * acc[4 * j + 3]);
                        } else {
                            // Rows r and r + 8 of the warpgroup's 64 (both r % 8 = g): conflict-free.
                            const int r = w4 * 16 + g;
                            const uint32_t at =
                                buf + (c / 32) * 8192u + r * 128u + ((((c % 32) >> 2) ^ g) << 4) + (c & 3) * 4u;
                            st_shared_v2(at, p.alpha * acc[4 * j], p.alpha * acc[4 * j + 1]);
                            st_shared_v2(at + 8 * 128u, p.alpha * acc[4 * j + 2], p.alpha * acc[4 * j + 3]);
                        }
                    }
                    fence_proxy_async();
                    named_barrier(1 + wg, 128);
                    if (leader) {
                        // Box coordinates are (column, row) of C; tf32's tile rows are C's columns.
                        for (int bx = 0; bx < 2; ++bx) {
                            if constexpr (C::kIsTf32)
                                tma_store_2d(&map_c, buf + bx * 8192u, row0 + 64 * wg + 32 * bx, col0 + 64 * q);
                            else
                                tma_store_2d(&map_c, buf + bx * 8192u, col0 + 64 * q + 32 * bx, row0 + 64 * wg);
                        }
                        bulk_commit();
                    }
                }
            } else if constexpr (C::kIsTf32) {
                // Tile rows are columns of C: this thread's rows g and g + 8 stand for n and n + 4 (tf32_row_n).
                const int n = row0 + 32 * (2 * wg + w4 / 2) + frag_n;
#pragma unroll
                for (int j = 0; j < C::BN / 8; ++j) {
                    const int m = col0 + 8 * j + 2 * t4;
                    store_one(p, m, n, acc[4 * j]);
                    store_one(p, m + 1, n, acc[4 * j + 1]);
                    store_one(p, m, n + 4, acc[4 * j + 2]);
                    store_one(p, m + 1, n + 4, acc[4 * j + 3]);
                }
            } else {
#pragma unroll
                for (int j = 0; j < C::BN / 8; ++j) {
                    const int col = col0 + 8 * j + 2 * t4;
                    store_pair(p, row, col, acc[4 * j], acc[4 * j + 1]);
                    store_pair(p, row + 8, col, acc[4 * j + 2], acc[4 * j + 3]);
                }
            }
        }
        // The block's shared memory must outlive the last TMA stores' reads of it.
        if (p.c_tma && tid % 128 == 0) bulk_wait_all();
    }
    // No block may leave while its peer can still multicast into its shared memory or arrive on its barriers.
    if constexpr (C::kCTAs > 1) cluster_sync();
#else
    __trap();  // built for sm_90a only (CMakeLists.txt); never reached elsewhere
#endif
}

// ---------------------------------------------------------------------------------------------------
// Host side

// Row-major rows x cols of bf16 or fp32 with pitch ld elements, boxes of 128 bytes x box_rows, 128-byte swizzle,
// zero fill outside the matrix.
CUtensorMap make_tensor_map(const void* base, bool fp32, int64_t rows, int64_t cols, int64_t ld, uint32_t box_rows,
                            const char* which) {
    CUtensorMap map;
    const int elem = fp32 ? 4 : 2;
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * elem};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(128 / elem), box_rows};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult r = tensor_map_encoder("cuda_13_wgmma_persistent")(
        &map, fp32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base),
        dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        throw kreg::Error(KREG_STATUS_RUNTIME_ERROR,
                          std::string("cuda_13_wgmma_persistent: cuTensorMapEncodeTiled failed for ") + which +
                              " (CUresult " + std::to_string(static_cast<int>(r)) + ")");
    return map;
}

struct LaunchPlan {
    void (*kernel)(CUtensorMap, CUtensorMap, CUtensorMap, WsGemm);
    int bn, cluster;      // cluster: blocks per cluster
    uint32_t a_box_rows;  // rows of the kernel's A per TMA box (bf16 with clusters sharing A: 64, not 128)
    dim3 grid, block;
    unsigned dynamic_smem;
};

// One configuration's launch facts, measured once per device: how many blocks of it fit on the GPU at once.
struct Resident {
    int device = -1;
    int blocks = 0;
};

template <int kClusterMax>
class WsKernel final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "cuda_13_wgmma_persistent";
        s.description =
            "Step 12's cuda_12_wgmma_ws_c2 (persistent, warp-specialised, clusters of 2 with TMA multicast) with its "
            "work units walked along a generalised Hilbert curve (lever 1, see the README)";
        s.backend = KREG_BACKEND_CUDA;
        s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_BF16) | KREG_DTYPE_BIT(KREG_DTYPE_TF32);
        s.min_compute_capability = 90;  // wgmma, setmaxnreg, TMA multicast: sm_90a, which runs on 9.0 only
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        s.model_global_bytes = &model_bytes;
        return s;
    }

    void run_gemm(const kreg_gemm_args& args) override {
        WsGemm p = ws_gemm(args);
        const bool tf32 = args.dtype == KREG_DTYPE_TF32;
        const LaunchPlan plan = make_plan(p, tf32);
        const cudaStream_t stream = static_cast<cudaStream_t>(args.stream);
        // TMA wants a 16-byte aligned base and row pitch; otherwise work from padded copies (tma_operands.cuh).
        const kreg_cuda::TmaOperands ops = padded_.prepare(args, tf32 ? 4 : 2, stream);
        const void* a = ops.a;
        const void* b = ops.b;
        const int64_t lda = ops.lda, ldb = ops.ldb;
        // The kernel's "A" is the operand whose tile rows are the tile's rows, its "B" the one split in 64-row (tf32)
        // or 64-column (bf16) chunks across a cluster. bf16: A (boxes of 128 rows x 64 k) and B (64 k x 64 n).
        // tf32 (C^T = B^T A^T): B, read MN-major in boxes of 32 k x 32 n, and A, K-major in boxes of 64 rows x 32 k.
        const CUtensorMap map_a = tf32 ? make_tensor_map(b, true, args.k, args.n, ldb, 32, "B")
                                       : make_tensor_map(a, false, args.m, args.k, lda, plan.a_box_rows, "A");
        const CUtensorMap map_b = tf32 ? make_tensor_map(a, true, args.m, args.k, lda, 64, "A")
                                       : make_tensor_map(b, false, args.k, args.n, ldb, 64, "B");
        // C is stored by TMA (boxes of 64 rows x 32 columns) when it need not be read and TMA can describe it;
        // otherwise (beta != 0, odd pitch) the epilogue stores from registers, testing each element's place.
        CUtensorMap map_c = {};
        p.c_tma = p.beta == 0.0f && kreg_cuda::PaddedOperands::aligned16(args.c) && args.ldc % 4 == 0;
        if (p.c_tma) map_c = make_tensor_map(args.c, true, args.m, args.n, args.ldc, 64, "C");

        cudaLaunchConfig_t config = {};
        config.gridDim = plan.grid;
        config.blockDim = plan.block;
        config.dynamicSmemBytes = plan.dynamic_smem;
        config.stream = stream;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = static_cast<unsigned>(plan.cluster);
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        config.attrs = attr;
        config.numAttrs = 1;
        KREG_CUDA_CHECK(cudaLaunchKernelEx(&config, plan.kernel, map_a, map_b, map_c, p));
        KREG_CUDA_CHECK_LAUNCH();
    }

    bool describe_launch(const kreg_gemm_args& args, kreg_launch_info& info) override {
        const LaunchPlan plan = make_plan(ws_gemm(args), args.dtype == KREG_DTYPE_TF32);
        kreg_cuda::fill_launch_info(plan, info);
        return true;
    }

    // The row's extra.variant (ABI 1.2): which of choose()'s configurations runs, so a sweep's rows say which tile
    // and cluster each ratio belongs to.
    std::string describe_variant(const kreg_gemm_args& args) override {
        const LaunchPlan plan = make_plan(ws_gemm(args), args.dtype == KREG_DTYPE_TF32);
        const bool shares_a = plan.bn == 64 && plan.cluster > 1;
        return "128x" + std::to_string(plan.bn) + " tiles, " +
               (plan.cluster > 1 ? std::string("clusters of 2 sharing ") + (shares_a ? "A" : "B")
                                 : std::string("no clusters")) +
               ", Hilbert order, " + std::to_string(plan.grid.x) + " blocks";
    }

private:
    static WsGemm ws_gemm(const kreg_gemm_args& args) {
        kreg_cuda::check_gemm_args(args, KREG_DTYPE_BIT(KREG_DTYPE_BF16) | KREG_DTYPE_BIT(KREG_DTYPE_TF32),
                                   "cuda_13_wgmma_persistent computes bf16 and tf32 only");
        WsGemm p;
        p.c = static_cast<float*>(args.c);
        p.m = static_cast<int>(args.m);
        p.n = static_cast<int>(args.n);
        p.k = static_cast<int>(args.k);
        p.ldc = static_cast<int>(args.ldc);
        p.alpha = static_cast<float>(args.alpha);
        p.beta = static_cast<float>(args.beta);
        p.c_tma = false;  // run_gemm decides, once it has built the map
        return p;
    }

    // Raises the configuration's shared-memory limit and counts how many of its blocks (in clusters) fit at once.
    template <class C>
    int resident_blocks(Resident& r, int device) {
        if (r.device == device) return r.blocks;
        const void* fn = reinterpret_cast<const void*>(&ws_gemm_kernel<C>);
        int configured = -1;
        kreg_cuda::allow_dynamic_smem(fn, C::kSmemBytes, "cuda_13_wgmma_persistent", configured);
        int blocks = sms_;
        if constexpr (C::kCTAs > 1) {
            cudaLaunchConfig_t config = {};
            config.gridDim = dim3(static_cast<unsigned>(sms_ / C::kCTAs * C::kCTAs));
            config.blockDim = dim3(C::kThreads);
            config.dynamicSmemBytes = C::kSmemBytes;
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim.x = C::kCTAs;
            attr[0].val.clusterDim.y = 1;
            attr[0].val.clusterDim.z = 1;
            config.attrs = attr;
            config.numAttrs = 1;
            int clusters = 0;
            KREG_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, fn, &config));
            if (clusters < 1)
                throw kreg::Error(KREG_STATUS_UNSUPPORTED, "cuda_13_wgmma_persistent: no cluster of " +
                                                               std::to_string(C::kCTAs) + " blocks fits on this GPU");
            blocks = clusters * C::kCTAs;
        }
        r.device = device;
        r.blocks = blocks;
        return blocks;
    }

    template <class C>
    LaunchPlan plan_for(const WsGemm& p, Resident& r, int device) {
        const int resident = resident_blocks<C>(r, device);
        const int rows = C::kIsTf32 ? p.n : p.m, cols = C::kIsTf32 ? p.m : p.n;  // tf32 tiles C^T (see the kernel)
        const int64_t tiles_m = kreg_cuda::ceil_div(rows, C::BM), tiles_n = kreg_cuda::ceil_div(cols, C::BN);
        const int64_t units = (tiles_m + C::kCluster - 1) / C::kCluster * ((tiles_n + C::kClusterN - 1) / C::kClusterN);
        if (units * C::kCTAs > INT_MAX)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "cuda_13_wgmma_persistent: too many tiles");
        const int64_t blocks = std::min<int64_t>(units * C::kCTAs, resident / C::kCTAs * C::kCTAs);
        return {&ws_gemm_kernel<C>,
                C::BN,
                C::kCTAs,
                static_cast<uint32_t>(C::kABoxRows),
                dim3(static_cast<unsigned>(blocks)),
                dim3(C::kThreads),
                static_cast<unsigned>(C::kSmemBytes)};
    }

    // The widest tile whose count fills the SMs' waves well (>= 80 %: 1024^3 gets 128x64 tiles, one per SM;
    // 2048^3 and up 128x256); when none does, the one that fills them best.
    template <bool kTf32>
    LaunchPlan choose(const WsGemm& p, int device) {
        using Wide = Config<kTf32, 256, kClusterMax>;
        using Mid = Config<kTf32, 128, kClusterMax>;
        // 128x64 tiles have one B chunk to share; a cluster of two shares A instead (as cuBLAS's
        // nvjet_sm90_tss_128x64_64x8_1x2 does at 1024^3), but only where the tiles make more than one wave: on the
        // H200 that made 4097x1025x2049 1.3x (bf16) and 1.2x (tf32) faster, while one wave or less (1024^3, 517^3)
        // ran 3-6 % slower in clusters (README.md, "128x64 tiles in clusters").
        using Narrow = Config<kTf32, 64, 1>;
        using NarrowShared = Config<kTf32, 64, 1, kClusterMax>;
        const int rows = kTf32 ? p.n : p.m, cols = kTf32 ? p.m : p.n;  // tf32 tiles C^T (see the kernel)
        auto fill = [&](int bn) {
            const double tiles = static_cast<double>(kreg_cuda::ceil_div(rows, 128)) * kreg_cuda::ceil_div(cols, bn);
            const double waves = std::ceil(tiles / sms_);
            return tiles / (waves * sms_);
        };
        const double f256 = fill(256), f128 = fill(128), f64 = fill(64);
        Resident* r = kTf32 ? resident_tf32_ : resident_bf16_;
        if (f256 >= 0.8 || (f256 >= f128 && f256 >= f64)) return plan_for<Wide>(p, r[0], device);
        if (f128 >= 0.8 || f128 >= f64) return plan_for<Mid>(p, r[1], device);
        const int64_t narrow_tiles =
            static_cast<int64_t>(kreg_cuda::ceil_div(rows, 128)) * kreg_cuda::ceil_div(cols, 64);
        if (kClusterMax > 1 && narrow_tiles > sms_) return plan_for<NarrowShared>(p, r[3], device);
        return plan_for<Narrow>(p, r[2], device);
    }

    LaunchPlan make_plan(const WsGemm& p, bool tf32) {
        int device = 0;
        KREG_CUDA_CHECK(cudaGetDevice(&device));
        if (device != sm_device_) {
            int major = 0, minor = 0;
            KREG_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
            KREG_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
            if (major != 9 || minor != 0)
                throw kreg::Error(
                    KREG_STATUS_UNSUPPORTED,
                    "cuda_13_wgmma_persistent is built for sm_90a (wgmma, setmaxnreg), which runs on compute "
                    "capability 9.0 only; device " +
                        std::to_string(device) + " is " + std::to_string(major) + "." + std::to_string(minor));
            KREG_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
            sm_device_ = device;
        }
        return tf32 ? choose<true>(p, device) : choose<false>(p, device);
    }

    // Tiles of 128 x 256 (bf16: 128 rows of C x 256 columns; tf32: 128 columns x 256 rows): bf16 reads A
    // ceil(N/256) times and B ceil(M/128) times, tf32 A ceil(N/128) and B ceil(M/256) times (the multicast
    // halves one operand's L2 reads, not these device-memory bytes); C written once in fp32. Copies of
    // misaligned inputs are not modelled.
    static double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) {
        const bool tf32 = dtype == KREG_DTYPE_TF32;
        const double e = tf32 ? 4.0 : 2.0;
        const double reads_of_a = static_cast<double>(tf32 ? (n + 127) / 128 : (n + 255) / 256);
        const double reads_of_b = static_cast<double>(tf32 ? (m + 255) / 256 : (m + 127) / 128);
        return e * (static_cast<double>(m) * k * reads_of_a + static_cast<double>(k) * n * reads_of_b) +
               4.0 * static_cast<double>(m) * n;
    }

    kreg_cuda::PaddedOperands padded_;  // copies of A and B that TMA cannot read as they are
    int sm_device_ = -1;
    int sms_ = 0;
    Resident resident_bf16_[4];  // per configuration of choose(): Wide, Mid, Narrow, NarrowShared
    Resident resident_tf32_[4];
};

}  // namespace

KREG_PLUGIN("cuda_13_wgmma_persistent", "0.1.0", WsKernel<2>)
