#include "ops/gemm.hpp"

#include "verify/verify_gemm.hpp"

#include <cmath>

namespace kreg {

std::string GemmOperation::invalid_shape(const Shape& s) const {
    if (s.m < 1 || s.n < 1 || s.k < 1 || s.block != 0)
        return "invalid shape " + to_string(s) + ": every dimension must be >= 1";
    return "";
}

VerifyResult GemmOperation::verify(const float* a, const float* b, const float* c, const Shape& s, double tolerance,
                                   uint64_t seed) const {
    return verify_gemm(a, b, c, s.m, s.n, s.k, s.k, s.n, s.n, tolerance, seed);
}

double GemmOperation::expected(const float* a, const float* b, const Shape& s, size_t index, double& magnitude) const {
    const int64_t i = int64_t(index) / s.n, j = int64_t(index) % s.n;
    double ref = 0;
    magnitude = 0;
    for (int64_t p = 0; p < s.k; ++p) {
        const double term = double(a[size_t(i * s.k + p)]) * double(b[size_t(p * s.n + j)]);
        ref += term;
        magnitude += std::abs(term);
    }
    return ref;
}

kreg_gemm_args gemm_args(const Shape& shape, kreg_dtype dtype) {
    kreg_gemm_args args{};
    args.struct_size = sizeof(kreg_gemm_args);
    args.m = shape.m;
    args.n = shape.n;
    args.k = shape.k;
    args.lda = shape.k;
    args.ldb = shape.n;
    args.ldc = shape.n;
    args.alpha = 1.0;
    args.beta = 0.0;
    args.dtype = dtype;
    return args;
}

namespace {
kreg_gemm_args args_for(const Shape& shape, DType dtype, const CallOperands& o) {
    kreg_gemm_args args = gemm_args(shape, static_cast<kreg_dtype>(dtype));
    args.a = o.a;
    args.b = o.b;
    args.c = o.c;
    args.stream = o.stream;
    return args;
}
}  // namespace

kreg_status GemmOperation::describe_variant(const kreg_kernel_info& info, void* instance, const Shape& shape,
                                            DType dtype, const CallOperands& operands, char* buffer,
                                            size_t buffer_size) const {
    if (info.describe_gemm_variant == nullptr) return KREG_STATUS_UNSUPPORTED;  // 1.0/1.1 plugins read NULL here
    const kreg_gemm_args args = args_for(shape, dtype, operands);
    return info.describe_gemm_variant(instance, &args, buffer, buffer_size);
}

}  // namespace kreg
