// CUDA's error names in the words a person needs: "cudaErrorInsufficientDriver" is, on a machine without a
// GPU, simply "no NVIDIA driver". Pure C++ (it maps names, it calls nothing), so every build has it.
#pragma once

#include <string>
#include <string_view>

namespace kreg {

// The plain cause of a CUDA error met while looking for a device ("no NVIDIA driver, or one too old for
// this CUDA runtime" for cudaErrorInsufficientDriver), or "" for an error with no better words than its name.
std::string plain_cuda_cause(std::string_view error_name);

// Why no device can be used, for a row's reason: "no CUDA device: <plain cause> (<call>: <error name>)",
// the error name kept in parentheses for a search.
std::string no_cuda_device_reason(std::string_view call, std::string_view error_name);

}  // namespace kreg
