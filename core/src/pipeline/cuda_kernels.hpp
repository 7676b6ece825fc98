// The measurement pipeline's own device code (cuda_kernels.cu): the kernel that holds the harness
// stream while a timed launch is queued, and the scan of C after every call. Host-callable launchers,
// so that the rest of the pipeline stays plain C++.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "verify/output_fill.hpp"

namespace kreg {

// Spins on stream until *release (host memory mapped into the device) becomes non-zero, or until
// timeout_ns of the GPU's global timer have passed; then writes 1 (released) or 2 (timed out) to
// *state. Everything queued on stream after it waits meanwhile: the timed launch and its events are
// queued while the GPU is held, so the start event does not see the host's launch overhead (the
// nvbench blocking_kernel). One thread; it occupies one SM slot while it spins.
cudaError_t launch_hold_stream(const volatile int32_t* release, volatile int32_t* state, uint64_t timeout_ns,
                               cudaStream_t stream);

// Counters of scan_c: poison words, other non-finite values, and the lowest index of each (UINT64_MAX
// when none).
struct DeviceScanCounts {
    unsigned long long unwritten;
    unsigned long long first_unwritten;
    unsigned long long non_finite;
    unsigned long long first_non_finite;
};

// Scans count words of c on stream: words that still hold the call's fill (still_holds_fill) are
// unwritten, other NaN/Inf words are non-finite; counts (device memory, reset here) receives the tallies.
// Also copies c[at[i]] to samples[i] for i < samples_count (at and samples device memory).
cudaError_t launch_scan_c(const uint32_t* c, size_t count, const OutputFill& fill, DeviceScanCounts* counts,
                          const unsigned long long* at, float* samples, int samples_count, cudaStream_t stream);

// *first (device memory, set here) = the lowest byte index where a and b differ over `bytes`, or
// UINT64_MAX when they are equal: the inputs' check after every checked call stays on the device.
cudaError_t launch_first_difference(const unsigned char* a, const unsigned char* b, size_t bytes,
                                    unsigned long long* first, cudaStream_t stream);

// Writes a finite fill (finite_fill_word(key, i)) over count words of c on stream.
cudaError_t launch_finite_fill(uint32_t* c, size_t count, uint64_t key, cudaStream_t stream);

}  // namespace kreg
