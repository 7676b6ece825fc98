// Correctness of every CUDA GEMM kernel in the plugin folder, against cuBLAS on the same device.
//
// Each plugin (.so in KREG_PLUGIN_DIR) is loaded by the runner's own loader (tests/support/plugin_scan.hpp),
// so this test sees exactly what the runner sees. Every CUDA kernel x declared dtype (fp32, tf32, bf16) x shape is
// one test: fresh random inputs in [-1, 1) (seeded per case, so a failure reproduces), C poisoned with NaN
// (or, with beta != 0, holding known values), padding of A and B filled with NaN and padding of C with a
// sentinel that must survive. The result is checked element by element against an fp32 cuBLAS reference
// (pedantic math) with the error bound scaled by the magnitudes that went into each element:
//     |c - ref| <= tol * (|alpha| * sum_k |a_ik||b_kj| + |beta| * |c0|)
// where the sum is itself a cuBLAS SGEMM on |A| and |B|. NaN and Inf never pass.
// Without a CUDA device every test is skipped with the reason, never passed.
#include "cuda_test.hpp"
#include "plugin_scan.hpp"

#include <kreg/abi.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

// ---------------------------------------------------------------------------------------------------
// Plugin discovery

using LoadedKernel = kreg::test::ScannedKernel;
using kreg::test::DeviceBuffer;
using kreg::test::no_device_reason;

struct Registry {
    std::vector<LoadedKernel> cuda_kernels;
    std::vector<std::string> load_errors;
};

const Registry& registry() {
    static const Registry r = [] {
        kreg::test::PluginScan scan = kreg::test::scan_plugins(KREG_PLUGIN_DIR);
        Registry out;
        out.load_errors = std::move(scan.load_errors);
        for (const LoadedKernel& k : scan.kernels)
            if (k.info->backend == KREG_BACKEND_CUDA && k.info->operation == KREG_OPERATION_GEMM)
                out.cuda_kernels.push_back(k);
        return out;
    }();
    return r;
}

// ---------------------------------------------------------------------------------------------------
// Cases

struct Shape {
    int64_t m, n, k;
    bool general;  // padded leading dimensions and alpha/beta != 1/0 (kernels that declare both flags)
};

const std::vector<Shape>& shapes() {
    static const std::vector<Shape> s = {
        {1, 1, 1, false},
        {1, 300, 1, false},
        {64, 80, 1, false},
        {17, 17, 17, false},
        {517, 517, 517, false},
        {1000, 3000, 257, false},
        {4096, 4096, 4096, false},
        // Ragged on every axis, yet coarse enough that cuda_09_warptiled picks its large tiles on an H200
        // (the other shapes above, bar 4096³, get its small ones).
        {2000, 2040, 257, false},
        // The largest odd shape (issue 12): odd K and N, so misaligned rows for every 16-byte or TMA
        // path (cuda_11_wgmma copies A and B to padded rows first), and a ragged last tile on every axis.
        {4097, 1025, 2049, false},
        {333, 257, 129, true},
        {1900, 2000, 77, true},
        // The split kernels' classes (issue 24), each at an edge: vector-like shapes (cuda_gemv's two paths, K split
        // in 32 and 3 slices), one row with padded rows of B (its scalar path), one column with a strided B, a few
        // rows with a deep ragged K (26 slices of 160), a narrow N with a deep K, and a K of 65536 over a single
        // 128x128 tile (128 slices: the fixed-order reduction's longest sum here).
        {1, 4096, 4096, false},
        {4096, 1, 4096, false},
        {1, 517, 33, true},
        {517, 1, 3001, true},
        {7, 33, 4099, true},
        {256, 64, 16384, true},
        {128, 128, 65536, false},
    };
    return s;
}

struct Case {
    const LoadedKernel* kernel;
    kreg_dtype dtype;
    Shape shape;
    uint64_t seed;
};

const char* dtype_name(kreg_dtype d) {
    switch (d) {
        case KREG_DTYPE_FP32:
            return "fp32";
        case KREG_DTYPE_TF32:
            return "tf32";
        case KREG_DTYPE_BF16:
            return "bf16";
        case KREG_DTYPE_FP16:
            return "fp16";
    }
    return "unknown";
}

// What ctest and gtest print for a case (instead of the struct's bytes).
void PrintTo(const Case& c, std::ostream* os) {
    *os << c.kernel->info->name << " " << dtype_name(c.dtype) << " " << c.shape.m << "x" << c.shape.n << "x"
        << c.shape.k << (c.shape.general ? " padded lds, alpha/beta" : "") << " seed " << c.seed;
}

std::vector<Case> all_cases() {
    std::vector<Case> out;
    uint64_t index = 0;
    for (const LoadedKernel& k : registry().cuda_kernels)
        for (kreg_dtype d : {KREG_DTYPE_FP32, KREG_DTYPE_TF32, KREG_DTYPE_BF16})
            if (k.info->dtypes & KREG_DTYPE_BIT(d))
                for (const Shape& s : shapes()) out.push_back({&k, d, s, 0x6b726567ull * 1000003ull + index++});
    return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
    std::string name = std::string(info.param.kernel->info->name) + "_" + dtype_name(info.param.dtype) + "_" +
                       (info.param.shape.general ? "ld_alpha_beta_" : "") + std::to_string(info.param.shape.m) + "x" +
                       std::to_string(info.param.shape.n) + "x" + std::to_string(info.param.shape.k);
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return name;
}

// ---------------------------------------------------------------------------------------------------
// Helpers

// splitmix64: fast, and good enough for test data; values are k / 2^23 - 1 for k in [0, 2^24), in [-1, 1).
struct Rng {
    uint64_t state;
    float next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return static_cast<float>(z >> 40) * (1.0f / 8388608.0f) - 1.0f;
    }
};

uint16_t to_bf16(float f) {  // round to nearest even
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::isnan(f)) return 0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t h) {
    const uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

#define CUBLAS_ASSERT(call)                                                               \
    do {                                                                                  \
        const cublasStatus_t s_ = (call);                                                 \
        ASSERT_EQ(s_, CUBLAS_STATUS_SUCCESS) << #call << ": " << cublasGetStatusName(s_); \
    } while (0)

// Row-major C (m x n, ldc) = alpha * A (m x k, lda) * B (k x n, ldb) + beta * C, in fp32 without tensor cores.
cublasStatus_t reference_sgemm(cublasHandle_t h, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                               int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                       &alpha, b, static_cast<int>(ldb), a, static_cast<int>(lda), &beta, c, static_cast<int>(ldc));
}

const float kPoisonSentinel = 12345.0f;  // in C's padding columns; must be untouched

class CudaGemmTest : public testing::TestWithParam<Case> {};

TEST_P(CudaGemmTest, MatchesCublasReference) {
    const Case& tc = GetParam();
    const kreg_kernel_info& info = *tc.kernel->info;
    const Shape& s = tc.shape;

    if (const std::string why = no_device_reason(); !why.empty()) GTEST_SKIP() << why;
    int device = 0;
    CUDA_ASSERT(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    CUDA_ASSERT(cudaGetDeviceProperties(&prop, device));
    const int cc = prop.major * 10 + prop.minor;
    if (cc < info.min_compute_capability)
        GTEST_SKIP() << info.name << " needs compute capability " << info.min_compute_capability << ", device has "
                     << cc;
    if (s.m % info.m_multiple || s.n % info.n_multiple || s.k % info.k_multiple)
        GTEST_SKIP() << info.name << " declares multiples m=" << info.m_multiple << " n=" << info.n_multiple
                     << " k=" << info.k_multiple;
    if ((info.max_m && s.m > info.max_m) || (info.max_n && s.n > info.max_n) || (info.max_k && s.k > info.max_k))
        GTEST_SKIP() << info.name << " declares maxima m=" << info.max_m << " n=" << info.max_n << " k=" << info.max_k;
    const uint32_t general_flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
    if (s.general && (info.flags & general_flags) != general_flags)
        GTEST_SKIP() << info.name << " does not declare both alpha/beta and leading-dimension support";

    const int64_t m = s.m, n = s.n, k = s.k;
    // Odd paddings make most rows misaligned for 16-byte access, exercising every scalar fallback.
    const int64_t lda = s.general ? k + 3 : k, ldb = s.general ? n + 5 : n, ldc = s.general ? n + 1 : n;
    const float alpha = s.general ? 1.5f : 1.0f, beta = s.general ? -0.75f : 0.0f;
    const float nan = std::numeric_limits<float>::quiet_NaN();

    // Host inputs. For bf16 the fp32 copies hold the bf16-rounded values, so the reference sees what the
    // kernel sees.
    Rng rng{tc.seed};
    std::vector<float> a(static_cast<size_t>(m * lda), nan), b(static_cast<size_t>(k * ldb), nan);
    auto fill = [&](std::vector<float>& v, int64_t rows, int64_t cols, int64_t ld) {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
                float x = rng.next();
                if (tc.dtype == KREG_DTYPE_BF16) x = from_bf16(to_bf16(x));
                v[static_cast<size_t>(r * ld + c)] = x;
            }
    };
    fill(a, m, k, lda);
    fill(b, k, n, ldb);
    std::vector<float> c0(static_cast<size_t>(m * ldc), kPoisonSentinel);
    for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) c0[static_cast<size_t>(r * ldc + c)] = s.general ? rng.next() : nan;
    std::vector<float> abs_a(a.size()), abs_b(b.size());
    std::transform(a.begin(), a.end(), abs_a.begin(), [](float x) { return std::fabs(x); });
    std::transform(b.begin(), b.end(), abs_b.begin(), [](float x) { return std::fabs(x); });

    const size_t a_bytes = a.size() * 4, b_bytes = b.size() * 4, c_bytes = c0.size() * 4;
    DeviceBuffer d_a(a_bytes), d_b(b_bytes), d_abs_a(a_bytes), d_abs_b(b_bytes);
    DeviceBuffer d_c(c_bytes), d_ref(c_bytes), d_abs(static_cast<size_t>(m * n) * 4);
    DeviceBuffer d_a16(a.size() * 2), d_b16(b.size() * 2), d_abs_a16(a.size() * 2), d_abs_b16(b.size() * 2);
    ASSERT_FALSE(HasFailure());
    CUDA_ASSERT(cudaMemcpy(d_a.ptr, a.data(), a_bytes, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(d_b.ptr, b.data(), b_bytes, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(d_abs_a.ptr, abs_a.data(), a_bytes, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(d_abs_b.ptr, abs_b.data(), b_bytes, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(d_c.ptr, c0.data(), c_bytes, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(d_ref.ptr, c0.data(), c_bytes, cudaMemcpyHostToDevice));
    if (tc.dtype == KREG_DTYPE_BF16) {
        std::vector<uint16_t> a16(a.size()), b16(b.size());
        std::transform(a.begin(), a.end(), a16.begin(), to_bf16);
        std::transform(b.begin(), b.end(), b16.begin(), to_bf16);
        CUDA_ASSERT(cudaMemcpy(d_a16.ptr, a16.data(), a16.size() * 2, cudaMemcpyHostToDevice));
        CUDA_ASSERT(cudaMemcpy(d_b16.ptr, b16.data(), b16.size() * 2, cudaMemcpyHostToDevice));
        std::transform(abs_a.begin(), abs_a.end(), a16.begin(), to_bf16);
        std::transform(abs_b.begin(), abs_b.end(), b16.begin(), to_bf16);
        CUDA_ASSERT(cudaMemcpy(d_abs_a16.ptr, a16.data(), a16.size() * 2, cudaMemcpyHostToDevice));
        CUDA_ASSERT(cudaMemcpy(d_abs_b16.ptr, b16.data(), b16.size() * 2, cudaMemcpyHostToDevice));
    }

    // A copy from pageable memory may still be landing when cudaMemcpy returns, and the kernel runs on a
    // non-blocking stream, which does not wait for it: wait here.
    CUDA_ASSERT(cudaDeviceSynchronize());
    cudaStream_t stream = nullptr;
    CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    struct StreamGuard {
        cudaStream_t s;
        ~StreamGuard() { cudaStreamDestroy(s); }
    } stream_guard{stream};

    // The kernel under test.
    char error[1024] = "";
    void* instance = nullptr;
    const kreg_status created = info.create(&instance, error, sizeof error);
    ASSERT_EQ(created, KREG_STATUS_OK) << info.name << ": create failed: " << error;
    struct InstanceGuard {
        const kreg_kernel_info& info;
        void* instance;
        ~InstanceGuard() { info.destroy(instance); }
    } instance_guard{info, instance};

    kreg_gemm_args args{};
    args.struct_size = sizeof(kreg_gemm_args);
    args.m = m;
    args.n = n;
    args.k = k;
    args.lda = lda;
    args.ldb = ldb;
    args.ldc = ldc;
    args.alpha = alpha;
    args.beta = beta;
    args.dtype = tc.dtype;
    args.a = tc.dtype == KREG_DTYPE_BF16 ? d_a16.ptr : d_a.ptr;
    args.b = tc.dtype == KREG_DTYPE_BF16 ? d_b16.ptr : d_b.ptr;
    args.c = d_c.ptr;
    args.stream = stream;

    if (info.describe_launch != nullptr) {
        kreg_launch_info launch{};
        launch.struct_size = sizeof(launch);
        if (info.describe_launch(instance, &args, &launch, error, sizeof error) == KREG_STATUS_OK &&
            launch.device_function != nullptr) {
            cudaFuncAttributes attr{};
            CUDA_ASSERT(cudaFuncGetAttributes(&attr, launch.device_function));
            EXPECT_LE(launch.block[0] * launch.block[1] * launch.block[2],
                      static_cast<uint32_t>(attr.maxThreadsPerBlock))
                << "described block is larger than the kernel allows";
        }
    }

    // A first call on other inputs (|A| and |B|), by the same instance into the same C, which is then poisoned
    // again: whatever a kernel keeps between calls (scratch copies of misaligned inputs, cached plans, workspaces)
    // must not leak into the result of the call that is checked.
    const bool bf16 = tc.dtype == KREG_DTYPE_BF16;
    args.a = bf16 ? d_abs_a16.ptr : d_abs_a.ptr;
    args.b = bf16 ? d_abs_b16.ptr : d_abs_b.ptr;
    const kreg_status decoy = info.run_gemm(instance, &args, error, sizeof error);
    ASSERT_EQ(decoy, KREG_STATUS_OK) << info.name << ": run_gemm (first call, on |A| and |B|) failed: " << error;
    CUDA_ASSERT(cudaStreamSynchronize(stream));
    CUDA_ASSERT(cudaMemcpy(d_c.ptr, c0.data(), c_bytes, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaDeviceSynchronize());  // (see above) before the checked call may write C
    args.a = bf16 ? d_a16.ptr : d_a.ptr;
    args.b = bf16 ? d_b16.ptr : d_b.ptr;

    const kreg_status ran = info.run_gemm(instance, &args, error, sizeof error);
    ASSERT_EQ(ran, KREG_STATUS_OK) << info.name << ": run_gemm failed: " << error;
    CUDA_ASSERT(cudaStreamSynchronize(stream));
    CUDA_ASSERT(cudaGetLastError());

    // The reference and the magnitudes, on the same device and inputs.
    cublasHandle_t handle = nullptr;
    CUBLAS_ASSERT(cublasCreate(&handle));
    struct HandleGuard {
        cublasHandle_t h;
        ~HandleGuard() { cublasDestroy(h); }
    } handle_guard{handle};
    CUBLAS_ASSERT(cublasSetStream(handle, stream));
    CUBLAS_ASSERT(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
    CUBLAS_ASSERT(reference_sgemm(handle, m, n, k, alpha, d_a.f(), lda, d_b.f(), ldb, beta, d_ref.f(), ldc));
    CUBLAS_ASSERT(reference_sgemm(handle, m, n, k, 1.0f, d_abs_a.f(), lda, d_abs_b.f(), ldb, 0.0f, d_abs.f(), n));
    CUDA_ASSERT(cudaStreamSynchronize(stream));

    std::vector<float> c(c0.size()), ref(c0.size()), mag(static_cast<size_t>(m * n));
    CUDA_ASSERT(cudaMemcpy(c.data(), d_c.ptr, c_bytes, cudaMemcpyDeviceToHost));
    CUDA_ASSERT(cudaMemcpy(ref.data(), d_ref.ptr, c_bytes, cudaMemcpyDeviceToHost));
    CUDA_ASSERT(cudaMemcpy(mag.data(), d_abs.ptr, mag.size() * 4, cudaMemcpyDeviceToHost));

    const double tol = tc.dtype == KREG_DTYPE_FP32 ? 1e-4 : tc.dtype == KREG_DTYPE_TF32 ? 1e-2 : 1e-3;
    int64_t bad = 0, padding_touched = 0;
    std::ostringstream first;
    for (int64_t r = 0; r < m; ++r) {
        for (int64_t col = 0; col < ldc; ++col) {
            const size_t i = static_cast<size_t>(r * ldc + col);
            if (col >= n) {
                if (c[i] != kPoisonSentinel && padding_touched++ == 0 && bad == 0)
                    first << "padding C(" << r << ", " << col << ") = " << c[i] << " was overwritten";
                continue;
            }
            const double scale = std::fabs(alpha) * mag[static_cast<size_t>(r * n + col)] +
                                 std::fabs(beta) * (s.general ? std::fabs(c0[i]) : 0.0);
            const double err = std::fabs(static_cast<double>(c[i]) - ref[i]);
            if (!std::isfinite(c[i]) || !(err <= tol * scale)) {
                if (bad++ == 0 && padding_touched == 0)
                    first << "C(" << r << ", " << col << ") = " << c[i] << ", reference " << ref[i] << ", |error| "
                          << err << " > " << tol << " * " << scale;
            }
        }
    }
    EXPECT_EQ(bad + padding_touched, 0) << info.name << " (" << tc.kernel->plugin_file << ") " << dtype_name(tc.dtype)
                                        << " " << m << "x" << n << "x" << k << " lda=" << lda << " ldb=" << ldb
                                        << " ldc=" << ldc << " alpha=" << alpha << " beta=" << beta
                                        << " seed=" << tc.seed << ": " << bad << " wrong elements, " << padding_touched
                                        << " padding elements written; first: " << first.str();
}

INSTANTIATE_TEST_SUITE_P(AllCudaKernels, CudaGemmTest, testing::ValuesIn(all_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaGemmTest);

// The split kernels add their K slices in a fixed order, never with atomics on C: three calls on the same inputs must
// give the same bits, at shapes where each of them splits K (tests/gpu/split_plans_test.cu checks that they do).
// A result that moves between calls is a race, whatever its error against the reference.
TEST(SplitKernels, SameInputsGiveTheSameBits) {
    if (const std::string why = no_device_reason(); !why.empty()) GTEST_SKIP() << why;
    const std::set<std::string> split_kernels = {"cuda_splitk", "cuda_small_tile", "cuda_gemv"};
    const std::vector<Shape> split_shapes = {{517, 517, 517, false},
                                             {1, 4096, 4096, false},
                                             {4096, 1, 4096, false},
                                             {128, 128, 65536, false},
                                             {7, 33, 4099, false}};
    int checked = 0;
    for (const LoadedKernel& kernel : registry().cuda_kernels) {
        const kreg_kernel_info& info = *kernel.info;
        if (split_kernels.count(info.name) == 0) continue;
        char error[1024] = "";
        void* instance = nullptr;
        ASSERT_EQ(info.create(&instance, error, sizeof error), KREG_STATUS_OK) << info.name << ": " << error;
        struct InstanceGuard {
            const kreg_kernel_info& info;
            void* instance;
            ~InstanceGuard() { info.destroy(instance); }
        } instance_guard{info, instance};
        for (const Shape& s : split_shapes) {
            Rng rng{0x5eedull + static_cast<uint64_t>(s.m * 31 + s.n * 17 + s.k)};
            std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n));
            for (float& x : a) x = rng.next();
            for (float& x : b) x = rng.next();
            const size_t c_bytes = static_cast<size_t>(s.m * s.n) * 4;
            DeviceBuffer d_a(a.size() * 4), d_b(b.size() * 4), d_c(c_bytes);
            ASSERT_FALSE(HasFailure());
            CUDA_ASSERT(cudaMemcpy(d_a.ptr, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
            CUDA_ASSERT(cudaMemcpy(d_b.ptr, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
            cudaStream_t stream = nullptr;
            CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
            struct StreamGuard {
                cudaStream_t s;
                ~StreamGuard() { cudaStreamDestroy(s); }
            } stream_guard{stream};
            kreg_gemm_args args{};
            args.struct_size = sizeof(kreg_gemm_args);
            args.m = s.m;
            args.n = s.n;
            args.k = s.k;
            args.lda = s.k;
            args.ldb = s.n;
            args.ldc = s.n;
            args.alpha = 1.0;
            args.beta = 0.0;
            args.dtype = KREG_DTYPE_FP32;
            args.a = d_a.ptr;
            args.b = d_b.ptr;
            args.c = d_c.ptr;
            args.stream = stream;
            std::vector<float> first, again(static_cast<size_t>(s.m * s.n));
            for (int call = 0; call < 3; ++call) {
                CUDA_ASSERT(cudaMemset(d_c.ptr, 0xff, c_bytes));  // NaN in every element before each call
                CUDA_ASSERT(cudaDeviceSynchronize());
                ASSERT_EQ(info.run_gemm(instance, &args, error, sizeof error), KREG_STATUS_OK)
                    << info.name << ": " << error;
                CUDA_ASSERT(cudaStreamSynchronize(stream));
                CUDA_ASSERT(cudaMemcpy(again.data(), d_c.ptr, c_bytes, cudaMemcpyDeviceToHost));
                if (call == 0) {
                    first = again;
                    // memcmp would pass two NaN-poisoned copies alike: every element must have been written.
                    const auto unwritten =
                        std::find_if(first.begin(), first.end(), [](float x) { return !std::isfinite(x); });
                    EXPECT_EQ(unwritten, first.end()) << info.name << " " << s.m << "x" << s.n << "x" << s.k
                                                      << ": element " << (unwritten - first.begin()) << " not written";
                    continue;
                }
                EXPECT_EQ(std::memcmp(first.data(), again.data(), c_bytes), 0)
                    << info.name << " " << s.m << "x" << s.n << "x" << s.k << ": call " << call
                    << " gave other bits than call 0 on the same inputs";
            }
            ++checked;
        }
    }
    EXPECT_EQ(checked, 3 * 5) << "the three split kernels were not all found in " << KREG_PLUGIN_DIR;
}

// The lab's kernels and the cuBLAS references are all there and every plugin loaded; without this a
// missing plugin would just mean fewer parameterised tests.
TEST(CudaKernelRegistry, LabAndCublasKernelsAreLoaded) {
    if (const std::string why = no_device_reason(); !why.empty()) GTEST_SKIP() << why;
    const Registry& r = registry();
    for (const std::string& e : r.load_errors) ADD_FAILURE() << "plugin failed to load: " << e;
    std::set<std::string> names;
    for (const LoadedKernel& k : r.cuda_kernels) names.insert(k.info->name);
    for (const char* expected : {"cuda_01_naive",
                                 "cuda_02_tiled16",
                                 "cuda_02_tiled32",
                                 "cuda_03_conflicts",
                                 "cuda_03_padded",
                                 "cuda_03_padded_dynamic",
                                 "cuda_03_padded_dynamic96",
                                 "cuda_04_coarsened",
                                 "cuda_05_register_blocked",
                                 "cuda_06_vectorized",
                                 "cuda_07_double_buffered",
                                 "cuda_08_cp_async",
                                 "cuda_09_warptiled",
                                 "cuda_10_mma",
                                 "cuda_11_wgmma",
                                 "cuda_12_wgmma_ws",
                                 "cuda_12_wgmma_ws_c2",
                                 "cuda_splitk",
                                 "cuda_small_tile",
                                 "cuda_gemv",
                                 "cuda_dispatch_fp32",
                                 "cuda_13_wgmma_persistent",
                                 "cublas_sgemm",
                                 "cublas_tf32",
                                 "cublas_bf16",
                                 "cublaslt_fp32",
                                 "cublaslt_tf32",
                                 "cublaslt_bf16"})
        EXPECT_EQ(names.count(expected), 1u) << expected << " not found in " << KREG_PLUGIN_DIR;
}

}  // namespace
