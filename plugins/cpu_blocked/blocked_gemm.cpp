// The cpu_blocked kernel (see cpu_blocked.cpp for the idea, loop by loop): the body both plugins compile.
#include "blocked_gemm.hpp"

#include <kreg/kernel.hpp>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace kreg::cpu_blocked {
namespace {

constexpr int64_t kMR = 6;   // rows of the register tile: 6 x 2 AVX accumulators + 2 B vectors + 1 broadcast = 15 of 16
constexpr int64_t kNR = 16;  // columns of the register tile (two AVX or four SSE vectors)
constexpr int64_t kKC = 256;   // depth of a packed slice: a B panel is kKC*kNR*4 = 16 KiB (L1)
constexpr int64_t kMC = 120;   // rows of a packed A block, a multiple of kMR: kMC*kKC*4 = 120 KiB (L2)
constexpr int64_t kNC = 1024;  // columns of a packed B block: kKC*kNC*4 = 1 MiB (L3)
constexpr double kMinWorkPerThread = double(1 << 21);  // multiply-adds below which a thread is not worth it

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

// Traffic model, assuming the packed blocks stay in cache: A is read once per kNC-wide column slice,
// B once, and C is written by the first k-slice and read and written by each later one.
double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype /*dtype*/) {
    const double a_reads = double(m) * double(k) * double(ceil_div(n, kNC));
    const double b_reads = double(k) * double(n);
    const double c_traffic = double(m) * double(n) * double(2 * ceil_div(k, kKC) - 1);
    return (a_reads + b_reads + c_traffic) * sizeof(float);
}

namespace {

void check_arguments(const kreg_gemm_args& args) {
    if (args.struct_size < sizeof(kreg_gemm_args))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_gemm_args is smaller than this plugin expects");
    if (args.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
    if (args.m < 1 || args.n < 1 || args.k < 1)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n and k must be >= 1");
    if (args.lda < args.k || args.ldb < args.n || args.ldc < args.n)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "a leading dimension is smaller than its row");
    if (args.a == nullptr || args.b == nullptr || args.c == nullptr)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
}

struct Gemm {
    int64_t m, n, k, lda, ldb, ldc;
    const float* a;
    const float* b;
    float* c;
    float alpha, beta;
    bool read_c;  // beta != 0
};

// B[pc:pc+kc, jc:jc+nc] -> panels of kNR columns, each kc x kNR row-major; columns past nc are zero.
void pack_b(const Gemm& g, int64_t pc, int64_t kc, int64_t jc, int64_t nc, float* out) {
    for (int64_t j0 = 0; j0 < nc; j0 += kNR) {
        const int64_t cols = std::min(kNR, nc - j0);
        for (int64_t p = 0; p < kc; ++p) {
            const float* src = g.b + (pc + p) * g.ldb + jc + j0;
            int64_t j = 0;
            for (; j < cols; ++j) out[j] = src[j];
            for (; j < kNR; ++j) out[j] = 0.0f;
            out += kNR;
        }
    }
}

// A[ic:ic+mc, pc:pc+kc] -> panels of kMR rows, each kc x kMR (k-major); rows past mc are zero.
void pack_a(const Gemm& g, int64_t ic, int64_t mc, int64_t pc, int64_t kc, float* out) {
    for (int64_t i0 = 0; i0 < mc; i0 += kMR) {
        const int64_t rows = std::min(kMR, mc - i0);
        for (int64_t p = 0; p < kc; ++p) {
            int64_t i = 0;
            for (; i < rows; ++i) out[i] = g.a[(ic + i0 + i) * g.lda + pc + p];
            for (; i < kMR; ++i) out[i] = 0.0f;
            out += kMR;
        }
    }
}

// Eight floats as one value (GCC/Clang vector extension): one AVX register in the x86-64-v3 clone, two
// SSE/NEON registers elsewhere. Spelling the tile as vectors, instead of hoping the vectoriser finds
// them, is what keeps all kMR x kNR accumulators in registers for the whole kc loop.
typedef float Vec8 __attribute__((vector_size(32)));
static_assert(kNR == 16, "the micro-kernel holds a row of the tile in two Vec8");

// The register tile: acc = sum over p of a_panel[p][:] (outer product) b_panel[p][:].
inline void micro_kernel(int64_t kc, const float* __restrict a_panel, const float* __restrict b_panel,
                         float (&acc)[kMR][kNR]) {
    Vec8 tile[kMR][2] = {};
    for (int64_t p = 0; p < kc; ++p) {
        Vec8 b_lo, b_hi;
        std::memcpy(&b_lo, b_panel + p * kNR, sizeof b_lo);  // unaligned vector loads
        std::memcpy(&b_hi, b_panel + p * kNR + 8, sizeof b_hi);
        for (int64_t i = 0; i < kMR; ++i) {
            const float a_value = a_panel[p * kMR + i];  // broadcast by the vector-scalar product
            tile[i][0] += a_value * b_lo;
            tile[i][1] += a_value * b_hi;
        }
    }
    for (int64_t i = 0; i < kMR; ++i) {
        std::memcpy(&acc[i][0], &tile[i][0], sizeof(Vec8));
        std::memcpy(&acc[i][8], &tile[i][1], sizeof(Vec8));
    }
}

inline void store_tile(const Gemm& g, const float (&acc)[kMR][kNR], int64_t row, int64_t col, int64_t rows,
                       int64_t cols, bool first_slice) {
    for (int64_t i = 0; i < rows; ++i) {
        float* out = g.c + (row + i) * g.ldc + col;
        for (int64_t j = 0; j < cols; ++j) {
            const float value = g.alpha * acc[i][j];
            if (!first_slice) {
                out[j] += value;
            } else if (g.read_c) {
                out[j] = value + g.beta * out[j];
            } else {
                out[j] = value;  // beta == 0: C may hold anything, NaN included; never read it
            }
        }
    }
}

// Every tile of one packed (A block, B block) pair. target_clones picks at load time through an ELF ifunc, so a
// .dll (PE) gets the default build only.
#if defined(__x86_64__) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void compute_block(const Gemm& g, const float* packed_a, const float* packed_b, int64_t ic, int64_t mc, int64_t jc,
                   int64_t nc, int64_t kc, bool first_slice) {
    float acc[kMR][kNR];
    for (int64_t j0 = 0; j0 < nc; j0 += kNR) {
        const float* b_panel = packed_b + (j0 / kNR) * kc * kNR;
        for (int64_t i0 = 0; i0 < mc; i0 += kMR) {
            micro_kernel(kc, packed_a + (i0 / kMR) * kc * kMR, b_panel, acc);
            store_tile(g, acc, ic + i0, jc + j0, std::min(kMR, mc - i0), std::min(kNR, nc - j0), first_slice);
        }
    }
}

// Buffers of one thread, allocated before it starts so that bad_alloc surfaces in the calling thread.
struct Workspace {
    std::vector<float> packed_a, packed_b;
    Workspace() : packed_a(size_t(kMC * kKC)), packed_b(size_t(kKC * ceil_div(kNC, kNR) * kNR)) {}
};

void compute_rows(const Gemm& g, int64_t row_begin, int64_t row_end, Workspace& ws) {
    for (int64_t jc = 0; jc < g.n; jc += kNC) {
        const int64_t nc = std::min(kNC, g.n - jc);
        for (int64_t pc = 0; pc < g.k; pc += kKC) {
            const int64_t kc = std::min(kKC, g.k - pc);
            pack_b(g, pc, kc, jc, nc, ws.packed_b.data());
            for (int64_t ic = row_begin; ic < row_end; ic += kMC) {
                const int64_t mc = std::min(kMC, row_end - ic);
                pack_a(g, ic, mc, pc, kc, ws.packed_a.data());
                compute_block(g, ws.packed_a.data(), ws.packed_b.data(), ic, mc, jc, nc, kc, pc == 0);
            }
        }
    }
}

}  // namespace

void run(const kreg_gemm_args& args) {
    check_arguments(args);
    const Gemm g{args.m,
                 args.n,
                 args.k,
                 args.lda,
                 args.ldb,
                 args.ldc,
                 static_cast<const float*>(args.a),
                 static_cast<const float*>(args.b),
                 static_cast<float*>(args.c),
                 float(args.alpha),
                 float(args.beta),
                 args.beta != 0.0};
    const double work = double(g.m) * double(g.n) * double(g.k);
    const int64_t hardware = std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
    const int64_t threads =
        std::clamp<int64_t>(int64_t(work / kMinWorkPerThread), 1, std::min(hardware, ceil_div(g.m, kMR)));
    // Row ranges in whole register tiles, as even as possible.
    const int64_t rows_per_thread = ceil_div(ceil_div(g.m, kMR), threads) * kMR;
    std::vector<Workspace> workspaces(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    pool.reserve(size_t(threads));
    for (int64_t t = 1; t < threads; ++t) {
        const int64_t begin = t * rows_per_thread, end = std::min(g.m, begin + rows_per_thread);
        if (begin >= end) break;
        Workspace& ws = workspaces[size_t(t)];
        try {
            pool.emplace_back([&g, begin, end, &ws] { compute_rows(g, begin, end, ws); });
        } catch (...) {
            compute_rows(g, begin, end, ws);  // could not start a thread: do its share here
        }
    }
    compute_rows(g, 0, std::min(g.m, rows_per_thread), workspaces[0]);
    for (auto& thread : pool) thread.join();
}

}  // namespace kreg::cpu_blocked
