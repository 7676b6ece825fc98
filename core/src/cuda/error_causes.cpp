#include "cuda/error_causes.hpp"

#include <array>
#include <utility>

namespace kreg {

std::string plain_cuda_cause(std::string_view error_name) {
    // The errors cudaGetDeviceCount and a context's creation return when no GPU can be used.
    static const std::array<std::pair<std::string_view, std::string_view>, 9> kCauses{{
        {"cudaErrorInsufficientDriver", "no NVIDIA driver, or one too old for this CUDA runtime"},
        {"cudaErrorNoDevice", "no NVIDIA GPU is visible (none present, or CUDA_VISIBLE_DEVICES hides them)"},
        {"cudaErrorInvalidDevice", "no NVIDIA GPU is visible (none present, or CUDA_VISIBLE_DEVICES hides them)"},
        {"cudaErrorSystemDriverMismatch",
         "the NVIDIA driver library and its kernel module differ in version "
         "(reload the driver or reboot)"},
        {"cudaErrorCompatNotSupportedOnDevice",
         "this GPU does not support the CUDA forward-compatibility driver in use"},
        {"cudaErrorDevicesUnavailable", "every GPU is busy or set to exclusive use by another process"},
        {"cudaErrorInitializationError", "the NVIDIA driver failed to initialise"},
        {"cudaErrorSystemNotReady", "the GPU system is not ready (is nvidia-fabricmanager running?)"},
        {"cudaErrorNotPermitted", "this process may not use the GPU"},
    }};
    for (const auto& [name, cause] : kCauses)
        if (name == error_name) return std::string(cause);
    return "";
}

std::string no_cuda_device_reason(std::string_view call, std::string_view error_name) {
    const std::string cause = plain_cuda_cause(error_name);
    const std::string detail = std::string(call) + ": " + std::string(error_name);
    return cause.empty() ? "no CUDA device (" + detail + ")" : "no CUDA device: " + cause + " (" + detail + ")";
}

}  // namespace kreg
