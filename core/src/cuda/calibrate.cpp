#include "cuda/calibrate.hpp"

#include "cuda/cublas_gemm.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/host_convert.hpp"
#include "cuda/resources.hpp"
#include "measure/stats.hpp"
#include "verify/random_fill.hpp"

#include <chrono>
#include <functional>
#include <vector>

namespace kreg {
namespace {

constexpr int kWarmup = 2;
constexpr int kRepeats = 10;
constexpr int64_t kGemmSize = 8192;          // cuBLAS reaches its plateau here (GPU.md's table)
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

}  // namespace

nlohmann::json calibrate_ceilings(int device) {
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

    CublasHandle blas(stream.get());
    DeviceBuffer c(count * sizeof(float));
    const double flops = 2.0 * double(n) * double(n) * double(n);
    const auto tflops = [&](DType dtype, const void* da, const void* db) {
        const double ms = median_ms(stream.get(), [&] {
            cublas_gemm_row_major(blas.get(), dtype, n, n, n, da, db, c.as<float>());
        });
        return flops / (ms * 1e-3) / 1e12;
    };
    {
        DeviceBuffer da(count * sizeof(float)), db(count * sizeof(float));
        upload(a.data(), da, stream.get());
        upload(b.data(), db, stream.get());
        out["sgemm_tflops"] = tflops(DType::fp32, da.get(), db.get());
        out["tf32_tflops"] = tflops(DType::tf32, da.get(), db.get());
    }
    {
        const std::vector<uint16_t> a16 = round_to_bf16(a.data(), count);
        const std::vector<uint16_t> b16 = round_to_bf16(b.data(), count);
        DeviceBuffer da(count * sizeof(uint16_t)), db(count * sizeof(uint16_t));
        upload(a16.data(), da, stream.get());
        upload(b16.data(), db, stream.get());
        out["bf16_tflops"] = tflops(DType::bf16, da.get(), db.get());
    }
    KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    out["size"] = n;
    out["copy_bytes"] = kCopyBytes;
    out["repeats"] = kRepeats;
    out["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    return out;
}

}  // namespace kreg
