// Times one launch with CUDA events recorded on the harness stream: the GPU's own clock between the
// start and stop events, without the host's launch overhead before the first or after the last.
#pragma once

#include "cuda/cuda_check.hpp"
#include "cuda/resources.hpp"
#include "measure/sampler.hpp"

#include <cuda_runtime.h>

namespace kreg {

class CudaEventTimer final : public Timer {
public:
    explicit CudaEventTimer(cudaStream_t stream) : stream_(stream) {}
    void start() override { KREG_RUNNER_CUDA_CHECK(cudaEventRecord(start_.get(), stream_)); }
    // Records the stop event and waits for it, so a kernel fault surfaces here (as a CudaError).
    double stop_ms() override {
        KREG_RUNNER_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
        KREG_RUNNER_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
        float ms = 0;
        KREG_RUNNER_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
        return double(ms);
    }
    std::string name() const override { return "cuda_event"; }

private:
    cudaStream_t stream_;
    Event start_, stop_;
};

}  // namespace kreg
