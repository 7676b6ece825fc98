// student_transpose: a starting point for the transpose operation on the CPU. Correct and simple; make it
// faster and keep it correct.
//
// B[N x M] = A[M x N]^T: b[j * ldb + i] = a[i * lda + j], row-major fp32 (see struct kreg_transpose_args in
// <kreg/abi.h>). Checked bit for bit: copy the values, do no arithmetic on them. Walking A by rows writes B
// by columns, one cache line per element; the classic next step is to transpose in square blocks that fit
// in L1 (e.g. 32x32), so both sides reuse their cache lines.
#include <kreg/kernel.hpp>

#include <cstdint>

namespace {

void check_arguments(const kreg_transpose_args& args) {
    if (args.struct_size < sizeof(kreg_transpose_args))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_transpose_args is smaller than this plugin expects");
    if (args.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
    if (args.m < 1 || args.n < 1) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m and n must be >= 1");
    if (args.lda < args.n || args.ldb < args.m)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "a leading dimension is smaller than its row");
    if (args.a == nullptr || args.b == nullptr) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
}

class StudentTranspose final : public kreg::ITransposeKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "student_transpose";  // unique across every loaded plugin
        s.description = "row by row: reads A with unit stride, writes B with stride ldb";
        s.backend = KREG_BACKEND_CPU;
        s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
        s.flags = KREG_KERNEL_HONOURS_LEADING_DIMS;  // accepts lda > n and ldb > m
        return s;
    }

    void run_transpose(const kreg_transpose_args& args) override {
        check_arguments(args);
        const auto* a = static_cast<const float*>(args.a);
        auto* b = static_cast<float*>(args.b);
        for (int64_t i = 0; i < args.m; ++i)
            for (int64_t j = 0; j < args.n; ++j) b[j * args.ldb + i] = a[i * args.lda + j];
    }
};

}  // namespace

KREG_PLUGIN("my_transpose", "0.1.0", StudentTranspose)
