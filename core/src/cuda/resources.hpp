// Owning wrappers for the runner's CUDA resources, so that every path out of a job (a kernel error,
// a failed check, a thrown WorkerFatal) frees what was made. Destructors ignore errors: after a sticky
// error the frees fail too, and the process is about to end anyway.
#pragma once

#include "cuda/cuda_check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace kreg {

// cudaMalloc'd bytes on the current device.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
        if (bytes > 0) KREG_RUNNER_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    }
    ~DeviceBuffer() {
        if (ptr_ != nullptr) (void)cudaFree(ptr_);
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            if (ptr_ != nullptr) (void)cudaFree(ptr_);
            ptr_ = std::exchange(o.ptr_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void* get() const { return ptr_; }
    template <class T>
    T* as() const {
        return static_cast<T*>(ptr_);
    }
    size_t bytes() const { return bytes_; }

private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

// A non-blocking stream: it does not synchronize with the legacy default stream, so work a plugin
// wrongly puts there is not silently serialized into the timed region.
class Stream {
public:
    Stream() { KREG_RUNNER_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
    ~Stream() {
        if (s_ != nullptr) (void)cudaStreamDestroy(s_);
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return s_; }

private:
    cudaStream_t s_ = nullptr;
};

class Event {
public:
    Event() { KREG_RUNNER_CUDA_CHECK(cudaEventCreate(&e_)); }
    ~Event() {
        if (e_ != nullptr) (void)cudaEventDestroy(e_);
    }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    cudaEvent_t get() const { return e_; }

private:
    cudaEvent_t e_ = nullptr;
};

}  // namespace kreg
