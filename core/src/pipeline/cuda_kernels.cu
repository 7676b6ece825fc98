#include "pipeline/cuda_kernels.hpp"

namespace kreg {
namespace {

__device__ uint64_t global_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void hold_stream(const volatile int32_t* release, volatile int32_t* state, uint64_t timeout_ns) {
    const uint64_t start = global_ns();
    while (*release == 0) {
        if (global_ns() - start > timeout_ns) {
            *state = 2;
            __threadfence_system();
            return;
        }
    }
    *state = 1;
    __threadfence_system();
}

__global__ void reset_counts(DeviceScanCounts* counts) {
    counts->unwritten = 0;
    counts->non_finite = 0;
    counts->first_unwritten = ~0ULL;
    counts->first_non_finite = ~0ULL;
}

__global__ void scan_c(const uint32_t* c, size_t count, OutputFill fill, DeviceScanCounts* counts,
                       const unsigned long long* at, float* samples, int samples_count) {
    unsigned long long unwritten = 0, non_finite = 0, first_unwritten = ~0ULL, first_non_finite = ~0ULL;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const uint32_t w = c[i];
        if (still_holds_fill(fill, i, w)) {
            if (unwritten++ == 0) first_unwritten = i;
        } else if ((w & 0x7f800000u) == 0x7f800000u && non_finite++ == 0) {
            first_non_finite = i;
        }
    }
    if (unwritten > 0) {
        atomicAdd(&counts->unwritten, unwritten);
        atomicMin(&counts->first_unwritten, first_unwritten);
    }
    if (non_finite > 0) {
        atomicAdd(&counts->non_finite, non_finite);
        atomicMin(&counts->first_non_finite, first_non_finite);
    }
    if (blockIdx.x == 0)
        for (int s = int(threadIdx.x); s < samples_count; s += int(blockDim.x)) samples[s] = __uint_as_float(c[at[s]]);
}

__global__ void finite_fill(uint32_t* c, size_t count, uint64_t key) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        c[i] = finite_fill_word(key, i);
}

__global__ void set_max(unsigned long long* first) { *first = ~0ULL; }

__global__ void first_difference(const unsigned char* a, const unsigned char* b, size_t bytes,
                                 unsigned long long* first) {
    const size_t words = bytes / 4, stride = size_t(gridDim.x) * blockDim.x;
    const auto* wa = reinterpret_cast<const uint32_t*>(a);  // both 256-byte aligned (cudaMalloc, padding)
    const auto* wb = reinterpret_cast<const uint32_t*>(b);
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride)
        if (wa[i] != wb[i]) {
            for (size_t byte = 4 * i; byte < 4 * i + 4; ++byte)
                if (a[byte] != b[byte]) {
                    atomicMin(first, (unsigned long long)byte);
                    break;
                }
            break;  // this thread's later words can only be higher
        }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        for (size_t byte = 4 * words; byte < bytes; ++byte)
            if (a[byte] != b[byte]) {
                atomicMin(first, (unsigned long long)byte);
                break;
            }
}

unsigned grid_for(size_t count) {
    const size_t blocks = (count + 255) / 256;
    return unsigned(blocks < 1024 ? (blocks > 0 ? blocks : 1) : 1024);
}

}  // namespace

cudaError_t launch_hold_stream(const volatile int32_t* release, volatile int32_t* state, uint64_t timeout_ns,
                               cudaStream_t stream) {
    hold_stream<<<1, 1, 0, stream>>>(release, state, timeout_ns);
    return cudaGetLastError();
}

cudaError_t launch_scan_c(const uint32_t* c, size_t count, const OutputFill& fill, DeviceScanCounts* counts,
                          const unsigned long long* at, float* samples, int samples_count, cudaStream_t stream) {
    reset_counts<<<1, 1, 0, stream>>>(counts);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    // Enough blocks to stream C at full bandwidth; each thread reads many words.
    scan_c<<<grid_for(count), 256, 0, stream>>>(c, count, fill, counts, at, samples, samples_count);
    return cudaGetLastError();
}

cudaError_t launch_first_difference(const unsigned char* a, const unsigned char* b, size_t bytes,
                                    unsigned long long* first, cudaStream_t stream) {
    set_max<<<1, 1, 0, stream>>>(first);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    first_difference<<<grid_for(bytes / 4), 256, 0, stream>>>(a, b, bytes, first);
    return cudaGetLastError();
}

cudaError_t launch_finite_fill(uint32_t* c, size_t count, uint64_t key, cudaStream_t stream) {
    finite_fill<<<grid_for(count), 256, 0, stream>>>(c, count, key);
    return cudaGetLastError();
}

}  // namespace kreg
