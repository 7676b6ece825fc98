#include "ops/gemm.hpp"

#include "verify/verify_gemm.hpp"

#include <cmath>

namespace kreg {

std::string GemmOperation::invalid_shape(const Shape& s) const {
    if (s.m < 1 || s.n < 1 || s.k < 1 || s.block != 0)
        return "invalid shape " + to_string(s) + ": every dimension must be >= 1";
    return "";
}

OperandGeometry GemmOperation::geometry(const Shape& s) const {
    OperandGeometry g;
    g.a_count = size_t(s.m) * size_t(s.k);
    g.b_count = size_t(s.k) * size_t(s.n);
    g.c_count = size_t(s.m) * size_t(s.n);
    g.a_cols = s.k;
    g.b_cols = s.n;
    g.c_cols = s.n;
    return g;
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

double GemmOperation::bytes_moved(const Shape& s, DType dtype) const {
    const double in = (dtype == DType::bf16 || dtype == DType::fp16) ? 2.0 : 4.0;
    return in * (double(s.m) * double(s.k) + double(s.k) * double(s.n)) + 4.0 * double(s.m) * double(s.n);
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

std::string GemmOperation::call(const kreg_kernel_info& info, void* instance, const Shape& shape, DType dtype,
                                const CallOperands& operands) const {
    const kreg_gemm_args args = args_for(shape, dtype, operands);
    char error[1024];
    error[0] = '\0';
    const kreg_status status = info.run_gemm(instance, &args, error, sizeof error);
    if (status == KREG_STATUS_OK) return "";
    error[sizeof error - 1] = '\0';
    return kernel_failure(status, error);
}

kreg_status GemmOperation::describe_launch(const kreg_kernel_info& info, void* instance, const Shape& shape,
                                           DType dtype, const CallOperands& operands, kreg_launch_info& launch,
                                           char* error, size_t error_size) const {
    if (info.describe_launch == nullptr) return KREG_STATUS_UNSUPPORTED;
    const kreg_gemm_args args = args_for(shape, dtype, operands);
    return info.describe_launch(instance, &args, &launch, error, error_size);
}

kreg_status GemmOperation::describe_variant(const kreg_kernel_info& info, void* instance, const Shape& shape,
                                            DType dtype, const CallOperands& operands, char* buffer,
                                            size_t buffer_size) const {
    if (info.describe_gemm_variant == nullptr) return KREG_STATUS_UNSUPPORTED;  // 1.0/1.1 plugins read NULL here
    const kreg_gemm_args args = args_for(shape, dtype, operands);
    return info.describe_gemm_variant(instance, &args, buffer, buffer_size);
}

}  // namespace kreg
