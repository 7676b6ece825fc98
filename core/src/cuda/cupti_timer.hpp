// Times a call by the GPU's own clock: CUPTI's activity records of every kernel, memcpy and memset the process
// runs, on every stream, between the call's start and the moment the device is idle again. The sample is the
// span of those records (first start to last end), so neither the host's launch path nor the gap between the
// launch and the kernel is in it, and work a call leaves running on another stream is in it.
//
// Why no hold kernel (cuda_backend.cpp's HeldStreamTimer): holding the stream kept the launch path out of
// event timing; CUPTI's records leave it out by construction, and a hold kernel would be one more record in
// the window that would have to be told apart from the plugin's. The harness does no GPU work of its own in
// the window at all: the device is idle when start() is called (the backend waits for the whole device
// before every call), and what the harness queues after stop_ms() (the output scan) starts after t1. So every
// record in the window is the call's, and none is excluded by name or by any other mark a plugin could copy.
//
// Beside each sample the timer keeps plain CUDA events recorded on the harness stream before and after the
// call: that time includes the launch gap (it is what the event timers measure when the stream is not held),
// and the host's wall clock from start() through the device-wide wait (TimingCrossCheck's wall time).
//
// libcupti is opened with dlopen (RTLD_LOCAL), not linked: a machine without it still runs, timed by events,
// and its symbols never join the process's global scope, where a plugin's unqualified import of a cupti*
// function could bind to them. open() fails with the reason when CUPTI cannot be used: the library is
// missing or of another version, a profiler owns CUPTI (ncu, nsys: CUDA_INJECTION64_PATH is set), or an
// activity kind cannot be enabled. KREG_CUPTI_LIBRARY in the environment names the library to open instead
// of the toolkit's (tests point it at a missing file to exercise the fallback).
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cuda/resources.hpp"
#include "measure/kernel_window.hpp"
#include "measure/sampler.hpp"

namespace kreg {

class CuptiTimer final : public Timer {
public:
    // A timer for calls on stream, or null with why_not set ("CUPTI unavailable: ...").
    static std::unique_ptr<CuptiTimer> open(cudaStream_t stream, std::string& why_not);
    ~CuptiTimer() override;
    CuptiTimer(const CuptiTimer&) = delete;
    CuptiTimer& operator=(const CuptiTimer&) = delete;

    // Reads t0 and records the start event. The device must be idle.
    void start() override;
    // Records the stop event, waits for the whole device (a kernel fault surfaces here, as a CudaError),
    // reads t1, flushes CUPTI's buffers and returns the window's span. A window CUPTI saw nothing of
    // (records dropped, or none delivered) returns the event time instead, and is counted as such.
    double stop_ms() override;
    std::string name() const override { return "cupti"; }

    // Per stop_ms(), in order: what the GPU ran, the event time beside it, the host's cost of the call
    // (start() to the call's return), and the wall time from start() through the device-wide wait.
    const std::vector<KernelWindow>& windows() const { return windows_; }
    const std::vector<double>& event_ms() const { return event_ms_; }
    const std::vector<double>& launch_ms() const { return launch_ms_; }
    double last_event_ms() const { return event_ms_.empty() ? 0.0 : event_ms_.back(); }
    double last_wall_ms() const { return last_wall_ms_; }

private:
    CuptiTimer(cudaStream_t stream, ActivityStream harness);

    cudaStream_t stream_;
    ActivityStream harness_;
    Event start_, stop_;
    DeviceBuffer primer_;  // what prime() writes: 4 bytes
    uint64_t t0_ns_ = 0;
    CallWindow last_window_;  // the last stop_ms()'s, to recognise its records delivered late
    uint64_t dropped_at_start_ = 0;
    std::chrono::steady_clock::time_point wall_start_{};
    std::vector<KernelWindow> windows_;
    std::vector<double> event_ms_, launch_ms_;
    double last_wall_ms_ = 0;
};

}  // namespace kreg
