// The cuBLASLt references (plugins/cublaslt) where cuda_kernels_test does not look: that test's checked call is
// an instance's second call at a shape, so it checks a kept choice; here the checked call is the first, the one
// that times the heuristic's candidates, with beta != 0 and padded leading dimensions (the candidates must not
// accumulate into C, nor write its padding), and the variant names the choice only once it is made.
// Without a CUDA device every test is skipped with the reason.
#include "cuda_test.hpp"
#include "plugin_scan.hpp"

#include <kreg/abi.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using kreg::test::DeviceBuffer;
using kreg::test::no_device_reason;

const kreg_kernel_info* find_kernel(const std::string& name) {
    static const kreg::test::PluginScan scan = kreg::test::scan_plugins(KREG_PLUGIN_DIR);
    for (const auto& k : scan.kernels)
        if (name == k.info->name) return k.info;
    return nullptr;
}

uint16_t to_bf16(float f) {  // round to nearest even (finite inputs only here)
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}
float from_bf16(uint16_t h) {
    const uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

std::string variant_of(const kreg_kernel_info& info, void* instance, const kreg_gemm_args& args) {
    char text[512] = "";
    const kreg_status s = info.describe_gemm_variant(instance, &args, text, sizeof text);
    return s == KREG_STATUS_OK ? std::string(text) : "(status " + std::to_string(int(s)) + ": " + text + ")";
}

class CublasLtFirstCall : public testing::TestWithParam<const char*> {};

TEST_P(CublasLtFirstCall, IsCorrectWithBetaAndPaddingAndNamesItsChoice) {
    if (const std::string why = no_device_reason(); !why.empty()) GTEST_SKIP() << why;
    const kreg_kernel_info* found = find_kernel(GetParam());
    ASSERT_NE(found, nullptr) << GetParam() << " not found in " << KREG_PLUGIN_DIR;
    const kreg_kernel_info& info = *found;
    ASSERT_NE(info.describe_gemm_variant, nullptr);
    const kreg_dtype dtype = (info.dtypes & KREG_DTYPE_BIT(KREG_DTYPE_BF16))   ? KREG_DTYPE_BF16
                             : (info.dtypes & KREG_DTYPE_BIT(KREG_DTYPE_TF32)) ? KREG_DTYPE_TF32
                                                                               : KREG_DTYPE_FP32;
    const bool bf16 = dtype == KREG_DTYPE_BF16;
    const int64_t m = 300, n = 520, k = 136, lda = k + 3, ldb = n + 5, ldc = n + 1;
    const float alpha = 1.5f, beta = -0.75f, sentinel = 12345.0f;

    uint64_t state = 0x6c74ull;  // splitmix64, values in [-1, 1)
    auto next = [&] {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        const float x = static_cast<float>(z >> 40) * (1.0f / 8388608.0f) - 1.0f;
        return bf16 ? from_bf16(to_bf16(x)) : x;
    };
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> a(size_t(m * lda), nan), b(size_t(k * ldb), nan), c0(size_t(m * ldc), sentinel);
    for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < k; ++j) a[size_t(r * lda + j)] = next();
    for (int64_t r = 0; r < k; ++r)
        for (int64_t j = 0; j < n; ++j) b[size_t(r * ldb + j)] = next();
    for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) c0[size_t(r * ldc + j)] = next();

    const size_t elem = bf16 ? 2 : 4;
    DeviceBuffer d_a(a.size() * elem), d_b(b.size() * elem), d_c(c0.size() * 4);
    ASSERT_FALSE(HasFailure());
    if (bf16) {
        std::vector<uint16_t> a16(a.size()), b16(b.size());
        for (size_t i = 0; i < a.size(); ++i) a16[i] = std::isnan(a[i]) ? 0x7fc0 : to_bf16(a[i]);
        for (size_t i = 0; i < b.size(); ++i) b16[i] = std::isnan(b[i]) ? 0x7fc0 : to_bf16(b[i]);
        CUDA_ASSERT(cudaMemcpy(d_a.ptr, a16.data(), a16.size() * 2, cudaMemcpyHostToDevice));
        CUDA_ASSERT(cudaMemcpy(d_b.ptr, b16.data(), b16.size() * 2, cudaMemcpyHostToDevice));
    } else {
        CUDA_ASSERT(cudaMemcpy(d_a.ptr, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
        CUDA_ASSERT(cudaMemcpy(d_b.ptr, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    }
    CUDA_ASSERT(cudaMemcpy(d_c.ptr, c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaDeviceSynchronize());  // pageable copies may still land after cudaMemcpy returns
    cudaStream_t stream = nullptr;
    CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    struct StreamGuard {
        cudaStream_t s;
        ~StreamGuard() { cudaStreamDestroy(s); }
    } stream_guard{stream};

    char error[1024] = "";
    void* instance = nullptr;
    ASSERT_EQ(info.create(&instance, error, sizeof error), KREG_STATUS_OK) << error;
    struct InstanceGuard {
        const kreg_kernel_info& info;
        void* instance;
        ~InstanceGuard() { info.destroy(instance); }
    } instance_guard{info, instance};

    kreg_gemm_args args{};
    args.struct_size = sizeof args;
    args.m = m, args.n = n, args.k = k, args.lda = lda, args.ldb = ldb, args.ldc = ldc;
    args.alpha = alpha, args.beta = beta, args.dtype = dtype;
    args.a = d_a.ptr, args.b = d_b.ptr, args.c = d_c.ptr, args.stream = stream;

    const std::string before = variant_of(info, instance, args);
    EXPECT_NE(before.find("not chosen yet"), std::string::npos) << before;
    ASSERT_EQ(info.run_gemm(instance, &args, error, sizeof error), KREG_STATUS_OK) << error;
    CUDA_ASSERT(cudaStreamSynchronize(stream));
    const std::string after = variant_of(info, instance, args);
    EXPECT_EQ(after.rfind("cuBLASLt ", 0), 0u) << after;
    EXPECT_NE(after.find(" algo "), std::string::npos) << after;
    EXPECT_NE(after.find("fastest of "), std::string::npos) << after;

    std::vector<float> c(c0.size());
    CUDA_ASSERT(cudaMemcpy(c.data(), d_c.ptr, c.size() * 4, cudaMemcpyDeviceToHost));
    const double tol = dtype == KREG_DTYPE_TF32 ? 1e-2 : 1e-4;  // bf16 inputs are exact; products summed in fp32
    int64_t bad = 0;
    std::string first;
    for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < ldc; ++j) {
            const float got = c[size_t(r * ldc + j)];
            if (j >= n) {
                if (got != sentinel && bad++ == 0) first = "padding of C overwritten at row " + std::to_string(r);
                continue;
            }
            double ref = 0, magnitude = 0;
            for (int64_t q = 0; q < k; ++q) {
                const double p = double(a[size_t(r * lda + q)]) * b[size_t(q * ldb + j)];
                ref += p;
                magnitude += std::fabs(p);
            }
            const double c_in = c0[size_t(r * ldc + j)];
            ref = alpha * ref + beta * c_in;
            const double scale = std::fabs(alpha) * magnitude + std::fabs(beta) * std::fabs(c_in);
            if (!std::isfinite(got) || !(std::fabs(got - ref) <= tol * scale))
                if (bad++ == 0)
                    first = "C(" + std::to_string(r) + ", " + std::to_string(j) + ") = " + std::to_string(got) +
                            ", reference " + std::to_string(ref);
        }
    EXPECT_EQ(bad, 0) << GetParam() << ": " << bad << " wrong elements; first: " << first << " (variant: " << after
                      << ")";
}

INSTANTIATE_TEST_SUITE_P(References, CublasLtFirstCall,
                         testing::Values("cublaslt_fp32", "cublaslt_tf32", "cublaslt_bf16"));

}  // namespace
