#include "verify/verify_gemm.hpp"

#include "measure/anticheat.hpp"  // kGuardBits
#include "verify/random_fill.hpp"
#include "verify/reference_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

namespace kreg {
namespace {

// Floor of the denominator: an all-zero row of A gives a zero bound, and then only an exact zero passes.
constexpr double kTiny = std::numeric_limits<double>::min();
// The full reference is computed this many output elements at a time, to bound its memory (2 x 32 MiB).
constexpr int64_t kFullChunkElements = int64_t(1) << 22;

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
    char buffer[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buffer, sizeof buffer, fmt, args);
    va_end(args);
    return buffer;
}

VerifyResult fail(std::string reason, double max_rel_err, bool sampled) {
    VerifyResult r;
    r.passed = false;
    r.max_rel_err = max_rel_err;
    r.reason = std::move(reason);
    r.sampled = sampled;
    return r;
}

// Scans all of C; returns a failure naming the first non-finite element in row-major order (with what
// its bits say about where it came from) and how many there are, if any.
bool find_non_finite(const float* c, int64_t m, int64_t n, int64_t ldc, std::string& reason) {
    int64_t count = 0;
    for (int64_t i = 0; i < m; ++i) {
        const float* row = c + i * ldc;
        for (int64_t j = 0; j < n; ++j) {
            if (std::isfinite(row[j])) continue;
            if (count++ == 0) reason = describe_non_finite(row[j], i, j);
        }
    }
    if (count > 1)
        reason += format(" (%lld of %lld elements of C are not finite)", (long long)count, (long long)(m * n));
    return count > 0;
}

// The worst element of one block of rows against its reference; keeps the first maximum.
struct Worst {
    double err = 0;
    int64_t i = -1, j = -1;
    double got = 0, expected = 0;
};

void compare_rows(const float* c, int64_t ldc, const int64_t* rows, int64_t row_count, int64_t n, const double* ref,
                  const double* magnitude, Worst& worst) {
    for (int64_t r = 0; r < row_count; ++r) {
        const float* c_row = c + rows[r] * ldc;
        for (int64_t j = 0; j < n; ++j) {
            const double expected = ref[r * n + j];
            const double err = std::fabs(double(c_row[j]) - expected) / std::max(magnitude[r * n + j], kTiny);
            if (err > worst.err) worst = {err, rows[r], j, double(c_row[j]), expected};
        }
    }
}

std::string describe(const Worst& w, double tolerance) {
    return format("error %.3g at (%lld, %lld): got %.9g expected %.9g > tolerance %.3g", w.err, (long long)w.i,
                  (long long)w.j, w.got, w.expected, tolerance);
}

// Compares the listed rows of C with the fp64 reference, in chunks to bound memory.
Worst check_rows(const float* a, const float* b, const float* c, const std::vector<int64_t>& rows, int64_t n, int64_t k,
                 int64_t lda, int64_t ldb, int64_t ldc) {
    Worst worst;
    const int64_t chunk = std::max<int64_t>(1, kFullChunkElements / n);
    std::vector<double> ref, magnitude;
    for (size_t start = 0; start < rows.size(); start += size_t(chunk)) {
        const int64_t count = std::min<int64_t>(chunk, int64_t(rows.size() - start));
        ref.resize(size_t(count * n));
        magnitude.resize(size_t(count * n));
        reference_gemm_rows_fp64(rows.data() + start, count, n, k, a, lda, b, ldb, ref.data(), n, magnitude.data());
        compare_rows(c, ldc, rows.data() + start, count, n, ref.data(), magnitude.data(), worst);
    }
    return worst;
}

// The rows the sampled check compares in full: first and last (edge tiles), then seeded random ones.
std::vector<int64_t> pick_rows(int64_t m, int64_t wanted, uint64_t seed) {
    std::vector<int64_t> rows;
    if (wanted >= m) {
        for (int64_t i = 0; i < m; ++i) rows.push_back(i);
        return rows;
    }
    std::set<int64_t> chosen;
    if (wanted >= 1) chosen.insert(0);
    if (wanted >= 2) chosen.insert(m - 1);
    std::mt19937_64 rng(seed ^ 0x5851f42d4c957f2dULL);
    std::uniform_int_distribution<int64_t> any_row(0, m - 1);
    while (int64_t(chosen.size()) < wanted) chosen.insert(any_row(rng));
    rows.assign(chosen.begin(), chosen.end());
    return rows;
}

// Freivalds: w = C x against z = A (B x), all in fp64, with |x_j| in [0.5, 1) and random signs so that
// no column's error is weighted down to nothing. Residual of row i, normalised by bound_i =
// (|A| (|B| |x|))_i = sum_j (sum_k |a_ik||b_kj|) |x_j|, is a weighted mean of the row's e_ij (<= their max).
struct Projection {
    double err = 0;
    int64_t row = -1;
};

Projection freivalds(const float* a, const float* b, const float* c, int64_t m, int64_t n, int64_t k, int64_t lda,
                     int64_t ldb, int64_t ldc, uint64_t seed) {
    std::mt19937_64 rng(seed ^ 0x2545f4914f6cdd1dULL);
    std::uniform_real_distribution<double> magnitude(0.5, 1.0);
    std::vector<double> x(static_cast<size_t>(n)), x_abs(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
        x_abs[j] = magnitude(rng);
        x[j] = (rng() & 1) ? x_abs[j] : -x_abs[j];
    }
    std::vector<double> bx(static_cast<size_t>(k)), bx_abs(static_cast<size_t>(k));
    for (int64_t kk = 0; kk < k; ++kk) {
        const float* row = b + kk * ldb;
        double s = 0, s_abs = 0;
        for (int64_t j = 0; j < n; ++j) {
            s += double(row[j]) * x[j];
            s_abs += std::fabs(double(row[j])) * x_abs[j];
        }
        bx[kk] = s;
        bx_abs[kk] = s_abs;
    }
    Projection worst;
    for (int64_t i = 0; i < m; ++i) {
        const float* a_row = a + i * lda;
        double z = 0, bound = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
            z += double(a_row[kk]) * bx[kk];
            bound += std::fabs(double(a_row[kk])) * bx_abs[kk];
        }
        const float* c_row = c + i * ldc;
        double w = 0;
        for (int64_t j = 0; j < n; ++j) w += double(c_row[j]) * x[j];
        const double err = std::fabs(w - z) / std::max(bound, kTiny);
        if (err > worst.err) worst = {err, i};
    }
    return worst;
}

}  // namespace

std::string describe_non_finite(float value, int64_t i, int64_t j) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const long long row = i, col = j;
    if (std::isinf(value)) return format("%sInf at (%lld, %lld)", value < 0 ? "-" : "", row, col);
    if (bits == kPoisonBits)
        return format(
            "unwritten element at (%lld, %lld): still holds C's poison NaN (never written, or C was read "
            "although beta = 0)",
            row, col);
    // The payload: the mantissa below the quiet bit. Arithmetic may quiet a NaN and change its sign, never
    // (where it keeps the payload at all) these bits.
    constexpr uint32_t kPayload = 0x003fffffu;
    const uint32_t payload = bits & kPayload;
    const struct {
        uint32_t pattern;
        const char* what;
        const char* meaning;
    } known[] = {
        {kPoisonBits, "C's poison", "C was read although beta = 0"},
        {kPadBeforeABits, "the padding before A", "a value was read before the start of A"},
        {kPadAfterABits, "the padding after A", "a value was read past the end of A"},
        {kPadBeforeBBits, "the padding before B", "a value was read before the start of B"},
        {kPadAfterBBits, "the padding after B", "a value was read past the end of B"},
        {kGuardBits, "the guard band around C", "a value was read outside C"},
    };
    for (const auto& k : known)
        if (payload == (k.pattern & kPayload))
            return format("NaN at (%lld, %lld) computed from %s: %s (the NaN carries its payload)", row, col, k.what,
                          k.meaning);
    // No payload of ours. A and B hold only finite values, so either the kernel made this NaN itself, or it
    // read one of the harness's NaNs and the hardware replaced the payload: NVIDIA GPUs return the canonical
    // NaN 0x7fffffff from arithmetic on any NaN. Nothing more can be said from the bits.
    if (bits == 0x7fffffffu)
        return format(
            "NaN at (%lld, %lld): the canonical NaN 0x7fffffff, whose bits do not say where it came from "
            "(GPU arithmetic returns it for any NaN operand: C's poison read although beta = 0, a read "
            "outside A or B, whose padding is NaN, or an invalid operation such as 0 * Inf)",
            row, col);
    return format(
        "NaN at (%lld, %lld) (bits 0x%08x) carries none of the harness's NaN patterns and no element of A "
        "or B is NaN: an invalid operation (0 * Inf, Inf - Inf, 0 / 0), memory the harness did not fill "
        "(uninitialised shared memory or registers), or a NaN whose payload the hardware replaced",
        row, col, unsigned(bits));
}

double default_tolerance(DType dtype) {
    switch (dtype) {
        case DType::fp32:
            return 1e-5;
        case DType::tf32:
            return 2e-3;
        case DType::bf16:
            return 1e-2;
        case DType::fp16:
            return 2e-3;
    }
    return 1e-5;
}

VerifyResult verify_gemm(const float* a, const float* b, const float* c, int64_t m, int64_t n, int64_t k, int64_t lda,
                         int64_t ldb, int64_t ldc, double tolerance, uint64_t seed, const VerifyOptions& options) {
    const bool sampled = double(m) * double(n) * double(k) > options.full_reference_max_work;
    if (m < 1 || n < 1 || k < 1 || lda < k || ldb < n || ldc < n) {
        return fail(format("invalid GEMM description: m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld", (long long)m,
                           (long long)n, (long long)k, (long long)lda, (long long)ldb, (long long)ldc),
                    std::numeric_limits<double>::infinity(), sampled);
    }
    std::string reason;
    if (find_non_finite(c, m, n, ldc, reason)) return fail(reason, std::numeric_limits<double>::infinity(), sampled);

    std::vector<int64_t> rows;
    if (sampled) {
        rows = pick_rows(m, std::max<int64_t>(0, options.sample_rows), seed);
    } else {
        rows.resize(size_t(m));
        for (int64_t i = 0; i < m; ++i) rows[size_t(i)] = i;
    }
    const Worst worst = check_rows(a, b, c, rows, n, k, lda, ldb, ldc);
    double max_err = worst.err;
    // Written as !(err <= tol) so that a NaN error (impossible after the finiteness scan) would still fail.
    if (!(worst.err <= tolerance)) {
        std::string why = describe(worst, tolerance);
        if (sampled) why += " (sampled rows)";
        return fail(why, max_err, sampled);
    }
    if (sampled) {
        const Projection projection = freivalds(a, b, c, m, n, k, lda, ldb, ldc, seed);
        max_err = std::max(max_err, projection.err);
        if (!(projection.err <= tolerance)) {
            return fail(format("row %lld: C*x differs from A*(B*x) by %.3g (normalised) > tolerance %.3g "
                               "(sampled check, Freivalds projection)",
                               (long long)projection.row, projection.err, tolerance),
                        max_err, sampled);
        }
    }
    VerifyResult result;
    result.passed = true;
    result.max_rel_err = max_err;
    result.sampled = sampled;
    return result;
}

}  // namespace kreg
