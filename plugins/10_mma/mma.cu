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
// Tiles: 256x128 per block, 8 warps as 4 (M) x 2 (N), 64x64 per warp = 4 x 8 mma tiles, 128 fp32
// accumulators per lane; one block (8 warps) per SM, __launch_bounds__(256, 1), so a thread may use 255
// registers. Why 64x64 per warp and not 64x32 with twice the warps: per k16 step a 64x64 warp tile reads
// 4 KB of shared memory for 32 mma (32 FLOP/B), a 64x32 one 3 KB for 16 (21 FLOP/B), and shared-memory
// bandwidth (128 B/clock/SM) is what feeds mma.sync. Why 256x128 per block and not 128x128 with 4 warps:
// each element brought into shared memory serves twice the mma (B is read M/256 times, not M/128), and
// the one barrier per stage is shared by 8 warps. (128x256 measured 2-3 % slower at 4096^3 and 8192^3.)
//
// Latency hiding, the other half of the step. Two warps per SM sub-partition are too few to hide the
// ldmatrix -> mma dependency by switching warps, so each warp hides it itself:
//   - the fragments are double-buffered in registers: while the mma of k step s run, the ldmatrix of
//     step s + 1 are already in flight (2 x 32 registers on top of the 128 accumulators);
//   - 4 stages of cp.async (K steps of 32 bf16 or 16 fp32, i.e. 64 bytes of a row of A per stage) and one
//     __syncthreads per stage, placed before the last k step's mma so that those overlap the barrier;
//   - blocks whose every stage lies inside the matrices (16-byte aligned rows, K a multiple of BK) run a
//     copy loop with no bound test at all (main_loop<C, false>); only edge blocks pay for the checks below.
//
// Shared memory is swizzled instead of padded: a 16-byte chunk c of row r is stored at chunk c ^ f(r), so
// the 8 rows one ldmatrix phase (or one tf32 fragment load) reads fall in 8 different 16-byte bank groups
// although the rows are 64 (A) or 256 (B, bf16) bytes apart. See a_index / b_index.
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
#include <type_traits>

namespace {

using kreg_cuda::store_pair;  // the alpha/beta epilogue of steps 10-12 (gemm_common.cuh)

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
    kreg_cuda::check_gemm_args(args, KREG_DTYPE_BIT(KREG_DTYPE_BF16) | KREG_DTYPE_BIT(KREG_DTYPE_TF32),
                               "cuda_10_mma computes bf16 and tf32 only");
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
    static constexpr int BM = 256, BN = 128, BK = T::BK;
    static constexpr int WM = 64, WN = 64;                      // warp tile
    static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;  // 4 x 2
    static constexpr int kThreads = kWarpsM * kWarpsN * 32;     // 256
    static constexpr int kMTiles = WM / 16, kNTiles = WN / 8;   // 4 x 8 mma tiles per warp
    static constexpr int kKSteps = BK / T::kMmaK;               // mma k steps per stage
    static constexpr int kStages = 4;
    static constexpr int kChunk = 16 / static_cast<int>(sizeof(Elem));  // elements per 16-byte copy
    static constexpr int kAChunksPerRow = BK / kChunk, kBChunksPerRow = BN / kChunk;
    static constexpr int kAStageElems = BM * BK;  // unpadded rows: the swizzle avoids the conflicts
    static constexpr int kStageElems = BM * BK + BK * BN;
    static constexpr int kSmemBytes = kStages * kStageElems * static_cast<int>(sizeof(Elem));
    static constexpr int kGroupM = 8;  // block rows per grid swizzle group (as in step 9)
    // Copies per thread per stage.
    static constexpr int kALoads = BM * kAChunksPerRow / kThreads;
    static constexpr int kBLoads = BK * kBChunksPerRow / kThreads;
    static_assert(kALoads * kThreads == BM * kAChunksPerRow && kBLoads * kThreads == BK * kBChunksPerRow,
                  "tiles must split evenly into 16-byte chunks over the threads");
    static_assert(BK % T::kMmaK == 0 && BK % kChunk == 0 && BN % kChunk == 0,
                  "ldmatrix and cp.async need whole 16-byte chunks in every shared row");
    static_assert(kKSteps % 2 == 0, "the fragment double buffer flips once per k step and must start each stage at 0");
    static_assert((kAChunksPerRow == 4 || kAChunksPerRow % 8 == 0) && kBChunksPerRow % 8 == 0,
                  "the swizzles below are written for 64-byte rows or multiples of 128 bytes");
};

// ---------------------------------------------------------------------------------------------------
// Swizzled shared-memory layout.
//
// Shared memory has 32 banks of 4 bytes: a 128-byte line. ldmatrix reads, per phase, eight 16-byte rows
// given by eight lanes; they are conflict-free when the eight land in the eight different 16-byte bank
// groups of a line. With plain row-major tiles they do not: B's rows are 256 or 512 bytes apart (all start at
// bank 0), A's 64 bytes (two rows per line). XOR-ing the chunk index with a function of the row spreads them:
//   rows of 8 chunks or a multiple (B: 256 bytes bf16, 512 tf32):  chunk ^ perm(row % 8)
//   rows of 4 chunks (A, 64 bytes):  chunk ^ ((row / 2) % 4); rows 2j and 2j+1 share a line, halves apart.
// ldmatrix (8 consecutive rows) needs only a bijection of 0..7; perm(x) = 2 (x % 4) + x / 4 is one that also
// keeps the tf32 B fragment's 4 x 2 chunks apart (rows t = 0..3 or 4..7, two neighbouring chunks each).
__device__ __forceinline__ int row_perm8(int r) { return ((r & 3) << 1) | ((r >> 2) & 1); }

template <int kChunksPerRow>
__device__ __forceinline__ int swizzled_chunk(int r, int c) {
    if constexpr (kChunksPerRow == 4)
        return c ^ ((r >> 1) & 3);
    else
        return c ^ row_perm8(r & 7);
}

// Element index of (row, col) in a stage's A tile (BM x BK) and B tile (BK x BN).
template <class C>
__device__ __forceinline__ int a_index(int r, int col) {
    return r * C::BK + swizzled_chunk<C::kAChunksPerRow>(r, col / C::kChunk) * C::kChunk + col % C::kChunk;
}
template <class C>
__device__ __forceinline__ int b_index(int k, int col) {
    return k * C::BN + swizzled_chunk<C::kBChunksPerRow>(k, col / C::kChunk) * C::kChunk + col % C::kChunk;
}

// ---------------------------------------------------------------------------------------------------
// Device helpers

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
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
        cp_async16(dst, src);
        return;
    }
    alignas(16) Elem v[kChunk];
#pragma unroll
    for (int e = 0; e < kChunk; ++e) v[e] = col + e < cols ? src[e] : Elem(0);
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

// The stage's A tile (BM x BK at row0, k0) and B tile (BK x BN at k0, col0). `interior`: the whole stage is
// inside both matrices and their rows are 16-byte aligned, so every chunk is one cp.async, no test.
template <class C>
__device__ __forceinline__ void load_stage(typename C::Elem* stage, const MmaGemm& p, int row0, int col0, int k0,
                                           int tid, bool interior, bool a_vec, bool b_vec) {
    using Elem = typename C::Elem;
    const Elem* a = static_cast<const Elem*>(p.a);
    const Elem* b = static_cast<const Elem*>(p.b);
    Elem* as = stage;
    Elem* bs = stage + C::kAStageElems;
    if (interior) {
        const Elem* a_tile = a + static_cast<size_t>(row0) * p.lda + k0;
        const Elem* b_tile = b + static_cast<size_t>(k0) * p.ldb + col0;
#pragma unroll
        for (int l = 0; l < C::kALoads; ++l) {
            const int id = tid + l * C::kThreads;
            const int r = id / C::kAChunksPerRow, c = (id % C::kAChunksPerRow) * C::kChunk;
            cp_async16(as + a_index<C>(r, c), a_tile + static_cast<size_t>(r) * p.lda + c);
        }
#pragma unroll
        for (int l = 0; l < C::kBLoads; ++l) {
            const int id = tid + l * C::kThreads;
            const int r = id / C::kBChunksPerRow, c = (id % C::kBChunksPerRow) * C::kChunk;
            cp_async16(bs + b_index<C>(r, c), b_tile + static_cast<size_t>(r) * p.ldb + c);
        }
        return;
    }
#pragma unroll
    for (int l = 0; l < C::kALoads; ++l) {
        const int id = tid + l * C::kThreads;
        const int r = id / C::kAChunksPerRow, c = (id % C::kAChunksPerRow) * C::kChunk;
        copy_chunk(as + a_index<C>(r, c), a, p.lda, row0 + r, k0 + c, p.m, p.k, a_vec);
    }
#pragma unroll
    for (int l = 0; l < C::kBLoads; ++l) {
        const int id = tid + l * C::kThreads;
        const int r = id / C::kBChunksPerRow, c = (id % C::kBChunksPerRow) * C::kChunk;
        copy_chunk(bs + b_index<C>(r, c), b, p.ldb, k0 + r, col0 + c, p.k, p.n, b_vec);
    }
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
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
__device__ __forceinline__ unsigned to_tf32(unsigned x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
    return r;
}

__device__ __forceinline__ unsigned lds32(unsigned addr) {
    unsigned v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
    return v;
}

// One k step's operands for the whole warp tile: 4 A fragments (16 x kMmaK) and 8 B fragments (kMmaK x 8).
template <class C>
struct Fragments {
    unsigned a[C::kMTiles][4];
    unsigned b[C::kNTiles][2];
};

// Reads one k step's fragments from a stage. The offsets of this lane's loads inside a stage (in bytes) are
// computed once per kernel: the swizzle makes them differ from lane to lane, but a step of 16 rows (the next
// mi) or of 8 or 16 k rows (the next ks of B) keeps row % 8 and so the swizzle: those are constant offsets
// the compiler folds into the instructions. Only what the swizzle changes is kept in registers, as 32-bit
// shared addresses, not 64-bit pointers: the 128 accumulators and two fragment sets (192 registers) leave
// about 60 for everything else.
template <class C, class Elem = typename C::Elem>
struct FragmentReader;

template <class C>
struct FragmentReader<C, uint16_t> {
    // bf16: ldmatrix.x4 gives a whole 16x16 A fragment; lanes 0-15 address rows 0-15 at k 0, lanes 16-31
    // the same rows at k 8 (matrices 0..3 = rows 0-7/8-15 x k 0-7/8-15, i.e. reg0..reg3 above).
    // ldmatrix.x4.trans on B (stored [k][n]) gives two n8 fragments: matrices (k 0-7, n 0-7),
    // (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15); transposed, each lane holds (k 2t.., n g).
    unsigned a[C::kKSteps];      // A row (lane & 15) of the warp tile, k ks * 16 + (lane >> 4) * 8
    unsigned b[C::kNTiles / 2];  // B k row (lane & 15), column nj * 16 + (lane >> 4) * 8 of the warp tile

    __device__ FragmentReader(int warp_m, int warp_n, int lane) {
#pragma unroll
        for (int ks = 0; ks < C::kKSteps; ++ks)
            a[ks] = 2u * a_index<C>(warp_m * C::WM + (lane & 15), ks * 16 + (lane >> 4) * 8);
#pragma unroll
        for (int nj = 0; nj < C::kNTiles / 2; ++nj)
            b[nj] = 2u * (C::kAStageElems + b_index<C>(lane & 15, warp_n * C::WN + nj * 16 + (lane >> 4) * 8));
    }

    __device__ __forceinline__ void load(Fragments<C>& f, unsigned stage, int ks) const {
#pragma unroll
        for (int mi = 0; mi < C::kMTiles; ++mi) ldmatrix_x4(f.a[mi], stage + a[ks] + mi * 16 * C::BK * 2);
#pragma unroll
        for (int nj = 0; nj < C::kNTiles / 2; ++nj) {
            unsigned r[4];
            ldmatrix_x4_trans(r, stage + b[nj] + ks * 16 * C::BN * 2);
            f.b[2 * nj][0] = r[0];
            f.b[2 * nj][1] = r[1];
            f.b[2 * nj + 1][0] = r[2];
            f.b[2 * nj + 1][1] = r[3];
        }
    }
};

template <class C>
struct FragmentReader<C, float> {
    // tf32: the element each fragment register wants (the layouts at the top), 32 bits at a time, rounded
    // to nearest on its way into the register.
    unsigned a[C::kKSteps][2];  // A row g of the warp tile, k ks * 8 + t (+ 4)
    unsigned b[4][2];           // B k row t (+ 4), column (ni % 4) * 8 + g of the warp tile

    __device__ FragmentReader(int warp_m, int warp_n, int lane) {
        const int g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int ks = 0; ks < C::kKSteps; ++ks)
#pragma unroll
            for (int h = 0; h < 2; ++h) a[ks][h] = 4u * a_index<C>(warp_m * C::WM + g, ks * 8 + t + 4 * h);
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                b[j][h] = 4u * (C::kAStageElems + b_index<C>(t + 4 * h, warp_n * C::WN + j * 8 + g));
    }

    __device__ __forceinline__ void load(Fragments<C>& f, unsigned stage, int ks) const {
        constexpr unsigned kRow8 = 8 * C::BK * 4;  // A rows g + 8
#pragma unroll
        for (int mi = 0; mi < C::kMTiles; ++mi) {
            const unsigned base = stage + mi * 16 * C::BK * 4;
            f.a[mi][0] = to_tf32(lds32(base + a[ks][0]));          // (g,     t)
            f.a[mi][1] = to_tf32(lds32(base + a[ks][0] + kRow8));  // (g + 8, t)
            f.a[mi][2] = to_tf32(lds32(base + a[ks][1]));          // (g,     t + 4)
            f.a[mi][3] = to_tf32(lds32(base + a[ks][1] + kRow8));  // (g + 8, t + 4)
        }
#pragma unroll
        for (int ni = 0; ni < C::kNTiles; ++ni) {
            // Columns 32 apart are 8 chunks apart: the swizzle (an XOR below 8 chunks) leaves that step alone.
            const unsigned base = stage + ks * 8 * C::BN * 4 + (ni / 4) * 32 * 4;
            f.b[ni][0] = to_tf32(lds32(base + b[ni % 4][0]));  // (k t,     n g)
            f.b[ni][1] = to_tf32(lds32(base + b[ni % 4][1]));  // (k t + 4, n g)
        }
    }
};

template <class C>
__device__ __forceinline__ void mma_all(float (&acc)[C::kMTiles][C::kNTiles][4], const Fragments<C>& f) {
#pragma unroll
    for (int mi = 0; mi < C::kMTiles; ++mi)
#pragma unroll
        for (int ni = 0; ni < C::kNTiles; ++ni) {
            if constexpr (std::is_same_v<typename C::Elem, uint16_t>)
                mma_bf16(acc[mi][ni], f.a[mi], f.b[ni][0], f.b[ni][1]);
            else
                mma_tf32(acc[mi][ni], f.a[mi], f.b[ni][0], f.b[ni][1]);
        }
}

// The k loop: acc += A(row0.., :) * B(:, col0..). kChecked = false is the fast path, for blocks whose
// every stage lies inside both matrices with 16-byte aligned rows (then each chunk is one cp.async and
// nothing is tested); the checked copies of edge blocks need registers of their own, and sharing one loop
// would make the fast path spill.
template <class C, bool kChecked>
__device__ __forceinline__ void main_loop(float (&acc)[C::kMTiles][C::kNTiles][4], const MmaGemm& p,
                                          typename C::Elem* smem, int row0, int col0, bool a_vec, bool b_vec) {
    using Elem = typename C::Elem;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = warp / C::kWarpsN, warp_n = warp % C::kWarpsN;
    const int k_tiles = (p.k + C::BK - 1) / C::BK;
    auto load = [&](int stage, int tile) {
        load_stage<C>(smem + stage * C::kStageElems, p, row0, col0, tile * C::BK, tid, !kChecked, a_vec, b_vec);
    };

#pragma unroll
    for (int s = 0; s < C::kStages - 1; ++s) {
        if (s < k_tiles) load(s, s);
        kreg_cuda::cp_async_commit();
    }

    Fragments<C> frag[2];
    const FragmentReader<C> reader(warp_m, warp_n, lane);
    const unsigned smem_base = smem_addr(smem);
    constexpr unsigned kStageBytes = C::kStageElems * sizeof(Elem);
    // Tile 0 landed (kStages - 1 groups committed, at most kStages - 2 pending) and is visible to all warps.
    kreg_cuda::cp_async_wait<C::kStages - 2>();
    __syncthreads();
    reader.load(frag[0], smem_base, 0);

    int read_stage = 0, write_stage = C::kStages - 1;
    for (int t = 0; t < k_tiles; ++t) {
        const unsigned stage = smem_base + read_stage * kStageBytes;
#pragma unroll
        for (int ks = 0; ks < C::kKSteps; ++ks) {
            if (ks == 0) {
                // write_stage held tile t - 1, which every warp finished reading (its last ldmatrix came
                // before the barrier of the previous iteration).
                if (t + C::kStages - 1 < k_tiles) load(write_stage, t + C::kStages - 1);
                kreg_cuda::cp_async_commit();
            }
            if (ks + 1 < C::kKSteps) {
                reader.load(frag[(ks + 1) % 2], stage, ks + 1);
            } else {
                // Last k step of the stage: wait for tile t + 1 (t + kStages groups committed, at most
                // kStages - 2 pending) and publish it, then fetch its first fragments while this step's mma run.
                kreg_cuda::cp_async_wait<C::kStages - 2>();
                __syncthreads();
                read_stage = read_stage + 1 == C::kStages ? 0 : read_stage + 1;
                write_stage = write_stage + 1 == C::kStages ? 0 : write_stage + 1;
                if (t + 1 < k_tiles) reader.load(frag[(ks + 1) % 2], smem_base + read_stage * kStageBytes, 0);
            }
            mma_all<C>(acc, frag[ks % 2]);
        }
    }
    // Nothing may still be writing shared memory when the block exits (the last groups are empty).
    kreg_cuda::cp_async_wait<0>();
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1) mma_gemm_kernel(MmaGemm p) {
    using Elem = typename C::Elem;
    extern __shared__ uint4 smem_raw[];  // uint4: 16-byte aligned, one declaration for every instantiation
    Elem* smem = reinterpret_cast<Elem*>(smem_raw);

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
    const bool fast = a_vec && b_vec && row0 + C::BM <= p.m && col0 + C::BN <= p.n && p.k % C::BK == 0;

    float acc[C::kMTiles][C::kNTiles][4] = {};
    if (fast)
        main_loop<C, false>(acc, p, smem, row0, col0, a_vec, b_vec);
    else
        main_loop<C, true>(acc, p, smem, row0, col0, a_vec, b_vec);

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int warp_m = warp / C::kWarpsN, warp_n = warp % C::kWarpsN;

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
            "mma.sync tensor cores: bf16 m16n8k16 with ldmatrix, tf32 m16n8k8 (cvt.rna); 256x128 block, "
            "8 warps of 64x64, 4-stage cp.async, swizzled shared memory";
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
        kreg_cuda::fill_launch_info(plan, info);
        return true;
    }

private:
    template <class C>
    LaunchPlan plan_for(const MmaGemm& p, int& configured_device) {
        kreg_cuda::allow_dynamic_smem(reinterpret_cast<const void*>(&mma_gemm_kernel<C>), C::kSmemBytes, "cuda_10_mma",
                                      configured_device);
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

    // Block-tile traffic: A read ceil(N/BN) times and B ceil(M/BM) times, in their storage type; C written
    // once in fp32.
    static double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) {
        const double in_bytes = dtype == KREG_DTYPE_BF16 ? 2.0 : 4.0;
        constexpr int64_t bm = Bf16Config::BM, bn = Bf16Config::BN;  // the tf32 config has the same tile
        static_assert(Bf16Config::BM == Tf32Config::BM && Bf16Config::BN == Tf32Config::BN, "one traffic model");
        const double reads_of_a = static_cast<double>((n + bn - 1) / bn);
        const double reads_of_b = static_cast<double>((m + bm - 1) / bm);
        return in_bytes * (static_cast<double>(m) * k * reads_of_a + static_cast<double>(k) * n * reads_of_b) +
               4.0 * static_cast<double>(m) * n;
    }

    int bf16_device_ = -1;
    int tf32_device_ = -1;
};

}  // namespace

KREG_PLUGIN("cuda_10_mma", "1.0.0", Mma)
