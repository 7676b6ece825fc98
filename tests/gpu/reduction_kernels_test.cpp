// Correctness of every CUDA reduction kernel in the plugin folder (ABI 1.3): the lab's steps cuda_r1_atomic ..
// cuda_r7_one_pass and the reference cub_reduce_sum.
//
// Plugins are loaded by the runner's own loader (tests/support/plugin_scan.hpp). Each case draws the
// harness's inputs (uniform in [-1, 1) and the three sentinels of ops/reduction) and holds the result to the
// runner's own check (OperationDef::verify with the reduction's tolerance, docs/TOLERANCES.md): n around
// every block and vector boundary the kernels have (1, 31..33, 255..257, 511..513, 1023..1025, ...), up to
// 2^24 + 3, and one large n. x lies between 64 NaNs on each side, so a read outside it makes the sum NaN;
// out[0] is poisoned before every call and out[1..3] hold a sentinel that must survive; x must be unchanged.
// Each case calls the kernel three times on one instance (scratch reuse, the one-pass counter's reset), with
// different inputs, and also once with x 4 bytes off 16-byte alignment (the scalar walk of steps 6 and 7).
// Without a CUDA device every test is skipped with the reason.
#include "cuda_test.hpp"
#include "ops/operation.hpp"
#include "ops/reduction.hpp"
#include "plugin_scan.hpp"
#include "verify/random_fill.hpp"
#include "verify/verify_gemm.hpp"

#include <kreg/abi.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

namespace {

using kreg::test::DeviceBuffer;
using kreg::test::no_device_reason;
using LoadedKernel = kreg::test::ScannedKernel;

constexpr size_t kGuard = 64;                   // NaNs before and after x
constexpr uint32_t kGuardBits = 0x7fc0aa02u;    // the runner's padding-after-A payload
constexpr uint32_t kOutSentinel = 0x4640e400u;  // 12345.0f in out[1..3]

const std::vector<LoadedKernel>& reductions() {
    static const std::vector<LoadedKernel> r = [] {
        std::vector<LoadedKernel> out;
        for (const LoadedKernel& k : kreg::test::scan_plugins(KREG_PLUGIN_DIR).kernels)
            if (k.info->backend == KREG_BACKEND_CUDA && k.info->operation == KREG_OPERATION_REDUCTION) out.push_back(k);
        return out;
    }();
    return r;
}

struct ReductionCase {
    const LoadedKernel* kernel;
    int64_t n;
};

void PrintTo(const ReductionCase& c, std::ostream* os) { *os << c.kernel->info->name << " n = " << c.n; }

std::vector<ReductionCase> cases() {
    static const std::vector<int64_t> sizes{
        1,    2,    3,    31,   32,   33,    255,   256,    257,     511,           512,          513,
        1023, 1024, 1025, 4095, 4097, 65535, 65537, 131073, 1000003, (1 << 22) + 3, (1 << 24) + 3};
    std::vector<ReductionCase> out;
    for (const LoadedKernel& k : reductions())
        for (int64_t n : sizes) out.push_back({&k, n});
    return out;
}

std::string case_name(const testing::TestParamInfo<ReductionCase>& info) {
    std::string name = std::string(info.param.kernel->info->name) + "_" + std::to_string(info.param.n);
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return name;
}

struct Instance {
    const kreg_kernel_info& info;
    void* ptr = nullptr;
    char error[1024] = "";
    explicit Instance(const kreg_kernel_info& i) : info(i) {
        if (info.create(&ptr, error, sizeof error) != KREG_STATUS_OK) ptr = nullptr;
    }
    ~Instance() {
        if (ptr != nullptr) info.destroy(ptr);
    }
};

struct Stream {
    cudaStream_t s = nullptr;
    Stream() { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
    ~Stream() { cudaStreamDestroy(s); }
};

// The call the runner makes (ops/operation.cpp, abi_call): sizes[0] = n, a = x (lda 1), c = out (ldc 1).
kreg_call reduction_call(int64_t n, const void* x, void* out, cudaStream_t stream) {
    kreg_call call{};
    call.struct_size = sizeof call;
    call.operation = KREG_OPERATION_REDUCTION;
    call.dtype = KREG_DTYPE_FP32;
    call.sizes[0] = n;
    call.lda = 1;
    call.ldc = 1;
    call.alpha = 1.0;
    call.a = x;
    call.c = out;
    call.stream = stream;
    return call;
}

std::vector<float> harness_inputs(int64_t n, uint64_t seed) {
    std::vector<float> x(static_cast<size_t>(n));
    kreg::fill_uniform(x.data(), x.size(), seed, 0);
    kreg::operation_def(kreg::Operation::reduction).plant_special_values(x, seed);
    return x;
}

// One call on x, offset floats into the device buffer after the leading guard; checks x, out[1..3] and the
// result with the runner's own check.
void call_and_check(Instance& instance, Stream& stream, const std::vector<float>& x, size_t offset) {
    const kreg_kernel_info& info = instance.info;
    const size_t n = x.size(), total = kGuard + offset + n + kGuard;
    std::vector<uint32_t> host(total, kGuardBits);
    std::memcpy(host.data() + kGuard + offset, x.data(), n * 4);
    uint32_t out0[4] = {kreg::kPoisonBits, kOutSentinel, kOutSentinel, kOutSentinel};
    DeviceBuffer d_x(total * 4), d_out(sizeof out0);
    ASSERT_FALSE(testing::Test::HasFailure());
    CUDA_ASSERT(cudaMemcpy(d_x.ptr, host.data(), total * 4, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(d_out.ptr, out0, sizeof out0, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaDeviceSynchronize());
    const kreg_call call =
        reduction_call(int64_t(n), static_cast<const float*>(d_x.ptr) + kGuard + offset, d_out.ptr, stream.s);
    char error[1024] = "";
    ASSERT_NE(info.run, nullptr) << info.name << ": a reduction kernel has only the generic entry";
    ASSERT_EQ(info.run(instance.ptr, &call, error, sizeof error), KREG_STATUS_OK)
        << info.name << ": run failed: " << error;
    CUDA_ASSERT(cudaStreamSynchronize(stream.s));
    CUDA_ASSERT(cudaGetLastError());
    uint32_t out[4];
    std::vector<uint32_t> after(total);
    CUDA_ASSERT(cudaMemcpy(out, d_out.ptr, sizeof out, cudaMemcpyDeviceToHost));
    CUDA_ASSERT(cudaMemcpy(after.data(), d_x.ptr, total * 4, cudaMemcpyDeviceToHost));
    size_t changed = 0;
    for (size_t i = 0; i < total; ++i) changed += after[i] != host[i];
    EXPECT_EQ(changed, 0u) << info.name << ": " << changed << " elements of x or its guards were written";
    EXPECT_EQ(out[1], kOutSentinel) << info.name << ": wrote out[1]";
    EXPECT_EQ(out[3], kOutSentinel) << info.name << ": wrote out[3]";
    float got;
    std::memcpy(&got, &out[0], 4);
    const kreg::Shape shape{0, int64_t(n), 0, 0};  // the table's reduction shape: n alone
    const kreg::OperationDef& op = kreg::operation_def(kreg::Operation::reduction);
    const kreg::VerifyResult v =
        op.verify(x.data(), nullptr, &got, shape, op.default_tolerance(shape, kreg::DType::fp32), 0);
    EXPECT_TRUE(v.passed) << info.name << " n = " << n << " offset " << offset << ": " << v.reason;
}

class CudaReductionTest : public testing::TestWithParam<ReductionCase> {};

TEST_P(CudaReductionTest, SumWithinTheBound) {
    const ReductionCase& c = GetParam();
    const kreg_kernel_info& info = *c.kernel->info;
    if (const std::string why = no_device_reason(); !why.empty()) GTEST_SKIP() << why;
    Stream stream;
    Instance instance(info);
    ASSERT_NE(instance.ptr, nullptr) << info.name << ": create failed: " << instance.error;
    for (uint64_t seed : {1ull, 2ull, 3ull}) {
        call_and_check(instance, stream, harness_inputs(c.n, seed * 7919 + uint64_t(c.n)), 0);
        if (HasFatalFailure()) return;
    }
    call_and_check(instance, stream, harness_inputs(c.n, 4), 1);  // x 4 bytes off 16-byte alignment
}

INSTANTIATE_TEST_SUITE_P(AllCudaReductions, CudaReductionTest, testing::ValuesIn(cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaReductionTest);

// The lab's steps and CUB are all there (a step missing from the build is a failure, not a quiet pass), and
// every launch a kernel describes is one its device function can take.
TEST(CudaReductions, EveryStepIsLoadedAndDescribesALaunchItCanTake) {
    std::vector<std::string> names;
    for (const LoadedKernel& k : reductions()) names.push_back(k.info->name);
    for (const char* want : {"cuda_r1_atomic", "cuda_r2_tree", "cuda_r3_sequential", "cuda_r4_first_add",
                             "cuda_r5_warp_shuffle", "cuda_r6_grid_stride", "cuda_r7_one_pass", "cub_reduce_sum"})
        EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want << " is not in the plugin folder";
    if (const std::string why = no_device_reason(); !why.empty()) GTEST_SKIP() << why;
    DeviceBuffer x(64), out(16);
    for (const LoadedKernel& k : reductions()) {
        if (k.info->describe_call_launch == nullptr) continue;
        Instance instance(*k.info);
        ASSERT_NE(instance.ptr, nullptr) << k.info->name;
        for (int64_t n : {int64_t(1), int64_t(1000003), int64_t(1) << 30}) {
            const kreg_call call = reduction_call(n, x.ptr, out.ptr, nullptr);
            kreg_launch_info launch{};
            launch.struct_size = sizeof launch;
            char error[512] = "";
            const kreg_status status = k.info->describe_call_launch(instance.ptr, &call, &launch, error, sizeof error);
            if (std::string(k.info->name) == "cub_reduce_sum") {  // CUB does not say what it launches
                EXPECT_EQ(status, KREG_STATUS_UNSUPPORTED) << error;
                continue;
            }
            ASSERT_EQ(status, KREG_STATUS_OK) << k.info->name << ": " << error;
            cudaFuncAttributes attr{};
            ASSERT_EQ(cudaFuncGetAttributes(&attr, launch.device_function), cudaSuccess) << k.info->name;
            EXPECT_LE(launch.block[0], uint32_t(attr.maxThreadsPerBlock)) << k.info->name;
            EXPECT_GE(launch.grid[0], 1u) << k.info->name;
        }
    }
}

// A larger n than the parameterised cases, once per kernel: n = 2^26 + 5, the sweep's smallest large size.
TEST(CudaReductions, LargeNWithinTheBound) {
    if (const std::string why = no_device_reason(); !why.empty()) GTEST_SKIP() << why;
    const std::vector<float> x = harness_inputs((int64_t(1) << 26) + 5, 99);
    for (const LoadedKernel& k : reductions()) {
        Stream stream;
        Instance instance(*k.info);
        ASSERT_NE(instance.ptr, nullptr) << k.info->name;
        call_and_check(instance, stream, x, 0);
    }
}

}  // namespace
