// Verification: the reference, the inputs, and every way a wrong output must be caught.
#include "measure/anticheat.hpp"  // kGuardBits
#include "verify/padded_operand.hpp"
#include "verify/random_fill.hpp"
#include "verify/reference_gemm.hpp"
#include "verify/tolerance.hpp"
#include "verify/verify_gemm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

namespace kreg {
namespace {

struct Problem {
    int64_t m, n, k;
    std::vector<float> a, b;
};

Problem random_problem(int64_t m, int64_t n, int64_t k, uint64_t seed = 7) {
    Problem p{m, n, k, std::vector<float>(size_t(m * k)), std::vector<float>(size_t(k * n))};
    fill_uniform(p.a.data(), p.a.size(), seed, 0);
    fill_uniform(p.b.data(), p.b.size(), seed, 1);
    return p;
}

// The exact product rounded once to fp32: the best answer an fp32 kernel can give.
std::vector<float> rounded_product(const Problem& p) {
    std::vector<double> ref(size_t(p.m * p.n));
    reference_gemm_fp64(p.m, p.n, p.k, p.a.data(), p.k, p.b.data(), p.n, ref.data(), p.n);
    return std::vector<float>(ref.begin(), ref.end());
}

// What a plain fp32 kernel produces: sequential fp32 accumulation, with its real rounding error.
std::vector<float> fp32_loop_product(const Problem& p, int64_t skipped_k = -1) {
    std::vector<float> c(size_t(p.m * p.n));
    for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
            float sum = 0;
            for (int64_t q = 0; q < p.k; ++q)
                if (q != skipped_k) sum += p.a[size_t(i * p.k + q)] * p.b[size_t(q * p.n + j)];
            c[size_t(i * p.n + j)] = sum;
        }
    return c;
}

VerifyResult check(const Problem& p, const std::vector<float>& c, const VerifyOptions& options = {}) {
    return verify_gemm(p.a.data(), p.b.data(), c.data(), p.m, p.n, p.k, p.k, p.n, p.n, default_tolerance(DType::fp32),
                       99, options);
}

// Options that force the sampled path on small shapes.
VerifyOptions sampled(int64_t rows) {
    VerifyOptions o;
    o.full_reference_max_work = 0;
    o.sample_rows = rows;
    return o;
}

TEST(ReferenceGemm, MatchesHandComputedProductWithLeadingDims) {
    // A = [[1, -2, 3], [4, 5, -6]] with lda 4, B = [[7, 8], [9, -10], [11, 12]] with ldb 3.
    const float a[] = {1, -2, 3, 99, 4, 5, -6, 99};
    const float b[] = {7, 8, 99, 9, -10, 99, 11, 12, 99};
    double c[2 * 3] = {}, magnitude[2 * 3] = {};
    reference_gemm_fp64(2, 2, 3, a, 4, b, 3, c, 3, magnitude);
    EXPECT_EQ(c[0], 1 * 7 - 2 * 9 + 3 * 11);   // 22
    EXPECT_EQ(c[1], 1 * 8 + 2 * 10 + 3 * 12);  // 64
    EXPECT_EQ(c[3], 4 * 7 + 5 * 9 - 6 * 11);   // 7
    EXPECT_EQ(c[4], 4 * 8 - 5 * 10 - 6 * 12);  // -90
    EXPECT_EQ(magnitude[0], 1 * 7 + 2 * 9 + 3 * 11);
    EXPECT_EQ(magnitude[4], 4 * 8 + 5 * 10 + 6 * 12);

    const int64_t rows[] = {1};
    double row[2] = {};
    reference_gemm_rows_fp64(rows, 1, 2, 3, a, 4, b, 3, row, 2);
    EXPECT_EQ(row[0], 7);
    EXPECT_EQ(row[1], -90);
}

TEST(ReferenceGemm, BlockedAndThreadedMatchesPlainLoopAcrossBlockEdges) {
    // 300 crosses the k-block (128) and n-block (256) edges; enough work for several threads.
    const Problem p = random_problem(131, 300, 300);
    std::vector<double> c(size_t(p.m * p.n));
    reference_gemm_fp64(p.m, p.n, p.k, p.a.data(), p.k, p.b.data(), p.n, c.data(), p.n);
    for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
            double expected = 0;
            for (int64_t q = 0; q < p.k; ++q) expected += double(p.a[size_t(i * p.k + q)]) * p.b[size_t(q * p.n + j)];
            ASSERT_NEAR(c[size_t(i * p.n + j)], expected, 1e-12) << "at (" << i << ", " << j << ")";
        }
}

TEST(RandomFill, IsReproducibleInRangeAndNotConstant) {
    std::vector<float> x(10000), y(10000), z(10000);
    fill_uniform(x.data(), x.size(), 42, 3);
    fill_uniform(y.data(), y.size(), 42, 3);
    fill_uniform(z.data(), z.size(), 42, 4);
    EXPECT_EQ(x, y);
    EXPECT_NE(x, z);
    const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
    EXPECT_GE(*lo, -1.0f);
    EXPECT_LT(*hi, 1.0f);
    EXPECT_LT(*lo, -0.9f);
    EXPECT_GT(*hi, 0.9f);
    EXPECT_GT(std::set<float>(x.begin(), x.end()).size(), 9900u);
    // A prefix is the same numbers: element i depends only on (seed, stream, i).
    std::vector<float> prefix(100);
    fill_uniform(prefix.data(), prefix.size(), 42, 3);
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), x.begin()));
}

TEST(RandomFill, PoisonIsARecognisableNaN) {
    std::vector<float> x(17, 1.0f);
    poison_nan(x.data(), x.size());
    for (float v : x) {
        EXPECT_TRUE(std::isnan(v));
        EXPECT_TRUE(is_poison(v));
    }
    EXPECT_FALSE(is_poison(std::numeric_limits<float>::quiet_NaN()));
    EXPECT_FALSE(is_poison(0.0f));
}

TEST(VerifyGemm, DefaultTolerances) {
    EXPECT_EQ(default_tolerance(DType::fp32), 1e-5);
    EXPECT_EQ(default_tolerance(DType::tf32), 2e-3);
    EXPECT_EQ(default_tolerance(DType::bf16), 1e-2);
    EXPECT_EQ(default_tolerance(DType::fp16), 2e-3);
}

TEST(VerifyGemm, PassesCorrectFp32Results) {
    const Problem p = random_problem(40, 50, 4096);
    for (const auto& c : {rounded_product(p), fp32_loop_product(p)}) {
        const VerifyResult r = check(p, c);
        EXPECT_TRUE(r.passed) << r.reason;
        EXPECT_FALSE(r.sampled);
        EXPECT_TRUE(r.reason.empty());
        EXPECT_LT(r.max_rel_err, 1e-6);
    }
}

TEST(VerifyGemm, FailsOneNaN) {
    const Problem p = random_problem(8, 20, 16);
    auto c = rounded_product(p);
    c[3 * 20 + 17] = std::numeric_limits<float>::quiet_NaN();
    const VerifyResult r = check(p, c);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.reason.rfind("NaN at (3, 17) (bits 0x7fc00000) carries none of the harness's NaN patterns", 0), 0u)
        << r.reason;
    EXPECT_TRUE(std::isinf(r.max_rel_err));
}

TEST(VerifyGemm, FailsInf) {
    const Problem p = random_problem(8, 20, 16);
    auto c = rounded_product(p);
    c[5 * 20 + 2] = -std::numeric_limits<float>::infinity();
    const VerifyResult r = check(p, c);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.reason, "-Inf at (5, 2)");
}

TEST(VerifyGemm, FailsStillPoisonedElement) {
    const Problem p = random_problem(8, 20, 16);
    auto c = rounded_product(p);
    poison_nan(&c[7 * 20 + 19], 1);
    const VerifyResult r = check(p, c);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.reason.find("unwritten element at (7, 19)"), std::string::npos) << r.reason;
}

// ---- Where a NaN in C came from: its bits against the harness's patterns ------------------------------

float from_bits(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

TEST(NanDiagnosis, EachHarnessPatternNamesItsOrigin) {
    EXPECT_EQ(
        describe_non_finite(from_bits(kPoisonBits), 2, 3),
        "unwritten element at (2, 3): still holds C's poison NaN (never written, or C was read although beta = 0)");
    const struct {
        uint32_t bits;
        const char* origin;
    } cases[] = {
        {kPadAfterBBits, "computed from the padding after B: a value was read past the end of B"},
        {kPadBeforeBBits, "computed from the padding before B: a value was read before the start of B"},
        {kPadAfterABits, "computed from the padding after A: a value was read past the end of A"},
        {kPadBeforeABits, "computed from the padding before A: a value was read before the start of A"},
        {kGuardBits, "computed from the guard band around C: a value was read outside C"},
        // C's poison with another sign: it went through arithmetic, so C was read.
        {kPoisonBits | 0x80000000u, "computed from C's poison: C was read although beta = 0"},
    };
    for (const auto& c : cases) {
        const std::string reason = describe_non_finite(from_bits(c.bits), 2, 3);
        EXPECT_EQ(reason, std::string("NaN at (2, 3) ") + c.origin + " (the NaN carries its payload)")
            << std::hex << c.bits;
        // Arithmetic quiets a signalling NaN (the guard band's); the payload still names the origin.
        EXPECT_NE(describe_non_finite(from_bits(c.bits | 0x00400000u), 2, 3).find(c.origin), std::string::npos)
            << std::hex << c.bits;
    }
}

TEST(NanDiagnosis, NeverClaimsAnOriginTheBitsDoNotShow) {
    // The canonical NaN that GPU arithmetic returns for any NaN operand: no origin can be claimed.
    const std::string canonical = describe_non_finite(from_bits(0x7fffffffu), 0, 1);
    EXPECT_EQ(
        canonical.rfind("NaN at (0, 1): the canonical NaN 0x7fffffff, whose bits do not say where it came from", 0), 0u)
        << canonical;
    // x86's default NaN (0 * Inf and friends) and any other pattern: no input was NaN, nothing more.
    for (uint32_t bits : {0xffc00000u, 0x7fc00000u, 0x7f812345u}) {
        const std::string reason = describe_non_finite(from_bits(bits), 4, 5);
        EXPECT_NE(reason.find("carries none of the harness's NaN patterns and no element of A or B is NaN"),
                  std::string::npos)
            << reason;
        for (const char* claim : {"computed from", "padding", "unwritten", "poison"})
            EXPECT_EQ(reason.find(claim), std::string::npos) << reason;
    }
    EXPECT_EQ(describe_non_finite(std::numeric_limits<float>::infinity(), 1, 1), "Inf at (1, 1)");
}

// A kernel that reads one row past the end of B: what the harness's padding turns that into.
TEST(NanDiagnosis, AReadPastTheEndOfBIsNamedAndCounted) {
    const int64_t m = 6, n = 5, k = 4;
    const Problem p = random_problem(m, n, k);
    PaddedOperand b(size_t(k * n), operand_padding_floats(n), kPadBeforeBBits, kPadAfterBBits);
    std::copy(p.b.begin(), p.b.end(), b.data());
    std::vector<float> c(size_t(m * n));
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            volatile float acc = 0;  // volatile: computed at run time, as a kernel would
            for (int64_t q = 0; q <= k; ++q) acc = acc + p.a[size_t(i * k + std::min(q, k - 1))] * b.data()[q * n + j];
            c[size_t(i * n + j)] = acc;
        }
    const VerifyResult r = check(p, c);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.reason,
              "NaN at (0, 0) computed from the padding after B: a value was read past the end of B (the NaN "
              "carries its payload) (30 of 30 elements of C are not finite)");
}

TEST(PaddedOperand, NaNPaddingOnBothSidesOfTheData) {
    PaddedOperand a(10, operand_padding_floats(3), kPadBeforeABits, kPadAfterABits);
    EXPECT_EQ(a.size(), 10u);
    EXPECT_EQ(a.padding(), 1024u);  // at least 1024 elements, a multiple of 128
    EXPECT_EQ(operand_padding_floats(1000), 256000u);
    uint32_t before, after;
    std::memcpy(&before, a.data() - 1, sizeof before);
    std::memcpy(&after, a.data() + 10, sizeof after);
    EXPECT_EQ(before, kPadBeforeABits);
    EXPECT_EQ(after, kPadAfterABits);
    std::memcpy(&before, a.data() - a.padding(), sizeof before);
    std::memcpy(&after, a.data() + 10 + a.padding() - 1, sizeof after);
    EXPECT_EQ(before, kPadBeforeABits);
    EXPECT_EQ(after, kPadAfterABits);
}

TEST(VerifyGemm, FailsOneSkippedKTermAtK4096) {
    const Problem p = random_problem(16, 16, 4096);
    const VerifyResult r = check(p, fp32_loop_product(p, 1234));
    EXPECT_FALSE(r.passed);
    EXPECT_GT(r.max_rel_err, 1e-5);
    EXPECT_EQ(r.reason.rfind("error ", 0), 0u) << r.reason;
    EXPECT_NE(r.reason.find("> tolerance 1e-05"), std::string::npos) << r.reason;
}

TEST(VerifyGemm, FailsTransposedResult) {
    const Problem p = random_problem(64, 64, 64);
    const auto c = rounded_product(p);
    std::vector<float> transposed(c.size());
    for (int64_t i = 0; i < 64; ++i)
        for (int64_t j = 0; j < 64; ++j) transposed[size_t(j * 64 + i)] = c[size_t(i * 64 + j)];
    const VerifyResult r = check(p, transposed);
    EXPECT_FALSE(r.passed);
    EXPECT_GT(r.max_rel_err, 1e-2);
}

TEST(VerifyGemm, RespectsLeadingDimensionOfC) {
    const Problem p = random_problem(5, 6, 7);
    const auto packed = rounded_product(p);
    std::vector<float> c(5 * 9, std::numeric_limits<float>::quiet_NaN());  // padding is never looked at
    for (int64_t i = 0; i < 5; ++i) std::copy_n(&packed[size_t(i * 6)], 6, &c[size_t(i * 9)]);
    const VerifyResult r = verify_gemm(p.a.data(), p.b.data(), c.data(), 5, 6, 7, 7, 6, 9, 1e-5, 1);
    EXPECT_TRUE(r.passed) << r.reason;
}

TEST(VerifyGemmSampled, PassesCorrectResultAndCatchesNaNOutsideTheSample) {
    const Problem p = random_problem(300, 70, 50);
    auto c = fp32_loop_product(p);
    VerifyResult r = check(p, c, sampled(4));
    EXPECT_TRUE(r.passed) << r.reason;
    EXPECT_TRUE(r.sampled);
    c[size_t(150 * 70 + 3)] = std::numeric_limits<float>::quiet_NaN();
    r = check(p, c, sampled(0));
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.reason.rfind("NaN at (150, 3) ", 0), 0u) << r.reason;
}

TEST(VerifyGemmSampled, FreivaldsAloneCatchesAWrongRow) {
    const Problem p = random_problem(300, 70, 50);
    auto c = fp32_loop_product(p);
    std::copy_n(&c[size_t(201 * 70)], 70, &c[size_t(200 * 70)]);  // row 200 holds row 201's values
    const VerifyResult r = check(p, c, sampled(0));
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.reason.find("row 200"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("Freivalds"), std::string::npos) << r.reason;
    EXPECT_FALSE(check(p, c, sampled(4)).passed);
}

TEST(VerifyGemmSampled, FreivaldsAloneCatchesASingleWrongElement) {
    const Problem p = random_problem(300, 70, 50);
    auto c = fp32_loop_product(p);
    c[size_t(123 * 70 + 45)] += 0.25f;
    const VerifyResult r = check(p, c, sampled(0));
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.reason.find("row 123"), std::string::npos) << r.reason;
}

TEST(VerifyGemmSampled, SampledRowsCatchASkippedKTerm) {
    // Every element is off by ~1/K: too diffuse for the projection, but every sampled row shows it.
    const Problem p = random_problem(64, 64, 4096);
    const VerifyResult r = check(p, fp32_loop_product(p, 77), sampled(4));
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.reason.find("(sampled rows)"), std::string::npos) << r.reason;
}

// A 2048 x 2048 x 1024 product (above the full-reference limit) built cheaply: each row of A has one
// non-zero, so C's row i is a multiple of one row of B.
struct SparseProblem {
    int64_t m = 2048, n = 2048, k = 1024;
    std::vector<float> a, b, c;
    SparseProblem() : a(size_t(m * k), 0.0f), b(size_t(k * n)), c(size_t(m * n)) {
        fill_uniform(b.data(), b.size(), 5, 1);
        std::vector<float> scale(static_cast<size_t>(m));
        fill_uniform(scale.data(), scale.size(), 5, 2);
        for (int64_t i = 0; i < m; ++i) {
            const int64_t q = (i * 7) % k;
            const float s = scale[size_t(i)] == 0.0f ? 0.5f : scale[size_t(i)];
            a[size_t(i * k + q)] = s;
            for (int64_t j = 0; j < n; ++j) c[size_t(i * n + j)] = s * b[size_t(q * n + j)];
        }
    }
    VerifyResult check() const { return verify_gemm(a.data(), b.data(), c.data(), m, n, k, k, n, n, 1e-5, 3); }
};

TEST(VerifyGemmSampled, LargeShapeUsesSampledPathAndCatchesOneWrongElement) {
    SparseProblem p;
    VerifyResult r = p.check();
    EXPECT_TRUE(r.sampled);
    EXPECT_TRUE(r.passed) << r.reason;
    p.c[size_t(1001 * p.n + 777)] += 0.5f;
    r = p.check();
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.reason.find("1001"), std::string::npos) << r.reason;
}

TEST(VerifyGemm, RejectsInvalidDescription) {
    const Problem p = random_problem(4, 4, 4);
    const auto c = rounded_product(p);
    EXPECT_FALSE(verify_gemm(p.a.data(), p.b.data(), c.data(), 4, 4, 4, 3, 4, 4, 1e-5, 1).passed);
    EXPECT_FALSE(verify_gemm(p.a.data(), p.b.data(), c.data(), 0, 4, 4, 4, 4, 4, 1e-5, 1).passed);
}

// ---------------------------------------------------------------------------------------------------
// The tolerance per dtype and K (verify/tolerance.hpp, derived in docs/TOLERANCES.md).

float bf16_round(float x) {  // round to nearest even, as the harness does before the reference
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    std::memcpy(&x, &u, 4);
    return x;
}

float tf32_truncate(float x) {  // what a tensor core makes of an fp32 register: the worse of tf32's roundings
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u &= 0xffffe000u;
    std::memcpy(&x, &u, 4);
    return x;
}

float toward_zero(double x) {  // fp32 rounding by truncation, as tensor cores normalise
    float f = static_cast<float>(x);
    if (std::fabs(double(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
    return f;
}

// A tensor-core-like kernel: the accumulator and kb exact products summed, then truncated to fp32, block
// after block along k. tf32 truncates its inputs first (the reference keeps the fp32 ones).
std::vector<float> tensor_core_product(const Problem& p, int64_t kb, bool truncate_inputs_to_tf32) {
    auto in = [&](float x) { return truncate_inputs_to_tf32 ? tf32_truncate(x) : x; };
    std::vector<float> c(size_t(p.m * p.n));
    for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
            float acc = 0;
            for (int64_t q0 = 0; q0 < p.k; q0 += kb) {
                double block = acc;  // exact: products of <= 11-bit significands and one fp32, within double
                for (int64_t q = q0; q < std::min(p.k, q0 + kb); ++q)
                    block += double(in(p.a[size_t(i * p.k + q)])) * double(in(p.b[size_t(q * p.n + j)]));
                acc = toward_zero(block);
            }
            c[size_t(i * p.n + j)] = acc;
        }
    return c;
}

Problem bf16_problem(int64_t m, int64_t n, int64_t k) {
    Problem p = random_problem(m, n, k);
    for (float& x : p.a) x = bf16_round(x);
    for (float& x : p.b) x = bf16_round(x);
    return p;
}

VerifyResult check_as(const Problem& p, const std::vector<float>& c, double tolerance) {
    return verify_gemm(p.a.data(), p.b.data(), c.data(), p.m, p.n, p.k, p.k, p.n, p.n, tolerance, 99);
}

TEST(Tolerance, FollowsTheDerivation) {
    EXPECT_EQ(default_tolerance(DType::fp32, 4096), 1e-5);
    EXPECT_EQ(default_tolerance(DType::bf16, 4096), 4096 * 0x1p-22);  // 2 K 2^-23: 9.8e-4
    EXPECT_EQ(default_tolerance(DType::fp16, 257), 257 * 0x1p-22);
    const double e_in = 0x1p-9 + 0x1p-20;  // (1 + 2^-10)^2 - 1
    EXPECT_DOUBLE_EQ(default_tolerance(DType::tf32, 257), e_in + 257 * 0x1p-22 * (1 + e_in));
    EXPECT_LT(default_tolerance(DType::bf16, 1024), default_tolerance(DType::bf16, 1025));
    EXPECT_EQ(default_tolerance(DType::bf16, 0), default_tolerance(DType::bf16, 1));
    // The bound is the worst case in u: far above bf16's unit roundoff only where K makes it so.
    EXPECT_LT(default_tolerance(DType::bf16, 8192), kUnitRoundoffBf16);
}

TEST(Tolerance, PassesTensorCoreStyleResults) {
    for (int64_t k : {1, 17, 257, 4096}) {
        const Problem b = bf16_problem(24, 40, k);
        const VerifyResult rb = check_as(b, tensor_core_product(b, 16, false), default_tolerance(DType::bf16, k));
        EXPECT_TRUE(rb.passed) << "bf16 K=" << k << ": " << rb.reason;
        const Problem t = random_problem(24, 40, k);
        const VerifyResult rt = check_as(t, tensor_core_product(t, 8, true), default_tolerance(DType::tf32, k));
        EXPECT_TRUE(rt.passed) << "tf32 K=" << k << ": " << rt.reason;
        if (k >= 17) EXPECT_GT(rt.max_rel_err, 0.0) << "the tf32 model must actually round";
    }
}

TEST(Tolerance, FailsAResultOffByMoreThanTheBound) {
    for (DType dtype : {DType::bf16, DType::tf32, DType::fp16})
        for (int64_t k : {257, 4096}) {
            const Problem p = dtype == DType::bf16 ? bf16_problem(8, 12, k) : random_problem(8, 12, k);
            std::vector<double> ref(size_t(p.m * p.n)), magnitude(ref.size());
            reference_gemm_fp64(p.m, p.n, p.k, p.a.data(), p.k, p.b.data(), p.n, ref.data(), p.n, magnitude.data());
            const double tol = default_tolerance(dtype, k);
            const size_t at = size_t(5 * p.n + 7);
            std::vector<float> c(ref.begin(), ref.end());
            c[at] = static_cast<float>(ref[at] + 0.5 * tol * magnitude[at]);
            EXPECT_TRUE(check_as(p, c, tol).passed) << to_string(dtype) << " K=" << k << ": half the bound passes";
            c[at] = static_cast<float>(ref[at] - 1.5 * tol * magnitude[at]);
            const VerifyResult r = check_as(p, c, tol);
            EXPECT_FALSE(r.passed) << to_string(dtype) << " K=" << k << ": 1.5 times the bound must fail";
            EXPECT_NE(r.reason.find("(5, 7)"), std::string::npos) << r.reason;
        }
}

TEST(Tolerance, CatchesASkippedKTermInBf16AtModerateK) {
    // One product of ~|1| missing out of K = 257: a normalised error of order 1/K, 60x the bf16 bound here.
    const Problem p = bf16_problem(16, 16, 257);
    const VerifyResult r = check_as(p, fp32_loop_product(p, 100), default_tolerance(DType::bf16, p.k));
    EXPECT_FALSE(r.passed);
}

TEST(Tolerance, NaNAndInfNeverPass) {
    const Problem p = random_problem(6, 9, 33);
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity()})
        for (DType dtype : {DType::fp32, DType::tf32, DType::bf16, DType::fp16})
            for (double tol : {default_tolerance(dtype, 1 << 24), std::numeric_limits<double>::infinity()}) {
                std::vector<float> c = rounded_product(p);
                c[size_t(2 * p.n + 3)] = bad;
                const VerifyResult r = check_as(p, c, tol);
                EXPECT_FALSE(r.passed) << to_string(dtype) << " tolerance " << tol << " value " << bad;
                EXPECT_FALSE(std::isfinite(r.max_rel_err)) << "a non-finite result reports a finite error";
            }
}

}  // namespace
}  // namespace kreg
