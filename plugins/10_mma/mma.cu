// Step 10 — tensor cores through warp-level mma.sync: the Ampere-style kernel, the step after warp tiling.
//
// One kernel, cuda_10_mma, for two dtypes (args.dtype picks the instantiation):
//   bf16  A and B are bf16 (2-byte elements), C fp32; mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32, so the
//         accumulation is fp32 inside the tensor core. Fragments come from shared memory with ldmatrix
//         (A plain, B with .trans because B is stored k-major, row by row).
//   tf32  A, B and C fp32; mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32. The tensor core reads only the top
//         19 bits of each operand register, so every fragment element is first rounded to nearest with
//         cvt.rna.tf32.f32 (without it the hardware truncates). Fragments are plain 32-bit shared loads:
//         ldmatrix moves 16-bit pairs, and the tf32 fragments want one 32-bit element per register.
//
// What is new against step 9 (the SIMT warp tiling, 128 FMAs per k step per lane): one mma.sync does
// 16x8x16 (bf16) or 16x8x8 (tf32) multiply-adds for a whole warp, so the warp tile stays the unit of
// work but the thread tile disappears into the fragment layouts the PTX ISA fixes:
//   A 16x16 bf16: reg0 (g, 2t..2t+1), reg1 (g+8, 2t..), reg2 (g, 2t+8..), reg3 (g+8, 2t+8..)
//   B 16x8  bf16: reg0 (k 2t..2t+1, n g), reg1 (k 2t+8.., n g)
//   A 16x8  tf32: reg0 (g, t), reg1 (g+8, t), reg2 (g, t+4), reg3 (g+8, t+4)
//   B 8x8   tf32: reg0 (k t, n g), reg1 (k t+4, n g)
//   C 16x8  f32:  c0,c1 (g, 2t..2t+1), c2,c3 (g+8, 2t..2t+1)
// with g = lane / 4 (the group) and t = lane % 4 (the thread in the group).
//
// Tiles: 128x128 per block, 4 warps as 2 (M) x 2 (N), 64x64 per warp = 4 x 8 mma tiles, 128 fp32
// accumulators per lane (248 registers with bf16, 240 with tf32, no spills; two blocks per SM). Why 64x64
// and not 64x32 with twice the warps: per k16 step a 64x64 warp tile reads 4 KB of shared memory for 32
// mma (32 FLOP/B), a 64x32 one 3 KB for 16 (21 FLOP/B), and shared-memory bandwidth (128 B/clock/SM) is
// what feeds mma.sync; 4 ldmatrix.x4 for A and 4 .trans for B serve 32 mma instead of 6 for 16. K steps of 32 (bf16) or 16 (tf32) elements, i.e. 64 bytes of a row of A per
// stage either way; 3 stages of cp.async (56,832 B of shared memory, opted in). Shared rows are padded
// (A by 16 bytes, B by 16 bytes) so that ldmatrix's eight 16-byte row reads and the tf32 fragment loads
// fall in distinct banks: A's row pitch is 80 B (20 words: rows land 20 words apart, mod 32 all
// different 4-word groups), B's 272 B (68 words = 4 mod 32).
//
// Edges: any M, N, K >= 1, any lda, ldb, ldc. A 16-byte chunk (8 bf16 or 4 fp32) goes by cp.async when
// it lies wholly inside the matrix and is 16-byte aligned; a chunk wholly outside is written as zeros by
// the thread itself; a chunk across an edge or misaligned is loaded element by element (zeros outside)
// and stored to shared memory by the thread itself. Zeros contribute nothing to the products,
// so the main loop never tests a bound. The epilogue stores pairs (float2) where aligned and in range,
// else single elements, and never writes outside M x N. C = alpha * acc + beta * C, C read only if beta != 0.
#include "../cuda_common/gemm_common.cuh"

#include <climits>
#include <cstdint>

namespace {

// Kernel parameters (by value). a and b are bf16 bits (uint16_t) or fp32 according to the instantiation.
struct MmaGemm {
    const void* a;
    const void* b;
    float* c;
    int m, n, k;
    int lda, ldb, ldc;
    float alpha, beta;
};

MmaGemm mma_gemm(const kreg_gemm_args& args) {
    if (args.struct_size < sizeof(kreg_gemm_args))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_gemm_args.struct_size is smaller than this plugin's ABI");
    if (args.dtype != KREG_DTYPE_BF16 && args.dtype != KREG_DTYPE_TF32)
        throw kreg::Error(KREG_STATUS_UNSUPPORTED, "cuda_10_mma computes bf16 and tf32 only");
    if (args.m < 1 || args.n < 1 || args.k < 1)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n and k must be >= 1");
    constexpr int64_t kMax = kreg_cuda::kMaxDim;
    if (args.m > kMax || args.n > kMax || args.k > kMax || args.lda > kMax || args.ldb > kMax || args.ldc > kMax)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n, k and leading dimensions must be <= 2^30");
    if (args.lda < args.k || args.ldb < args.n || args.ldc < args.n)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                          "leading dimensions must be >= the row length (lda>=k, ldb>=n, ldc>=n)");
    if (args.a == nullptr || args.b == nullptr || args.c == nullptr)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
    MmaGemm p;
    p.a = args.a;
    p.b = args.b;
    p.c = static_cast<float*>(args.c);
    p.m = static_cast<int>(args.m);
    p.n = static_cast<int>(args.n);
    p.k = static_cast<int>(args.k);
    p.lda = static_cast<int>(args.lda);
    p.ldb = static_cast<int>(args.ldb);
    p.ldc = static_cast<int>(args.ldc);
    p.alpha = static_cast<float>(args.alpha);
    p.beta = static_cast<float>(args.beta);
    return p;
}

// Per-dtype constants. Elem is the storage type of A and B; a 16-byte chunk holds kChunk of them.
struct Bf16Traits {
    using Elem = uint16_t;
    static constexpr int BK = 32;  // two m16n8k16 steps per stage
    static constexpr int kMmaK = 16;
};
struct Tf32Traits {
    using Elem = float;
    static constexpr int BK = 16;  // two m16n8k8 steps per stage
    static constexpr int kMmaK = 8;
};

template <class T>
struct Config {
    using Elem = typename T::Elem;
    static constexpr int BM = 128, BN = 128, BK = T::BK;
    static constexpr int WM = 64, WN = 64;                     // warp tile
    static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;  // 2 x 2
    static constexpr int kThreads = kWarpsM * kWarpsN * 32;     // 128
    static constexpr int kMTiles = WM / 16, kNTiles = WN / 8;   // 4 x 8 mma tiles per warp
    static constexpr int kStages = 3;
    static constexpr int kChunk = 16 / static_cast<int>(sizeof(Elem));  // elements per 16-byte copy
    static constexpr int kLdA = BK + kChunk;  // shared row pitch of A in elements: 80 bytes
    static constexpr int kLdB = BN + kChunk;  // of B: 272 bytes
    static constexpr int kStageElems = BM * kLdA + BK * kLdB;
    static constexpr int kSmemBytes = kStages * kStageElems * static_cast<int>(sizeof(Elem));
    static constexpr int kGroupM = 8;  // block rows per grid swizzle group (as in step 9)
    // Copies per thread per stage.
    static constexpr int kAChunksPerRow = BK / kChunk, kBChunksPerRow = BN / kChunk;
    static constexpr int kALoads = BM * kAChunksPerRow / kThreads;
    static constexpr int kBLoads = BK * kBChunksPerRow / kThreads;
    static_assert(kALoads * kThreads == BM * kAChunksPerRow && kBLoads * kThreads == BK * kBChunksPerRow,
                  "tiles must split evenly into 16-byte chunks over the threads");
    static_assert(BK % T::kMmaK == 0 && (kLdA * sizeof(Elem)) % 16 == 0 && (kLdB * sizeof(Elem)) % 16 == 0,
                  "ldmatrix and cp.async need 16-byte aligned shared rows");
};

// ---------------------------------------------------------------------------------------------------
// Device helpers

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies the 16-byte chunk of a row-major matrix (rows x cols, ld) that starts at (row, col) into shared
// memory at dst: cp.async when the chunk is inside and aligned (vec_ok says the matrix rows allow it),
// zeros when it is wholly outside, element by element (zeros past the edge) otherwise.
template <class Elem>
__device__ __forceinline__ void copy_chunk(Elem* dst, const Elem* base, int ld, int row, int col, int rows, int cols,
                                           bool vec_ok) {
    constexpr int kChunk = 16 / static_cast<int>(sizeof(Elem));
    if (row >= rows || col >= cols) {
        // A plain shared store of zeros: no global address is formed at all (a zero-size cp.async would still
        // want a 16-byte aligned source, which the matrix's base need not be).
        *reinterpret_cast<uint4*>(dst) = make_uint4(0u, 0u, 0u, 0u);
        return;
    }
    const Elem* src = base + static_cast<size_t>(row) * ld + col;
    if (vec_ok && col + kChunk <= cols) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
        return;
    }
    alignas(16) Elem v[kChunk];
#pragma unroll
    for (int e = 0; e < kChunk; ++e) v[e] = col + e < cols ? src[e] : Elem(0);
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

// The stage's A tile (BM x BK at row0, k0) and B tile (BK x BN at k0, col0).
template <class C>
__device__ __forceinline__ void load_stage(typename C::Elem* stage, const MmaGemm& p, int row0, int col0, int k0,
                                           int tid, bool a_vec, bool b_vec) {
    using Elem = typename C::Elem;
    const Elem* a = static_cast<const Elem*>(p.a);
    const Elem* b = static_cast<const Elem*>(p.b);
    Elem* as = stage;
    Elem* bs = stage + C::BM * C::kLdA;
#pragma unroll
    for (int l = 0; l < C::kALoads; ++l) {
        const int id = tid + l * C::kThreads;
        const int r = id / C::kAChunksPerRow, c = (id % C::kAChunksPerRow) * C::kChunk;
        copy_chunk(as + r * C::kLdA + c, a, p.lda, row0 + r, k0 + c, p.m, p.k, a_vec);
    }
#pragma unroll
    for (int l = 0; l < C::kBLoads; ++l) {
        const int id = tid + l * C::kThreads;
        const int r = id / C::kBChunksPerRow, c = (id % C::kBChunksPerRow) * C::kChunk;
        copy_chunk(bs + r * C::kLdB + c, b, p.ldb, k0 + r, col0 + c, p.k, p.n, b_vec);
    }
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// fp32 -> tf32, round to nearest (ties away from zero); the result is an fp32 bit pattern whose low 13
// mantissa bits are zero.
__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// One stage's worth of mma for this warp: acc[mi][ni] += A(warp rows, stage k) * B(stage k, warp cols).
template <class C>
__device__ __forceinline__ void compute_stage(float (&acc)[C::kMTiles][C::kNTiles][4], const uint16_t* as,
                                              const uint16_t* bs, int warp_m, int warp_n, int lane) {
    // bf16: ldmatrix.x4 gives a whole 16x16 A fragment; lanes 0-15 address rows 0-15 at k 0, lanes 16-31
    // the same rows at k 8 (matrices 0..3 = rows 0-7/8-15 x k 0-7/8-15, i.e. reg0..reg3 above).
    // ldmatrix.x4.trans on B (stored [k][n]) gives two n8 fragments: matrices (k 0-7, n 0-7),
    // (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15); transposed, each lane holds (k 2t.., n g).
#pragma unroll
    for (int kk = 0; kk < C::BK; kk += 16) {
        // All of the warp's B fragments, then one A fragment at a time: fewer live registers than holding
        // both sets (the 128 accumulators already take half of the 255 a thread may have).
        unsigned b[C::kNTiles][2];
#pragma unroll
        for (int nj = 0; nj < C::kNTiles / 2; ++nj) {
            unsigned r[4];
            ldmatrix_x4_trans(r, bs + (kk + (lane & 15)) * C::kLdB + warp_n * C::WN + nj * 16 + (lane >> 4) * 8);
            b[2 * nj][0] = r[0];
            b[2 * nj][1] = r[1];
            b[2 * nj + 1][0] = r[2];
            b[2 * nj + 1][1] = r[3];
        }
#pragma unroll
        for (int mi = 0; mi < C::kMTiles; ++mi) {
            unsigned a[4];
            ldmatrix_x4(a, as + (warp_m * C::WM + mi * 16 + (lane & 15)) * C::kLdA + kk + (lane >> 4) * 8);
#pragma unroll
            for (int ni = 0; ni < C::kNTiles; ++ni) mma_bf16(acc[mi][ni], a, b[ni][0], b[ni][1]);
        }
    }
}

template <class C>
__device__ __forceinline__ void compute_stage(float (&acc)[C::kMTiles][C::kNTiles][4], const float* as,
                                              const float* bs, int warp_m, int warp_n, int lane) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int kk = 0; kk < C::BK; kk += 8) {
        unsigned b[C::kNTiles][2];
#pragma unroll
        for (int ni = 0; ni < C::kNTiles; ++ni) {
            const float* base = bs + (kk + t) * C::kLdB + warp_n * C::WN + ni * 8 + g;
            b[ni][0] = to_tf32(base[0]);             // (k t,     n g)
            b[ni][1] = to_tf32(base[4 * C::kLdB]);   // (k t + 4, n g)
        }
#pragma unroll
        for (int mi = 0; mi < C::kMTiles; ++mi) {
            const float* base = as + (warp_m * C::WM + mi * 16 + g) * C::kLdA + kk + t;
            unsigned a[4];
            a[0] = to_tf32(base[0]);                 // (g,     t)
            a[1] = to_tf32(base[8 * C::kLdA]);       // (g + 8, t)
            a[2] = to_tf32(base[4]);                 // (g,     t + 4)
            a[3] = to_tf32(base[8 * C::kLdA + 4]);   // (g + 8, t + 4)
#pragma unroll
            for (int ni = 0; ni < C::kNTiles; ++ni) mma_tf32(acc[mi][ni], a, b[ni][0], b[ni][1]);
        }
    }
}

__device__ __forceinline__ float epilogue(const MmaGemm& p, const float* out, float acc) {
    const float v = p.alpha * acc;
    return p.beta != 0.0f ? fmaf(p.beta, *out, v) : v;
}

// Stores (row, col) and (row, col + 1) of C, the parts inside C only.
__device__ __forceinline__ void store_pair(const MmaGemm& p, int row, int col, float v0, float v1) {
    if (row >= p.m || col >= p.n) return;
    float* out = p.c + static_cast<size_t>(row) * p.ldc + col;
    if (col + 1 < p.n && (reinterpret_cast<uintptr_t>(out) & 7u) == 0) {
        float2 v;
        v.x = epilogue(p, out, v0);
        v.y = epilogue(p, out + 1, v1);
        *reinterpret_cast<float2*>(out) = v;
        return;
    }
    out[0] = epilogue(p, out, v0);
    if (col + 1 < p.n) out[1] = epilogue(p, out + 1, v1);
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 2) mma_gemm_kernel(MmaGemm p) {
    using Elem = typename C::Elem;
    extern __shared__ uint4 smem_raw[];  // uint4: 16-byte aligned, one declaration for every instantiation
    Elem* smem = reinterpret_cast<Elem*>(smem_raw);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp / C::kWarpsN, warp_n = warp % C::kWarpsN;

    // Grouped block order (as in step 9): consecutive blocks walk down kGroupM block rows, sharing B's panel.
    const int tiles_m = (p.m + C::BM - 1) / C::BM, tiles_n = (p.n + C::BN - 1) / C::BN;
    const int blocks_per_group = C::kGroupM * tiles_n;
    const int group = blockIdx.x / blocks_per_group;
    const int first_tile_m = group * C::kGroupM;
    const int group_rows = min(tiles_m - first_tile_m, C::kGroupM);
    const int in_group = blockIdx.x % blocks_per_group;
    const int row0 = (first_tile_m + in_group % group_rows) * C::BM;
    const int col0 = (in_group / group_rows) * C::BN;

    // 16-byte copies need 16-byte aligned rows: the base and the pitch both.
    const bool a_vec = kreg_cuda::aligned16(p.a) && (p.lda % C::kChunk) == 0;
    const bool b_vec = kreg_cuda::aligned16(p.b) && (p.ldb % C::kChunk) == 0;

    const int k_tiles = (p.k + C::BK - 1) / C::BK;
#pragma unroll
    for (int s = 0; s < C::kStages - 1; ++s) {
        if (s < k_tiles) load_stage<C>(smem + s * C::kStageElems, p, row0, col0, s * C::BK, tid, a_vec, b_vec);
        kreg_cuda::cp_async_commit();
    }

    float acc[C::kMTiles][C::kNTiles][4] = {};
    int read_stage = 0, write_stage = C::kStages - 1;
    for (int t = 0; t < k_tiles; ++t) {
        // t + kStages - 1 groups are committed; at most kStages - 2 pending means tile t's copies landed.
        // The barrier publishes them (and the element-wise stores of edge chunks) to every warp, and makes
        // sure no warp still reads write_stage (tile t - 1) before it is refilled below.
        kreg_cuda::cp_async_wait<C::kStages - 2>();
        __syncthreads();
        if (t + C::kStages - 1 < k_tiles)
            load_stage<C>(smem + write_stage * C::kStageElems, p, row0, col0, (t + C::kStages - 1) * C::BK, tid,
                          a_vec, b_vec);
        kreg_cuda::cp_async_commit();

        const Elem* as = smem + read_stage * C::kStageElems;
        compute_stage<C>(acc, as, as + C::BM * C::kLdA, warp_m, warp_n, lane);
        read_stage = read_stage + 1 == C::kStages ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == C::kStages ? 0 : write_stage + 1;
    }
    // Nothing may still be writing shared memory when the block exits (the last groups are empty).
    kreg_cuda::cp_async_wait<0>();

    const int g = lane >> 2, t4 = lane & 3;
#pragma unroll
    for (int mi = 0; mi < C::kMTiles; ++mi) {
        const int row = row0 + warp_m * C::WM + mi * 16 + g;
#pragma unroll
        for (int ni = 0; ni < C::kNTiles; ++ni) {
            const int col = col0 + warp_n * C::WN + ni * 8 + 2 * t4;
            store_pair(p, row, col, acc[mi][ni][0], acc[mi][ni][1]);
            store_pair(p, row + 8, col, acc[mi][ni][2], acc[mi][ni][3]);
        }
    }
}

using Bf16Config = Config<Bf16Traits>;
using Tf32Config = Config<Tf32Traits>;

struct LaunchPlan {
    void (*kernel)(MmaGemm);
    dim3 grid, block;
    unsigned dynamic_smem;
};

class Mma final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "cuda_10_mma";
        s.description =
            "mma.sync tensor cores: bf16 m16n8k16 with ldmatrix, tf32 m16n8k8 (cvt.rna); 128x128 block, "
            "64x64 warp tiles, 3-stage cp.async";
        s.backend = KREG_BACKEND_CUDA;
        s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_BF16) | KREG_DTYPE_BIT(KREG_DTYPE_TF32);
        s.min_compute_capability = 80;  // mma.sync with bf16/tf32, ldmatrix and cp.async are sm_80
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        s.model_global_bytes = &model_bytes;
        return s;
    }

    void run_gemm(const kreg_gemm_args& args) override {
        const MmaGemm p = mma_gemm(args);
        const LaunchPlan plan = make_plan(p, args.dtype);
        plan.kernel<<<plan.grid, plan.block, plan.dynamic_smem, static_cast<cudaStream_t>(args.stream)>>>(p);
        KREG_CUDA_CHECK_LAUNCH();
    }

    bool describe_launch(const kreg_gemm_args& args, kreg_launch_info& info) override {
        const LaunchPlan plan = make_plan(mma_gemm(args), args.dtype);
        info.device_function = reinterpret_cast<const void*>(plan.kernel);
        info.grid[0] = plan.grid.x;
        info.grid[1] = plan.grid.y;
        info.grid[2] = plan.grid.z;
        info.block[0] = plan.block.x;
        info.block[1] = plan.block.y;
        info.block[2] = plan.block.z;
        info.dynamic_shared_bytes = plan.dynamic_smem;
        return true;
    }

private:
    template <class C>
    LaunchPlan plan_for(const MmaGemm& p, int& configured_device) {
        kreg_cuda::allow_dynamic_smem(reinterpret_cast<const void*>(&mma_gemm_kernel<C>), C::kSmemBytes,
                                      "cuda_10_mma", configured_device);
        const int64_t blocks = int64_t{kreg_cuda::ceil_div(p.m, C::BM)} * kreg_cuda::ceil_div(p.n, C::BN);
        if (blocks > INT_MAX)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                              "cuda_10_mma: " + std::to_string(blocks) + " blocks exceed the 1D grid this kernel uses");
        return {&mma_gemm_kernel<C>, dim3(static_cast<unsigned>(blocks)), dim3(C::kThreads),
                static_cast<unsigned>(C::kSmemBytes)};
    }

    LaunchPlan make_plan(const MmaGemm& p, kreg_dtype dtype) {
        return dtype == KREG_DTYPE_BF16 ? plan_for<Bf16Config>(p, bf16_device_) : plan_for<Tf32Config>(p, tf32_device_);
    }

    // Block-tile traffic: A read ceil(N/128) times and B ceil(M/128) times, in their storage type; C written
    // once in fp32.
    static double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) {
        const double in_bytes = dtype == KREG_DTYPE_BF16 ? 2.0 : 4.0;
        const double reads_of_a = static_cast<double>((n + 127) / 128);
        const double reads_of_b = static_cast<double>((m + 127) / 128);
        return in_bytes * (static_cast<double>(m) * k * reads_of_a + static_cast<double>(k) * n * reads_of_b) +
               4.0 * static_cast<double>(m) * n;
    }

    int bf16_device_ = -1;
    int tf32_device_ = -1;
};

}  // namespace

KREG_PLUGIN("cuda_10_mma", "1.0.0", Mma)
