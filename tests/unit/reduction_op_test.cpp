// core/src/ops/reduction: the tolerance docs/TOLERANCES.md ("Reduction") derives, the exact fp64 reference, the
// sentinels, and the check: correct fp32 orders pass, a dropped or doubled element fails, NaN never passes.
#include "common/operation_table.hpp"
#include "ops/operation.hpp"
#include "ops/reduction.hpp"
#include "verify/random_fill.hpp"
#include "verify/verify_gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

namespace kreg {
namespace {

const OperationDef& op() { return operation_def(Operation::reduction); }

Shape shape_of(int64_t n) { return Shape{0, n, 0, 0}; }  // the table's reduction shape: n alone

// The harness's inputs for n: uniform in [-1, 1), then the sentinels (as pipeline.cpp and fill_call_inputs do).
std::vector<float> inputs(int64_t n, uint64_t seed) {
    std::vector<float> x(static_cast<size_t>(n));
    fill_uniform(x.data(), x.size(), seed, 0);
    op().plant_special_values(x, seed);
    return x;
}

float pairwise(const float* x, size_t n) {
    if (n <= 8) {
        float s = 0;
        for (size_t i = 0; i < n; ++i) s += x[i];
        return s;
    }
    return pairwise(x, n / 2) + pairwise(x + n / 2, n - n / 2);
}

float left_to_right(const std::vector<float>& x) {
    float s = 0;
    for (float v : x) s += v;
    return s;
}

// What a grid-stride kernel of `threads` threads computes: one chain per thread, then a pairwise tree.
float grid_stride(const std::vector<float>& x, size_t threads) {
    std::vector<float> partial(threads, 0.0f);
    for (size_t i = 0; i < x.size(); ++i) partial[i % threads] += x[i];
    return pairwise(partial.data(), partial.size());
}

VerifyResult check(const std::vector<float>& x, float out) {
    const Shape s = shape_of(int64_t(x.size()));
    return op().verify(x.data(), nullptr, &out, s, op().default_tolerance(s, DType::fp32), 0);
}

TEST(ReductionOp, DepthToleranceAndSentinelsAreThoseOfTheTable) {
    EXPECT_EQ(reduction_depth(1), 257);
    EXPECT_EQ(reduction_depth(65536), 257);
    EXPECT_EQ(reduction_depth(65537), 258);
    EXPECT_EQ(reduction_depth(int64_t(1) << 26), 1280);
    EXPECT_NEAR(reduction_tolerance(1), 1.53e-5, 0.01e-5);
    EXPECT_NEAR(reduction_tolerance(int64_t(1) << 26), 7.63e-5, 0.01e-5);
    EXPECT_EQ(op().default_tolerance(shape_of(1000), DType::fp32), reduction_tolerance(1000));
    EXPECT_EQ(reduction_sentinel(1), 1.0f);
    EXPECT_EQ(reduction_sentinel(1000), 1.0f);
    EXPECT_EQ(reduction_sentinel(1000003), 128.0f);
    EXPECT_EQ(reduction_sentinel(int64_t(1) << 24), 4096.0f);
    EXPECT_EQ(reduction_sentinel(int64_t(1) << 26), 32768.0f);
}

TEST(ReductionOp, GeometryWorkAndShapes) {
    const OperandGeometry g = op().geometry(shape_of(1000));
    EXPECT_EQ(g.a_count, 1000u);
    EXPECT_EQ(g.b_count, 0u);
    EXPECT_EQ(g.c_count, 1u);
    EXPECT_FALSE(g.in_place);
    EXPECT_EQ(g.a_cols, 1);  // the harness pads A by 256 rows: 256 n floats for a 1 x n row, too many at n = 2^26
    EXPECT_FALSE(op().exact());
    // The table's row: copy-bound, no FLOPs, x read once and the result written once.
    EXPECT_EQ(operation_row(Operation::reduction).bound, Bound::copy);
    EXPECT_EQ(work_flops(Operation::reduction, shape_of(1000)), 0.0);
    EXPECT_EQ(work_bytes(Operation::reduction, shape_of(1000), DType::fp32), 4004.0);
    EXPECT_EQ(key_values(Operation::reduction, shape_of(1000)), (std::vector<int64_t>{1000}));
    EXPECT_EQ(op().invalid_shape(shape_of(1)), "");
    EXPECT_NE(op().invalid_shape(shape_of(0)), "");
    EXPECT_NE(op().invalid_shape(Shape{2, 10, 0, 0}), "");  // no m
    EXPECT_NE(op().invalid_shape(Shape{0, 10, 3, 0}), "");  // no k
}

TEST(ReductionOp, SentinelsSitAtBothEndsAndInsideWithOneSign) {
    EXPECT_EQ(reduction_sentinel_positions(1, 5), (std::vector<size_t>{0}));
    EXPECT_EQ(reduction_sentinel_positions(2, 5), (std::vector<size_t>{0, 1}));
    for (uint64_t seed = 0; seed < 50; ++seed) {
        const std::vector<size_t> at = reduction_sentinel_positions(1000, seed);
        ASSERT_EQ(at.size(), 3u);
        EXPECT_EQ(at[0], 0u);
        EXPECT_EQ(at[1], 999u);
        EXPECT_GT(at[2], 0u);
        EXPECT_LT(at[2], 999u);
    }
    std::set<size_t> inside;
    for (uint64_t seed = 0; seed < 50; ++seed) inside.insert(reduction_sentinel_positions(1000, seed)[2]);
    EXPECT_GT(inside.size(), 10u) << "the inside sentinel moves with the seed";
    const std::vector<float> x = inputs(1000, 9);
    const float s = x[0];
    EXPECT_EQ(std::abs(s), reduction_sentinel(1000));
    EXPECT_EQ(x[999], s);
    EXPECT_EQ(x[reduction_sentinel_positions(1000, 9)[2]], s);
}

TEST(ReductionOp, TheFp64ReferenceIsExact) {
    // Every input is a multiple of 2^-23: scaled by 2^23 they are integers, and their int64 sum is exact.
    const std::vector<float> x = inputs(int64_t(1) << 20, 3);
    int64_t scaled = 0, scaled_abs = 0;
    for (float v : x) {
        const double k = std::ldexp(double(v), 23);
        ASSERT_EQ(k, std::floor(k));
        scaled += int64_t(k);
        scaled_abs += std::abs(int64_t(k));
    }
    double abs_sum = 0;
    const double sum = reference_sum(x.data(), int64_t(x.size()), abs_sum);
    EXPECT_EQ(sum, std::ldexp(double(scaled), -23));
    EXPECT_EQ(abs_sum, std::ldexp(double(scaled_abs), -23));
}

TEST(ReductionOp, CorrectFp32OrdersPass) {
    for (int64_t n : {int64_t(1), int64_t(2), int64_t(3), int64_t(1000), int64_t(1000003)}) {
        const std::vector<float> x = inputs(n, 11);
        const VerifyResult pw = check(x, pairwise(x.data(), x.size()));
        EXPECT_TRUE(pw.passed) << "n = " << n << ": " << pw.reason;
        const VerifyResult gs = check(x, grid_stride(x, 4096));
        EXPECT_TRUE(gs.passed) << "n = " << n << ": " << gs.reason;
        // Outside the bound's depth for n > 257, and inside the tolerance on these inputs (TOLERANCES.md).
        const VerifyResult seq = check(x, left_to_right(x));
        EXPECT_TRUE(seq.passed) << "n = " << n << ": " << seq.reason;
        EXPECT_LT(pw.max_rel_err, reduction_tolerance(n) / 10) << "n = " << n;
    }
}

TEST(ReductionOp, ADroppedOrDoubledElementFails) {
    for (int64_t n : {int64_t(1), int64_t(2), int64_t(1000), int64_t(1000003), int64_t(1) << 21}) {
        const std::vector<float> x = inputs(n, 17);
        // The last element dropped: what a kernel that forgets the tail computes.
        const float dropped = pairwise(x.data(), x.size() - 1);
        const VerifyResult d = check(x, dropped);
        EXPECT_FALSE(d.passed) << "n = " << n;
        EXPECT_NE(d.reason.find("exact sum"), std::string::npos) << d.reason;
        // The first element added twice: a block boundary counted by two blocks.
        const float doubled = pairwise(x.data(), x.size()) + x[0];
        EXPECT_FALSE(check(x, doubled).passed) << "n = " << n;
        // The inside sentinel dropped.
        if (n >= 3) {
            std::vector<float> without = x;
            without[reduction_sentinel_positions(n, 17)[2]] = 0.0f;
            EXPECT_FALSE(check(x, pairwise(without.data(), without.size())).passed) << "n = " << n;
        }
    }
}

TEST(ReductionOp, ASmallOrdinaryElementDroppedFailsAtTheRubricsSizes) {
    // Below n ~ 30,000 an ordinary element of |x| ~ 1/2 is above the tolerance too.
    const std::vector<float> x = inputs(1000, 23);
    const float sentinel = reduction_sentinel(1000);
    size_t at = 500;
    while (std::abs(x[at]) < 0.25f || std::abs(x[at]) == sentinel) ++at;  // an ordinary, not tiny, element
    std::vector<float> without = x;
    without[at] = 0.0f;
    EXPECT_FALSE(check(x, pairwise(without.data(), without.size())).passed) << "x[" << at << "] = " << x[at];
}

TEST(ReductionOp, NanInfAndThePoisonNeverPass) {
    const std::vector<float> x = inputs(100, 1);
    const Shape s = shape_of(100);
    const float huge = std::numeric_limits<float>::max();
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -huge * 2}) {
        const VerifyResult r = op().verify(x.data(), nullptr, &bad, s, 1e300, 0);
        EXPECT_FALSE(r.passed) << bad;
        EXPECT_TRUE(std::isinf(r.max_rel_err));
    }
    float poison = 0;
    poison_nan(&poison, 1);
    const VerifyResult r = op().verify(x.data(), nullptr, &poison, s, 1e300, 0);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.reason.find("poison"), std::string::npos) << r.reason;
}

TEST(ReductionOp, TheSampledCheckSeesTheSameSumAndMagnitude) {
    const std::vector<float> x = inputs(777, 4);
    double magnitude = 0, abs_sum = 0;
    const double expected = op().expected(x.data(), nullptr, shape_of(777), 0, magnitude);
    EXPECT_EQ(expected, reference_sum(x.data(), 777, abs_sum));
    EXPECT_EQ(magnitude, abs_sum);
}

}  // namespace
}  // namespace kreg
