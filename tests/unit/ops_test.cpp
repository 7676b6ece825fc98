// core/src/ops: the exact references of the transposes, their bit-exact check, and the special values
// planted in A.
#include "common/operation_table.hpp"
#include "ops/operation.hpp"
#include "ops/transpose.hpp"
#include "verify/random_fill.hpp"
#include "verify/verify_gemm.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <set>
#include <vector>

namespace kreg {
namespace {

uint32_t bits(float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}
float from_bits(uint32_t u) {
    float v;
    std::memcpy(&v, &u, sizeof v);
    return v;
}

std::vector<float> iota(size_t count) {
    std::vector<float> v(count);
    std::iota(v.begin(), v.end(), 0.0f);
    return v;
}

TEST(Ops, TransposeReference) {
    const std::vector<float> a = iota(6);  // 2 x 3: [0 1 2; 3 4 5]
    std::vector<float> out(6);
    reference_transpose(a.data(), out.data(), 2, 3);
    EXPECT_EQ(out, (std::vector<float>{0, 3, 1, 4, 2, 5}));  // 3 x 2
}

TEST(Ops, BlockTransposeReferenceTransposesEachTileWhereItStands) {
    const std::vector<float> a = iota(8);  // 2 x 4 in 2 x 2 tiles: [0 1 | 2 3; 4 5 | 6 7]
    std::vector<float> out(8);
    reference_block_transpose(a.data(), out.data(), 2, 4, 2);
    EXPECT_EQ(out, (std::vector<float>{0, 4, 2, 6, 1, 5, 3, 7}));
    reference_block_transpose(a.data(), out.data(), 2, 4, 1);  // 1 x 1 tiles: unchanged
    EXPECT_EQ(out, a);
}

TEST(Ops, TheCheckIsBitExactOnEveryElement) {
    const Shape shape{17, 33, 0, 0};
    const OperationDef& op = operation_def(Operation::transpose);
    std::vector<float> a = iota(17 * 33);
    op.plant_special_values(a, 7);
    std::vector<float> c(a.size());
    reference_transpose(a.data(), c.data(), 17, 33);
    EXPECT_TRUE(op.verify(a.data(), nullptr, c.data(), shape, 0, 0).passed);

    for (uint32_t special : transpose_special_bits()) {
        // Find where the special value landed in the output, then change only its bits.
        size_t at = c.size();
        for (size_t x = 0; x < c.size(); ++x)
            if (bits(c[x]) == special) at = x;
        ASSERT_LT(at, c.size()) << std::hex << special;
        std::vector<float> wrong = c;
        // The quiet form of a signalling NaN, +0 for -0, 0 for the subnormal, another NaN payload.
        const uint32_t changed = special == 0x7f812345u   ? 0x7fc12345u
                                 : special == 0x80000000u ? 0u
                                 : special == 1u          ? 0u
                                                          : special ^ 0x10u;
        wrong[at] = from_bits(changed);
        const VerifyResult v = op.verify(a.data(), nullptr, wrong.data(), shape, 0, 0);
        EXPECT_FALSE(v.passed) << std::hex << special;
        EXPECT_NE(v.reason.find("(1 of 561 elements differ)"), std::string::npos) << v.reason;
    }
    std::vector<float> unwritten = c;
    unwritten[40] = from_bits(kPoisonBits);
    const VerifyResult v = op.verify(a.data(), nullptr, unwritten.data(), shape, 0, 0);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.reason.find("element (2, 6) was never written"), std::string::npos) << v.reason;
}

TEST(Ops, EverySpecialValueIsPlantedAndNoneIsThePoison) {
    std::vector<float> a(100, 1.0f);
    operation_def(Operation::transpose).plant_special_values(a, 3);
    std::set<uint32_t> found;
    for (float v : a)
        if (bits(v) != bits(1.0f)) found.insert(bits(v));
    EXPECT_EQ(found.size(), transpose_special_bits().size());
    EXPECT_EQ(found.count(kPoisonBits), 0u);
    std::vector<float> gemm_a(100, 1.0f);
    operation_def(Operation::gemm).plant_special_values(gemm_a, 3);  // GEMM inputs stay finite
    EXPECT_EQ(gemm_a, std::vector<float>(100, 1.0f));
}

TEST(Ops, WorkModelsAndShapes) {
    EXPECT_EQ(work_bytes(Operation::transpose, Shape{8, 4, 0, 0}, DType::fp32), 2.0 * 8 * 4 * 4);
    EXPECT_EQ(work_flops(Operation::transpose, Shape{8, 4, 0, 0}), 0.0);
    EXPECT_EQ(work_flops(Operation::gemm, Shape{2, 3, 4, 0}), 48.0);
    EXPECT_NE(operation_def(Operation::block_transpose).invalid_shape(Shape{6, 4, 0, 4}), "");
    EXPECT_EQ(operation_def(Operation::block_transpose).invalid_shape(Shape{8, 4, 0, 4}), "");
    EXPECT_NE(operation_def(Operation::transpose).invalid_shape(Shape{8, 4, 2, 0}), "");
    EXPECT_TRUE(operation_def(Operation::block_transpose).geometry(Shape{8, 4, 0, 2}).in_place);
}

}  // namespace
}  // namespace kreg
