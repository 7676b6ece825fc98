#include "cuda/calibrate.hpp"

#include "cuda/cuda_check.hpp"
#include "cuda/host_convert.hpp"
#include "cuda/resources.hpp"
#include "measure/stats.hpp"
#include "verify/random_fill.hpp"

#include <chrono>
#include <functional>
#include <stdexcept>
#include <vector>

namespace kreg {
namespace {

constexpr int kWarmup = 2;
constexpr int kRepeats = 10;
constexpr int64_t kGemmSize = 8192;  // cuBLAS reaches its plateau here (GPU.md's table)
constexpr size_t kCopyBytes = size_t(1) << 30;
constexpr uint64_t kCalibrationSeed = 0x6b726567;  // "kreg"

// Median milliseconds of kRepeats event-timed calls of op on stream, after kWarmup untimed ones.
double median_ms(cudaStream_t stream, const std::function<void()>& op) {
    Event start, stop;
    for (int i = 0; i < kWarmup; ++i) op();
    std::vector<double> samples;
    for (int i = 0; i < kRepeats; ++i) {
        KREG_RUNNER_CUDA_CHECK(cudaEventRecord(start.get(), stream));
        op();
        KREG_RUNNER_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
        KREG_RUNNER_CUDA_CHECK(cudaEventSynchronize(stop.get()));
        float ms = 0;
        KREG_RUNNER_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        samples.push_back(ms);
    }
    return compute_stats(samples).median_ms;
}

double copy_gbps(cudaStream_t stream) {
    DeviceBuffer src(kCopyBytes), dst(kCopyBytes);
    KREG_RUNNER_CUDA_CHECK(cudaMemsetAsync(src.get(), 0x5a, kCopyBytes, stream));
    const double ms = median_ms(stream, [&] {
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), kCopyBytes, cudaMemcpyDeviceToDevice, stream));
    });
    return 2.0 * double(kCopyBytes) / (ms * 1e-3) / 1e9;
}

void upload(const void* host, DeviceBuffer& device, cudaStream_t stream) {
    KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(device.get(), host, device.bytes(), cudaMemcpyHostToDevice, stream));
    KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// One call of a plugin's kernel through the ABI, queued on stream. A kernel's error status throws
// naming the kernel; a launch error it left behind surfaces at the next CUDA check.
void call_kernel(const CeilingKernel& kernel, DType dtype, int64_t n, const void* a, const void* b, float* c,
                 cudaStream_t stream) {
    kreg_gemm_args args{};
    args.struct_size = sizeof(kreg_gemm_args);
    args.m = args.n = args.k = n;
    args.lda = args.ldb = args.ldc = n;
    args.alpha = 1.0;
    args.beta = 0.0;
    args.dtype = static_cast<kreg_dtype>(dtype);
    args.a = a;
    args.b = b;
    args.c = c;
    args.stream = stream;
    char error[1024] = {};
    const kreg_status status = kernel.info->run_gemm(kernel.instance, &args, error, sizeof error);
    error[sizeof error - 1] = '\0';
    if (status != KREG_STATUS_OK)
        throw std::runtime_error(
            std::string("calibrating with ") + kernel.info->name + " at " + std::to_string(n) +
            "^3: " + (error[0] ? error : "run_gemm returned status " + std::to_string(int(status))));
}

}  // namespace

const char* ceiling_key(DType dtype) {
    switch (dtype) {
        case DType::fp32:
            return "sgemm_tflops";
        case DType::tf32:
            return "tf32_tflops";
        case DType::bf16:
            return "bf16_tflops";
        case DType::fp16:
            return "";
    }
    return "";
}

nlohmann::json calibrate_ceilings(int device, const CeilingKernels& gemm) {
    const auto began = std::chrono::steady_clock::now();
    KREG_RUNNER_CUDA_CHECK(cudaSetDevice(device));
    Stream stream;
    nlohmann::json out;
    out["dram_copy_gbps"] = copy_gbps(stream.get());  // its 2 GiB are freed before the GEMM operands exist

    const int64_t n = kGemmSize;
    const size_t count = size_t(n * n);
    std::vector<float> a(count), b(count);
    fill_uniform(a.data(), count, kCalibrationSeed, 0);
    fill_uniform(b.data(), count, kCalibrationSeed, 1);

    DeviceBuffer c(count * sizeof(float));
    const double flops = 2.0 * double(n) * double(n) * double(n);
    nlohmann::json unavailable = nlohmann::json::object();
    const auto measure = [&](DType dtype, const void* da, const void* db) {
        const char* key = ceiling_key(dtype);
        const auto kernel = gemm.kernels.find(dtype);
        if (kernel == gemm.kernels.end() || kernel->second.info == nullptr) {
            out[key] = nullptr;
            const auto why = gemm.unavailable.find(dtype);
            unavailable[key] =
                why != gemm.unavailable.end() ? why->second : "no kernel for " + std::string(to_string(dtype));
            return;
        }
        const double ms = median_ms(
            stream.get(), [&] { call_kernel(kernel->second, dtype, n, da, db, c.as<float>(), stream.get()); });
        out[key] = flops / (ms * 1e-3) / 1e12;
    };
    {
        DeviceBuffer da(count * sizeof(float)), db(count * sizeof(float));
        upload(a.data(), da, stream.get());
        upload(b.data(), db, stream.get());
        measure(DType::fp32, da.get(), db.get());
        measure(DType::tf32, da.get(), db.get());
    }
    {
        const std::vector<uint16_t> a16 = round_to_bf16(a.data(), count);
        const std::vector<uint16_t> b16 = round_to_bf16(b.data(), count);
        DeviceBuffer da(count * sizeof(uint16_t)), db(count * sizeof(uint16_t));
        upload(a16.data(), da, stream.get());
        upload(b16.data(), db, stream.get());
        measure(DType::bf16, da.get(), db.get());
    }
    KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    if (!unavailable.empty()) out["unavailable"] = unavailable;
    out["size"] = n;
    out["copy_bytes"] = kCopyBytes;
    out["repeats"] = kRepeats;
    out["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    return out;
}

}  // namespace kreg
