// What the GPU tests (tests/gpu) share: why there is no usable device, an owning device buffer, and an
// assertion on a CUDA runtime call.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>

namespace kreg::test {

// Empty when a CUDA device is usable, else why not (a test skips with it).
inline std::string no_device_reason() {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
    if (count == 0) return "no CUDA device: cudaGetDeviceCount reported 0 devices";
    return "";
}

// cudaMalloc'd memory, freed with the object; a failed allocation is a test failure and leaves ptr null.
struct DeviceBuffer {
    void* ptr = nullptr;
    explicit DeviceBuffer(size_t bytes) {
        const cudaError_t e = cudaMalloc(&ptr, std::max<size_t>(bytes, 16));
        if (e != cudaSuccess) {
            ptr = nullptr;
            ADD_FAILURE() << "cudaMalloc(" << bytes << ") failed: " << cudaGetErrorString(e);
        }
    }
    ~DeviceBuffer() { cudaFree(ptr); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    float* f() const { return static_cast<float*>(ptr); }
};

}  // namespace kreg::test

#define CUDA_ASSERT(call)                                                                                     \
    do {                                                                                                      \
        const cudaError_t e_ = (call);                                                                        \
        ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorName(e_) << " " << cudaGetErrorString(e_); \
    } while (0)
