// cuBLAS reference kernels: the ceilings the lab's kernels are measured against.
//
//   cublas_sgemm  fp32 SGEMM (CUBLAS_DEFAULT_MATH: plain fp32 FMA, no tensor cores)
//   cublas_tf32   fp32 storage, tensor cores with 10-bit-mantissa inputs (CUBLAS_COMPUTE_32F_FAST_TF32)
//   cublas_bf16   bf16 A and B, fp32 C, fp32 accumulation (CUBLAS_COMPUTE_32F)
//
// cuBLAS is column-major. A row-major C (M x N, ldc) is the column-major matrix C^T (N x M, ldc), and
// C^T = B^T A^T, where the row-major B and A buffers already are B^T (N x K, ldb) and A^T (K x M, lda) in
// column-major terms. So every call swaps the operands and m with n; no data moves.
// The plugin's version carries the cuBLAS it runs on as semver build metadata ("1.0.0+cublas.13.1.0"), read
// from the library when the plugin is loaded: the runner does not link cuBLAS, so this is where a report
// (meta.plugins, meta.gpu.ceilings.plugin) learns which cuBLAS measured the baseline and the ceilings.
// Each instance owns a handle (made in the constructor on the current device) and binds it to the
// caller's stream on every call; alpha, beta and the leading dimensions pass straight through.
// Every row names the cuBLAS and the call that made it (describe_variant, ABI 1.2: extra.variant), so a
// ratio to this baseline carries its version with it, not only the report's meta.plugins.
#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <string>

namespace {

void check_cublas(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw kreg::Error(
            status == CUBLAS_STATUS_ALLOC_FAILED ? KREG_STATUS_OUT_OF_MEMORY : KREG_STATUS_RUNTIME_ERROR,
            std::string(call) + " failed: " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}
#define KREG_CUBLAS_CHECK(call) check_cublas((call), #call)

// "MAJOR.MINOR.PATCH" of the libcublas actually loaded.
std::string library_version() {
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
        return "(version unknown)";
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

enum class Flavour { Sgemm, Tf32, Bf16 };

template <Flavour F>
class Cublas final : public kreg::IKernel {
public:
    static constexpr kreg_dtype kDtype = F == Flavour::Sgemm  ? KREG_DTYPE_FP32
                                         : F == Flavour::Tf32 ? KREG_DTYPE_TF32
                                                              : KREG_DTYPE_BF16;

    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = F == Flavour::Sgemm ? "cublas_sgemm" : F == Flavour::Tf32 ? "cublas_tf32" : "cublas_bf16";
        s.description = F == Flavour::Sgemm  ? "cuBLAS SGEMM, fp32 FMA (reference ceiling for the SIMT kernels)"
                        : F == Flavour::Tf32 ? "cuBLAS GemmEx, fp32 data, TF32 tensor cores"
                                             : "cuBLAS GemmEx, bf16 A and B, fp32 C and accumulation";
        s.backend = KREG_BACKEND_CUDA;
        s.dtypes = KREG_DTYPE_BIT(kDtype);
        s.min_compute_capability = F == Flavour::Sgemm ? 70 : 80;
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        return s;
    }

    Cublas() {
        KREG_CUBLAS_CHECK(cublasCreate(&handle_));
        const cublasStatus_t mode = cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH);
        if (mode != CUBLAS_STATUS_SUCCESS) {
            cublasDestroy(handle_);
            check_cublas(mode, "cublasSetMathMode");
        }
    }
    ~Cublas() override { cublasDestroy(handle_); }
    Cublas(const Cublas&) = delete;
    Cublas& operator=(const Cublas&) = delete;

    void run_gemm(const kreg_gemm_args& args) override {
        if (args.struct_size < sizeof(kreg_gemm_args))
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                              "kreg_gemm_args.struct_size is smaller than this plugin's ABI");
        if (args.dtype != kDtype) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "dtype not declared by this kernel");
        if (args.m < 1 || args.n < 1 || args.k < 1 || args.m > INT_MAX || args.n > INT_MAX || args.k > INT_MAX ||
            args.lda > INT_MAX || args.ldb > INT_MAX || args.ldc > INT_MAX)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n, k and leading dimensions must be in [1, INT_MAX]");
        if (args.lda < args.k || args.ldb < args.n || args.ldc < args.n)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "leading dimensions must be >= the row length");
        const int m = static_cast<int>(args.m), n = static_cast<int>(args.n), k = static_cast<int>(args.k);
        const int lda = static_cast<int>(args.lda), ldb = static_cast<int>(args.ldb), ldc = static_cast<int>(args.ldc);
        const float alpha = static_cast<float>(args.alpha), beta = static_cast<float>(args.beta);

        KREG_CUBLAS_CHECK(cublasSetStream(handle_, static_cast<cudaStream_t>(args.stream)));
        // Column-major C^T (n x m) = B^T (n x k) * A^T (k x m): operands swapped, m <-> n.
        if constexpr (F == Flavour::Sgemm) {
            KREG_CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                          static_cast<const float*>(args.b), ldb, static_cast<const float*>(args.a),
                                          lda, &beta, static_cast<float*>(args.c), ldc));
        } else {
            constexpr cudaDataType_t in_type = F == Flavour::Tf32 ? CUDA_R_32F : CUDA_R_16BF;
            constexpr cublasComputeType_t compute =
                F == Flavour::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
            KREG_CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, args.b, in_type, ldb,
                                           args.a, in_type, lda, &beta, args.c, CUDA_R_32F, ldc, compute,
                                           CUBLAS_GEMM_DEFAULT));
        }
    }

    // The row's extra.variant (ABI 1.2): which cuBLAS, and which call.
    std::string describe_variant(const kreg_gemm_args& /*args*/) override {
        return "cuBLAS " + library_version() +
               (F == Flavour::Sgemm  ? ": cublasSgemm, CUBLAS_DEFAULT_MATH"
                : F == Flavour::Tf32 ? ": cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT"
                                     : ": cublasGemmEx, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT");
    }

private:
    cublasHandle_t handle_ = nullptr;
};

// "1.0.0+cublas.MAJOR.MINOR.PATCH" of the libcublas actually loaded (cublasGetProperty needs no device);
// plain "1.0.0" where the library cannot say. Static: the descriptor keeps the pointer until unload.
const char* plugin_version() {
    static const std::string version = [] {
        const std::string v = library_version();
        return v == "(version unknown)" ? std::string("1.0.0") : "1.0.0+cublas." + v;
    }();
    return version.c_str();
}

using CublasSgemm = Cublas<Flavour::Sgemm>;
using CublasTf32 = Cublas<Flavour::Tf32>;
using CublasBf16 = Cublas<Flavour::Bf16>;

}  // namespace

KREG_PLUGIN("cublas_reference", plugin_version(), CublasSgemm, CublasTf32, CublasBf16)
