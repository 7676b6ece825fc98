// core/src/cuda/error_causes: the words a person reads where no GPU can be used (issue 22: a sweep on a
// machine without a GPU said cudaErrorInsufficientDriver where "no NVIDIA driver" was meant).
#include "cuda/error_causes.hpp"

#include <gtest/gtest.h>

namespace kreg {
namespace {

TEST(CudaErrorCauses, TheErrorsOfAMachineWithoutAGpuReadAsTheirCause) {
    EXPECT_EQ(no_cuda_device_reason("cudaGetDeviceCount", "cudaErrorInsufficientDriver"),
              "no CUDA device: no NVIDIA driver, or one too old for this CUDA runtime "
              "(cudaGetDeviceCount: cudaErrorInsufficientDriver)");
    EXPECT_NE(no_cuda_device_reason("cudaGetDeviceCount", "cudaErrorNoDevice").find("no NVIDIA GPU is visible"),
              std::string::npos);
    EXPECT_NE(plain_cuda_cause("cudaErrorSystemDriverMismatch").find("differ in version"), std::string::npos);
    EXPECT_NE(plain_cuda_cause("cudaErrorDevicesUnavailable").find("busy"), std::string::npos);
}

TEST(CudaErrorCauses, AnErrorWithoutBetterWordsKeepsItsName) {
    EXPECT_EQ(plain_cuda_cause("cudaErrorUnknown"), "");
    EXPECT_EQ(no_cuda_device_reason("cudaGetDeviceCount", "cudaErrorUnknown"),
              "no CUDA device (cudaGetDeviceCount: cudaErrorUnknown)");
}

}  // namespace
}  // namespace kreg
