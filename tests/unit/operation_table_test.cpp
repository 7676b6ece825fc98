// The operation table (common/operations.def) as the rest of the runner reads it: the enum and names, the
// shape keys, the operands' extents, the work model and the rate, and the ABI call ops/ builds from them.
#include "common/operation_table.hpp"
#include "ops/operation.hpp"

#include <gtest/gtest.h>

namespace kreg {
namespace {

TEST(OperationTable, EnumNamesAndAbiValuesComeFromOneRow) {
    ASSERT_EQ(all_operations().size(), 3u);
    for (Operation op : all_operations()) {
        const OperationRow& row = operation_row(op);
        EXPECT_EQ(row.id, op);
        EXPECT_EQ(int(row.abi), int(op)) << row.name;  // Operation's numbers are the ABI's
        EXPECT_EQ(to_string(op), row.name);
        EXPECT_EQ(parse_operation(row.name), op);
        EXPECT_EQ(operation_row(row.abi), &row);
    }
    EXPECT_EQ(operation_row(static_cast<kreg_operation>(99)), nullptr);
    EXPECT_FALSE(parse_operation("gemv"));
    EXPECT_EQ(operation_names(), "gemm, transpose or block_transpose");
}

TEST(OperationTable, ShapeKeysAndTheirSyntax) {
    EXPECT_EQ(size_syntax(Operation::gemm), "MxNxK");
    EXPECT_EQ(size_syntax(Operation::transpose), "MxN");
    EXPECT_EQ(size_syntax(Operation::block_transpose), "MxN");
    const OperationRow& block = operation_row(Operation::block_transpose);
    ASSERT_NE(block.param(), nullptr);
    EXPECT_STREQ(block.param()->name, "block");
    EXPECT_EQ(block.param()->max, kMaxTileEdge);
    EXPECT_EQ(block.param()->divides[0], Dim::m);
    EXPECT_EQ(block.param()->divides[1], Dim::n);
    EXPECT_EQ(operation_row(Operation::gemm).param(), nullptr);
    EXPECT_TRUE(operation_row(Operation::gemm).has_key(Dim::k));
    EXPECT_FALSE(operation_row(Operation::transpose).has_key(Dim::k));

    const Shape s = shape_of(Operation::block_transpose, {64, 32, 8});
    EXPECT_EQ(s, (Shape{64, 32, 0, 8}));  // the block in its own member, k absent (0)
    EXPECT_EQ(key_values(Operation::block_transpose, s), (std::vector<int64_t>{64, 32, 8}));
    EXPECT_EQ(size_text(Operation::block_transpose, s), "64x32");
    EXPECT_EQ(shape_of(Operation::gemm, {2, 3, 4}), (Shape{2, 3, 4, 0}));
    EXPECT_EQ(shape_of(Operation::transpose, {5, 7}), (Shape{5, 7, 0, 0}));
    EXPECT_THROW(shape_of(Operation::transpose, {5, 7, 1}), std::logic_error);
}

TEST(OperationTable, WorkModelAndRateAreTheRowsValues) {
    // GEMM: 2MNK; inputs in the dtype's element, C in fp32.
    EXPECT_EQ(work_flops(Operation::gemm, Shape{2, 3, 4, 0}), 48.0);
    EXPECT_EQ(work_bytes(Operation::gemm, Shape{2, 3, 4, 0}, DType::fp32), 4.0 * (8 + 12) + 4.0 * 6);
    EXPECT_EQ(work_bytes(Operation::gemm, Shape{2, 3, 4, 0}, DType::bf16), 2.0 * (8 + 12) + 4.0 * 6);
    // Transposes: no FLOPs; A read once and the output written once, in place or not.
    EXPECT_EQ(work_flops(Operation::transpose, Shape{8, 4, 0, 0}), 0.0);
    EXPECT_EQ(work_bytes(Operation::transpose, Shape{8, 4, 0, 0}, DType::fp32), 2.0 * 8 * 4 * 4);
    EXPECT_EQ(work_bytes(Operation::block_transpose, Shape{8, 4, 0, 2}, DType::fp32), 2.0 * 8 * 4 * 4);
    EXPECT_EQ(operation_row(Operation::gemm).bound, Bound::compute);
    EXPECT_STREQ(operation_row(Operation::gemm).rate_field(), "gflops");
    EXPECT_STREQ(operation_row(Operation::transpose).rate_unit(), "GB/s");
    // 2 GFLOP in 1 ms is 2000 GFLOP/s; 8 MB in 1 ms is 8 GB/s.
    EXPECT_DOUBLE_EQ(work_rate(Operation::gemm, Shape{1000, 1000, 1000, 0}, DType::fp32, 1.0), 2000.0);
    EXPECT_DOUBLE_EQ(work_rate(Operation::transpose, Shape{1000, 1000, 0, 0}, DType::fp32, 1.0), 8.0);
}

TEST(OperationTable, GeometryAndTheAbiCallComeFromTheExtents) {
    const OperandGeometry g = operation_def(Operation::gemm).geometry(Shape{2, 3, 4, 0});
    EXPECT_EQ(g.a_count, 8u);
    EXPECT_EQ(g.b_count, 12u);
    EXPECT_EQ(g.c_count, 6u);
    EXPECT_EQ(g.a_cols, 4);
    EXPECT_FALSE(g.in_place);
    const OperandGeometry t = operation_def(Operation::transpose).geometry(Shape{2, 3, 0, 0});
    EXPECT_EQ(t.b_count, 0u);
    EXPECT_EQ(t.c_cols, 2);  // the output is N x M
    EXPECT_TRUE(operation_def(Operation::block_transpose).geometry(Shape{4, 4, 0, 2}).in_place);

    int a = 0, b = 0, c = 0;
    const CallOperands operands{&a, &b, &c, nullptr};
    const kreg_call gemm = operation_def(Operation::gemm).abi_call(Shape{2, 3, 4, 0}, DType::bf16, operands);
    EXPECT_EQ(gemm.struct_size, sizeof(kreg_call));
    EXPECT_EQ(gemm.operation, KREG_OPERATION_GEMM);
    EXPECT_EQ(gemm.dtype, KREG_DTYPE_BF16);
    EXPECT_EQ(gemm.sizes[0], 2);
    EXPECT_EQ(gemm.sizes[2], 4);
    EXPECT_EQ(gemm.sizes[3], 0);
    EXPECT_EQ(gemm.lda, 4);
    EXPECT_EQ(gemm.ldb, 3);
    EXPECT_EQ(gemm.ldc, 3);
    EXPECT_EQ(gemm.alpha, 1.0);
    EXPECT_EQ(gemm.b, &b);
    const kreg_call tr = operation_def(Operation::transpose).abi_call(Shape{2, 3, 0, 0}, DType::fp32, operands);
    EXPECT_EQ(tr.sizes[2], 0);
    EXPECT_EQ(tr.lda, 3);
    EXPECT_EQ(tr.ldb, 0);
    EXPECT_EQ(tr.b, nullptr);  // no B operand
    EXPECT_EQ(tr.ldc, 2);
    const kreg_call bt = operation_def(Operation::block_transpose).abi_call(Shape{4, 6, 0, 2}, DType::fp32, operands);
    EXPECT_EQ(bt.sizes[2], 2);  // the block is the third size
    EXPECT_EQ(bt.a, nullptr);   // in place: C alone
    EXPECT_EQ(bt.c, &c);
    EXPECT_EQ(bt.ldc, 6);
}

}  // namespace
}  // namespace kreg
