// The cpu_naive kernel (see cpu_naive.cpp for the idea): the body both plugins compile.
#include "naive_gemm.hpp"

#include <kreg/kernel.hpp>

namespace kreg::cpu_naive {

// Traffic model: nothing is reused from cache. Each of the m*n dot products reads k elements of A and
// k of B, and C is written once (read once more when beta != 0, which the model ignores).
double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype /*dtype*/) {
    const double elements = 2.0 * double(m) * double(n) * double(k) + double(m) * double(n);
    return elements * sizeof(float);
}

namespace {

void check_arguments(const kreg_gemm_args& args) {
    if (args.struct_size < sizeof(kreg_gemm_args))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_gemm_args is smaller than this plugin expects");
    if (args.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
    if (args.m < 1 || args.n < 1 || args.k < 1)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n and k must be >= 1");
    if (args.lda < args.k || args.ldb < args.n || args.ldc < args.n)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "a leading dimension is smaller than its row");
    if (args.a == nullptr || args.b == nullptr || args.c == nullptr)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
}

}  // namespace

void run(const kreg_gemm_args& args) {
    check_arguments(args);
    const auto* a = static_cast<const float*>(args.a);
    const auto* b = static_cast<const float*>(args.b);
    auto* c = static_cast<float*>(args.c);
    const float alpha = float(args.alpha), beta = float(args.beta);
    for (int64_t i = 0; i < args.m; ++i) {
        for (int64_t j = 0; j < args.n; ++j) {
            float sum = 0.0f;
            for (int64_t p = 0; p < args.k; ++p) sum += a[i * args.lda + p] * b[p * args.ldb + j];
            float& out = c[i * args.ldc + j];
            out = args.beta == 0.0 ? alpha * sum : alpha * sum + beta * out;
        }
    }
}

}  // namespace kreg::cpu_naive
