// Times one launch with CUDA events recorded on the harness stream: the GPU's own clock between the
// start and stop events, without the host's launch overhead before the first or after the last.
//
// Strict (grading) runs use Wait::device: the stop waits for the whole device, not only the stop
// event, and the host's wall clock is read around the same span (start through that wait). Work a
// kernel hid on another stream is then finished before the output is read, and shows up as wall time
// the events did not see (measure/anticheat.hpp, TimingCrossCheck).
#pragma once

#include "cuda/cuda_check.hpp"
#include "cuda/resources.hpp"
#include "measure/sampler.hpp"

#include <cuda_runtime.h>

#include <chrono>

namespace kreg {

class CudaEventTimer final : public Timer {
public:
    enum class Wait {
        stream,  // wait for the stop event only (the default measurement)
        device,  // then for the whole device (cudaDeviceSynchronize), and read the wall clock around it
    };

    explicit CudaEventTimer(cudaStream_t stream, Wait wait = Wait::stream) : stream_(stream), wait_(wait) {}
    void start() override {
        if (wait_ == Wait::device) wall_start_ = std::chrono::steady_clock::now();
        KREG_RUNNER_CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
    }
    // Records the stop event and waits for it, so a kernel fault surfaces here (as a CudaError).
    double stop_ms() override {
        KREG_RUNNER_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
        KREG_RUNNER_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
        if (wait_ == Wait::device) {
            KREG_RUNNER_CUDA_CHECK(cudaDeviceSynchronize());
            last_wall_ms_ =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start_).count();
        }
        float ms = 0;
        KREG_RUNNER_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
        return double(ms);
    }
    std::string name() const override { return "cuda_event"; }

    // Wait::device: host wall time of the last timed call, from start() through the device-wide wait.
    double last_wall_ms() const { return last_wall_ms_; }

private:
    cudaStream_t stream_;
    Wait wait_;
    Event start_, stop_;
    std::chrono::steady_clock::time_point wall_start_{};
    double last_wall_ms_ = 0;
};

}  // namespace kreg
