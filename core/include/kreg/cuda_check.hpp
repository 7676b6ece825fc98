// Error checking for CUDA plugins: KREG_CUDA_CHECK(call) throws kreg::Error naming the call, the
// CUDA error name and the source location. The SDK trampoline turns that into a status plus message.
#pragma once

#include <kreg/kernel.hpp>

#include <cuda_runtime.h>

#include <string>

namespace kreg::detail {
[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
    throw Error(KREG_STATUS_RUNTIME_ERROR, std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) +
                                               ") from " + call + " at " + file + ":" + std::to_string(line));
}
}  // namespace kreg::detail

#define KREG_CUDA_CHECK(call)                                                               \
    do {                                                                                    \
        const cudaError_t kreg_cuda_status_ = (call);                                       \
        if (kreg_cuda_status_ != cudaSuccess)                                               \
            ::kreg::detail::throw_cuda_error(kreg_cuda_status_, #call, __FILE__, __LINE__); \
    } while (0)

// Checks the launch just made on this thread (configuration errors surface here, not at sync).
#define KREG_CUDA_CHECK_LAUNCH() KREG_CUDA_CHECK(cudaGetLastError())
