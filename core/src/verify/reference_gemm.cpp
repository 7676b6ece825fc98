#include "verify/reference_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace kreg {
namespace {

// A B block of kBlockK x kBlockN doubles (256 KiB) stays in L2 while every row of the thread's share
// streams through it; the kBlockN-wide slice of a C row (2 KiB) stays in L1 across the block's k.
constexpr int64_t kBlockK = 128;
constexpr int64_t kBlockN = 256;
// Below this many multiply-adds a thread costs more than it saves.
constexpr double kMinWorkPerThread = 1 << 22;

struct Problem {
    const int64_t* rows;  // null: row r of C is row r of A
    int64_t row_count, n, k;
    const float* a;
    int64_t lda;
    const float* b;
    int64_t ldb;
    double* c;
    int64_t ldc;
    double* magnitude;  // may be null
};

// acc[j] += sum over the four k of a_k * b_k[j]: four k per pass over the C slice quarters its loads
// and stores, and the loop over j is unit-stride for the vectoriser.
void update4(double* __restrict acc, const double* __restrict b0, const double* __restrict b1,
             const double* __restrict b2, const double* __restrict b3, double a0, double a1, double a2, double a3,
             int64_t count) {
    for (int64_t j = 0; j < count; ++j) acc[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
}

void update1(double* __restrict acc, const double* __restrict b0, double a0, int64_t count) {
    for (int64_t j = 0; j < count; ++j) acc[j] += a0 * b0[j];
}

// acc[0, nb) += a_row[0, kb) * panel (kb x nb, packed with row stride nb); abs_values takes |a|.
void accumulate_row(double* acc, const float* a_row, const double* panel, int64_t kb, int64_t nb, bool abs_values) {
    auto value = [&](int64_t kk) {
        const double v = double(a_row[kk]);
        return abs_values ? std::fabs(v) : v;
    };
    int64_t kk = 0;
    for (; kk + 4 <= kb; kk += 4) {
        update4(acc, panel + kk * nb, panel + (kk + 1) * nb, panel + (kk + 2) * nb, panel + (kk + 3) * nb, value(kk),
                value(kk + 1), value(kk + 2), value(kk + 3), nb);
    }
    for (; kk < kb; ++kk) update1(acc, panel + kk * nb, value(kk), nb);
}

void compute_rows(const Problem& p, int64_t r_begin, int64_t r_end) {
    const bool want_magnitude = p.magnitude != nullptr;
    std::vector<double> panel(size_t(kBlockK * kBlockN));
    std::vector<double> abs_panel(want_magnitude ? panel.size() : 0);
    for (int64_t r = r_begin; r < r_end; ++r) {
        std::fill(p.c + r * p.ldc, p.c + r * p.ldc + p.n, 0.0);
        if (want_magnitude) std::fill(p.magnitude + r * p.ldc, p.magnitude + r * p.ldc + p.n, 0.0);
    }
    for (int64_t j0 = 0; j0 < p.n; j0 += kBlockN) {
        const int64_t nb = std::min(kBlockN, p.n - j0);
        for (int64_t k0 = 0; k0 < p.k; k0 += kBlockK) {
            const int64_t kb = std::min(kBlockK, p.k - k0);
            // Convert the block of B to fp64 once; every row of this thread reuses it.
            for (int64_t kk = 0; kk < kb; ++kk) {
                const float* src = p.b + (k0 + kk) * p.ldb + j0;
                for (int64_t jj = 0; jj < nb; ++jj) {
                    panel[size_t(kk * nb + jj)] = double(src[jj]);
                    if (want_magnitude) abs_panel[size_t(kk * nb + jj)] = std::fabs(double(src[jj]));
                }
            }
            for (int64_t r = r_begin; r < r_end; ++r) {
                const int64_t row = p.rows != nullptr ? p.rows[r] : r;
                const float* a_row = p.a + row * p.lda + k0;
                accumulate_row(p.c + r * p.ldc + j0, a_row, panel.data(), kb, nb, false);
                if (want_magnitude) accumulate_row(p.magnitude + r * p.ldc + j0, a_row, abs_panel.data(), kb, nb, true);
            }
        }
    }
}

void run(const Problem& p) {
    if (p.row_count <= 0 || p.n <= 0) return;
    const double work = double(p.row_count) * double(p.n) * double(std::max<int64_t>(p.k, 1));
    const int64_t hardware = std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
    const int64_t threads =
        std::clamp<int64_t>(int64_t(work / kMinWorkPerThread), 1, std::min<int64_t>(hardware, p.row_count));
    if (threads == 1) {
        compute_rows(p, 0, p.row_count);
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(size_t(threads));
    const int64_t per_thread = (p.row_count + threads - 1) / threads;
    for (int64_t t = 0; t < threads; ++t) {
        const int64_t begin = t * per_thread;
        const int64_t end = std::min(p.row_count, begin + per_thread);
        if (begin >= end) break;
        pool.emplace_back([&p, begin, end] { compute_rows(p, begin, end); });
    }
    for (auto& thread : pool) thread.join();
}

}  // namespace

void reference_gemm_fp64(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                         double* c, int64_t ldc, double* magnitude) {
    run(Problem{nullptr, m, n, k, a, lda, b, ldb, c, ldc, magnitude});
}

void reference_gemm_rows_fp64(const int64_t* rows, int64_t row_count, int64_t n, int64_t k, const float* a, int64_t lda,
                              const float* b, int64_t ldb, double* c, int64_t ldc, double* magnitude) {
    run(Problem{rows, row_count, n, k, a, lda, b, ldb, c, ldc, magnitude});
}

}  // namespace kreg
