// student_gemm: your starting point. A correct, plain CPU GEMM; make it faster and keep it correct.
//
// C = alpha * A * B + beta * C, all row-major, fp32 (see struct kreg_gemm_args in <kreg/abi.h>).
// This is the textbook i-j-k triple loop, as fast as cpu_naive: it earns the lab's correctness points and
// none of its speed tiers (configs/grading/cpu-lab.json). The innermost loop walks a column of B, a new
// cache line per step. First step: the loop order i-k-j, so that the innermost loop walks a row of B and a
// row of C with unit stride and the compiler can vectorise it. Then: blocking for the caches, a register
// tile, threads (see plugins/cpu_blocked in the kreg sources).
#include <kreg/kernel.hpp>

#include <cstdint>

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

// Optional traffic model for the roofline: nothing is reused from cache, each of the m*n dot products
// reads k elements of A and k of B. Update it as your kernel reuses more, or delete it (and the spec line).
double student_model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype /*dtype*/) {
    const double elements = 2.0 * double(m) * double(n) * double(k) + double(m) * double(n);
    return elements * sizeof(float);
}

class StudentGemm final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "student_gemm";  // unique across every loaded plugin; what --kernels selects
        s.description = "textbook i-j-k triple loop: the starting point";
        s.backend = KREG_BACKEND_CPU;
        s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
        // Any shape (multiples of 1, no maximum); say so if yours needs e.g. m % 64 == 0.
        s.m_multiple = s.n_multiple = s.k_multiple = 1;
        // This kernel computes the full alpha*A*B + beta*C and accepts padded rows (lda > k, ...), so it
        // may be called with either. Clear a flag if you drop that support: you are then only asked
        // for C = A*B with packed rows.
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        s.model_global_bytes = &student_model_bytes;
        return s;
    }

    void run_gemm(const kreg_gemm_args& args) override {
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
                // beta == 0 must not read C (it may hold garbage or NaN), as in BLAS.
                out = args.beta == 0.0 ? alpha * sum : alpha * sum + beta * out;
            }
        }
    }
};

}  // namespace

// The plugin's name and version (shown by `runner --list` and recorded in every report), then every
// kernel class it provides: KREG_PLUGIN("my_gemm", "0.1.0", StudentGemm, StudentGemmV2)
KREG_PLUGIN("my_gemm", "0.1.0", StudentGemm)
