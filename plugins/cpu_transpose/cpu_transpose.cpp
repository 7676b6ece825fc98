// cpu_transpose: the CPU references of the two data-movement operations of ABI 1.1.
//
//   cpu_transpose        B[N x M] = A[M x N]^T, element by element: b[j * ldb + i] = a[i * lda + j].
//   cpu_block_transpose  in place, every block x block tile of A transposed where it stands (the
//                        lecture's BlockTranspose): swap (i, j) with (j, i) inside each tile.
//
// Both copy float objects and never compute with them, so every bit pattern survives (NaN payloads,
// a signalling NaN, -0, subnormals): the runner checks them bit for bit. Obviously correct for every
// shape and leading dimension, which is what a reference is for; the speed is whatever the cache gives.
#include <kreg/kernel.hpp>

#include <cstring>
#include <utility>

namespace {

// A read once, B written once: what any transpose must move at least.
double transpose_model_bytes(int64_t m, int64_t n, int64_t /*k*/, kreg_dtype /*dtype*/) {
    return 2.0 * double(m) * double(n) * sizeof(float);
}

class CpuTranspose final : public kreg::ITransposeKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "cpu_transpose";
        s.description = "B = A^T, one element at a time (row of A, column of B); the transpose reference";
        s.backend = KREG_BACKEND_CPU;
        s.flags = KREG_KERNEL_HONOURS_LEADING_DIMS;
        s.model_global_bytes = &transpose_model_bytes;
        return s;
    }

    void run_transpose(const kreg_transpose_args& args) override {
        if (args.struct_size < sizeof(kreg_transpose_args))
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_transpose_args is smaller than this plugin expects");
        if (args.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
        if (args.m < 1 || args.n < 1) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m and n must be >= 1");
        if (args.lda < args.n || args.ldb < args.m)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "a leading dimension is smaller than its row");
        if (args.a == nullptr || args.b == nullptr)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
        const auto* a = static_cast<const float*>(args.a);
        auto* b = static_cast<float*>(args.b);
        // Plain float assignment is a copy of the bits (no arithmetic, no conversion).
        for (int64_t i = 0; i < args.m; ++i)
            for (int64_t j = 0; j < args.n; ++j) b[j * args.ldb + i] = a[i * args.lda + j];
    }
};

class CpuBlockTranspose final : public kreg::IBlockTransposeKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "cpu_block_transpose";
        s.description =
            "every block x block tile of A transposed in place by swapping across its diagonal; the reference";
        s.backend = KREG_BACKEND_CPU;
        s.flags = KREG_KERNEL_HONOURS_LEADING_DIMS;
        s.model_global_bytes = &transpose_model_bytes;  // each element read once and written once
        s.block_multiple = 1;
        s.max_block = 0;  // any block
        return s;
    }

    void run_block_transpose(const kreg_block_transpose_args& args) override {
        if (args.struct_size < sizeof(kreg_block_transpose_args))
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                              "kreg_block_transpose_args is smaller than this plugin expects");
        if (args.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
        if (args.m < 1 || args.n < 1 || args.block < 1)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n and block must be >= 1");
        if (args.m % args.block != 0 || args.n % args.block != 0)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m and n must be multiples of block");
        if (args.lda < args.n) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "lda is smaller than a row");
        if (args.a == nullptr) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
        auto* a = static_cast<float*>(args.a);
        const int64_t bs = args.block;
        for (int64_t ti = 0; ti < args.m; ti += bs)
            for (int64_t tj = 0; tj < args.n; tj += bs)
                // Strictly above the tile's diagonal, each pair swapped once; the diagonal stays.
                for (int64_t i = 0; i < bs; ++i)
                    for (int64_t j = i + 1; j < bs; ++j)
                        std::swap(a[(ti + i) * args.lda + tj + j], a[(ti + j) * args.lda + tj + i]);
    }
};

}  // namespace

KREG_PLUGIN("cpu_transpose", "1.0.0", CpuTranspose, CpuBlockTranspose)
