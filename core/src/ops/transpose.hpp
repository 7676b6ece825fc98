// transpose: B[N x M] = A[M x N]^T (the output is C here, N x M); block_transpose: A[M x N] with every
// block x block tile transposed where it stands, in place. Both move data without arithmetic, so both
// are checked bit for bit, every element, against the exact result (a NaN payload must survive too),
// and both are memory-bound: their roofline ceiling is the device-to-device copy bandwidth.
#pragma once

#include "ops/operation.hpp"

namespace kreg {

class TransposeOperation : public OperationDef {
public:
    Operation id() const override { return Operation::transpose; }
    std::string invalid_shape(const Shape& shape) const override;
    bool exact() const override { return true; }
    VerifyResult verify(const float* a, const float* b, const float* c, const Shape& shape, double tolerance,
                        uint64_t seed) const override;
    double expected(const float* a, const float* b, const Shape& shape, size_t index, double& magnitude) const override;

    size_t exact_source(const Shape& shape, size_t index) const override { return source_of(shape, index); }
    void plant_special_values(std::vector<float>& a, uint64_t seed) const override;

    // Flat index into A of the value that belongs at flat index `index` of the output.
    virtual size_t source_of(const Shape& shape, size_t index) const;
};

class BlockTransposeOperation final : public TransposeOperation {
public:
    Operation id() const override { return Operation::block_transpose; }
    std::string invalid_shape(const Shape& shape) const override;

    size_t source_of(const Shape& shape, size_t index) const override;
};

// The exact references, for tests and tools: out (N x M) = a (M x N)^T; out (M x N) = a with each
// block x block tile transposed.
void reference_transpose(const float* a, float* out, int64_t m, int64_t n);
void reference_block_transpose(const float* a, float* out, int64_t m, int64_t n, int64_t block);

// The bit patterns plant_special_values writes into A (none of them the poison kPoisonBits), in order.
const std::vector<uint32_t>& transpose_special_bits();

}  // namespace kreg
