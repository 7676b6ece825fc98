// GEMM: C[M x N] = A[M x K] * B[K x N], checked within a tolerance against the fp64 reference
// (verify/verify_gemm.hpp), compute-bound on the roofline.
#pragma once

#include "ops/operation.hpp"

namespace kreg {

class GemmOperation final : public OperationDef {
public:
    Operation id() const override { return Operation::gemm; }
    std::string invalid_shape(const Shape& shape) const override;
    bool exact() const override { return false; }
    VerifyResult verify(const float* a, const float* b, const float* c, const Shape& shape, double tolerance,
                        uint64_t seed) const override;
    double expected(const float* a, const float* b, const Shape& shape, size_t index, double& magnitude) const override;
    kreg_status describe_variant(const kreg_kernel_info& info, void* instance, const Shape& shape, DType dtype,
                                 const CallOperands& operands, char* buffer, size_t buffer_size) const override;
};

// The arguments of every GEMM call the runner makes: C = A * B (alpha 1, beta 0), packed row-major.
kreg_gemm_args gemm_args(const Shape& shape, kreg_dtype dtype);

}  // namespace kreg
