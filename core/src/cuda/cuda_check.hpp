// Error checking for the runner's own CUDA runtime calls (plugins use <kreg/cuda_check.hpp>). The runner
// makes no cuBLAS call of its own: its ceilings come from the cuBLAS plugin, over the ABI.
//
// KREG_RUNNER_CUDA_CHECK(call) throws kreg::CudaError, whose what() starts with the error's name and
// names the call's text and file:line, e.g.
//   "cudaErrorIllegalAddress: an illegal memory access was encountered; from cudaStreamSynchronize(s) at
//   cuda_backend.cpp:120"
// Before throwing it calls cudaGetLastError(), so a non-sticky error does not resurface from the next,
// unrelated call (the nvbench habit). A sticky error cannot be cleared: is_sticky() tells the job runner
// that the context is unusable and the worker must end (WorkerFatal).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace kreg {

// Errors after which the CUDA context is corrupted: every later call returns the same error and only
// a new process can use the device again (driver_types.h: "the process must be terminated and
// relaunched"). A kernel fault (bad address, trap, assert) is one of these.
inline bool is_sticky(cudaError_t e) {
    switch (e) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchTimeout:
        case cudaErrorAssert:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorLaunchFailure:
        case cudaErrorTensorMemoryLeak:
        case cudaErrorECCUncorrectable:
        case cudaErrorNvlinkUncorrectable:
        case cudaErrorContained:
        case cudaErrorExternalDevice:
        case cudaErrorMpsClientTerminated:
        case cudaErrorContextIsDestroyed:
            return true;
        default:
            return false;
    }
}

// A failed runner-side CUDA runtime call. code() is the error; what() is the readable message.
class CudaError : public std::runtime_error {
public:
    CudaError(cudaError_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
    cudaError_t code() const noexcept { return code_; }
    bool sticky() const noexcept { return is_sticky(code_); }

private:
    cudaError_t code_;
};

inline std::string cuda_error_text(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

namespace detail {
[[noreturn]] inline void throw_runner_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
    (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
    throw CudaError(e, cuda_error_text(e) + "; from " + call + " at " + file + ":" + std::to_string(line));
}
}  // namespace detail
}  // namespace kreg

#define KREG_RUNNER_CUDA_CHECK(call)                                                              \
    do {                                                                                          \
        const cudaError_t kreg_runner_err_ = (call);                                              \
        if (kreg_runner_err_ != cudaSuccess)                                                      \
            ::kreg::detail::throw_runner_cuda_error(kreg_runner_err_, #call, __FILE__, __LINE__); \
    } while (0)
