// Every CUDA GEMM kernel of the lab (cuda_01_naive .. cuda_12_wgmma_ws_c2, and the split kernels cuda_splitk,
// cuda_small_tile, cuda_gemv and cuda_dispatch_fp32, which share its checks) refuses bad arguments before it touches
// the GPU, with the status and message of kreg_cuda::check_gemm_args (plugins/cuda_common/gemm_common.cuh). No
// device is needed: the checks come first, so this runs (and must pass) on machines without a GPU too. A kernel
// that skipped a check would instead try to launch: on such a machine it returns a CUDA error, not the status
// expected here, and on a GPU it would not fail at all.
#include "plugin_scan.hpp"

#include <kreg/abi.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

namespace {

struct BadCall {
    const char* what;
    void (*spoil)(kreg_gemm_args&);
    kreg_status status;
    const char* message;  // a part of the error text
};

const std::vector<BadCall>& bad_calls() {
    static const std::vector<BadCall> calls = {
        {"struct_size too small", [](kreg_gemm_args& a) { a.struct_size = 8; }, KREG_STATUS_INVALID_ARGUMENT,
         "struct_size"},
        {"a dtype no kernel declares", [](kreg_gemm_args& a) { a.dtype = KREG_DTYPE_FP16; }, KREG_STATUS_UNSUPPORTED,
         "computes"},
        {"a dtype outside the enum", [](kreg_gemm_args& a) { a.dtype = static_cast<kreg_dtype>(77); },
         KREG_STATUS_UNSUPPORTED, "computes"},
        {"m = 0", [](kreg_gemm_args& a) { a.m = 0; }, KREG_STATUS_INVALID_ARGUMENT, "must be >= 1"},
        {"k = -1", [](kreg_gemm_args& a) { a.k = -1; }, KREG_STATUS_INVALID_ARGUMENT, "must be >= 1"},
        {"n above 2^30", [](kreg_gemm_args& a) { a.n = a.ldb = a.ldc = (int64_t{1} << 30) + 1; },
         KREG_STATUS_INVALID_ARGUMENT, "<= 2^30"},
        {"lda < k", [](kreg_gemm_args& a) { a.lda = a.k - 1; }, KREG_STATUS_INVALID_ARGUMENT, "lda>=k"},
        {"ldc < n", [](kreg_gemm_args& a) { a.ldc = a.n - 1; }, KREG_STATUS_INVALID_ARGUMENT, "lda>=k"},
        {"null C", [](kreg_gemm_args& a) { a.c = nullptr; }, KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer"},
    };
    return calls;
}

TEST(CudaPluginArgs, EveryLabKernelRefusesBadArgumentsBeforeTouchingTheGpu) {
    const kreg::test::PluginScan scan = kreg::test::scan_plugins(KREG_PLUGIN_DIR);
    for (const std::string& e : scan.load_errors) ADD_FAILURE() << "plugin failed to load: " << e;
    const std::regex lab("cuda_[0-9][0-9]_.*|cuda_splitk|cuda_small_tile|cuda_gemv|cuda_dispatch_fp32");
    alignas(16) static float dummy[64];  // never read: every call below fails its checks first
    int kernels = 0;
    for (const auto& k : scan.kernels) {
        const kreg_kernel_info& info = *k.info;
        if (info.backend != KREG_BACKEND_CUDA || info.operation != KREG_OPERATION_GEMM ||
            !std::regex_match(info.name, lab))
            continue;
        ++kernels;
        char error[1024] = "";
        void* instance = nullptr;
        ASSERT_EQ(info.create(&instance, error, sizeof error), KREG_STATUS_OK) << info.name << ": " << error;
        // A valid call in every other respect: a dtype the kernel declares, 64^3, tight leading dimensions.
        kreg_gemm_args good{};
        good.struct_size = sizeof good;
        good.m = good.n = good.k = good.lda = good.ldb = good.ldc = 64;
        good.alpha = 1.0;
        good.beta = 0.0;
        for (int d = 0; d < 32; ++d)
            if (info.dtypes & KREG_DTYPE_BIT(d)) {
                good.dtype = static_cast<kreg_dtype>(d);
                break;
            }
        good.a = good.b = good.c = dummy;
        for (const BadCall& bad : bad_calls()) {
            kreg_gemm_args args = good;
            bad.spoil(args);
            std::memset(error, 0, sizeof error);
            const kreg_status status = info.run_gemm(instance, &args, error, sizeof error);
            EXPECT_EQ(status, bad.status) << info.name << ", " << bad.what << ": " << error;
            EXPECT_NE(std::string(error).find(bad.message), std::string::npos)
                << info.name << ", " << bad.what << ": the error \"" << error << "\" does not say \"" << bad.message
                << "\"";
        }
        info.destroy(instance);
    }
    EXPECT_GE(kernels, 21)
        << "the lab's 17 CUDA GEMM kernels (01-12 and their variants) the 3 split kernels and cuda_dispatch_fp32 "
           "were not all found in "
        << KREG_PLUGIN_DIR;
}

}  // namespace
