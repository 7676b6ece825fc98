// Shared pieces of the CUDA reduction lab (plugins/cuda_r1_atomic .. cuda_r7_one_pass and cub_reduce).
// Header-only and included by relative path, so this folder has no CMakeLists.txt and is not a plugin.
//
// What lives here is what every step needs and no step teaches: the device-side parameters, the scratch
// memory a multi-pass or one-pass reduction keeps between its launches, the pass driver of steps 2-5, the
// warp and block sums of steps 5-7, the traffic model and the ABI side (argument checks, the launch record).
//
// The operation (ABI 1.3, KREG_OPERATION_REDUCTION through kreg_call): out[0] = x[0] + ... + x[n-1], fp32, any n >= 1,
// in any order. The runner checks it against an fp64 reference within gamma_D(n) * sum |x_i|, D(n) = 256 + ceil(n /
// 65536) (docs/TOLERANCES.md, "Reduction"): every kernel here keeps each element's path through fp32 additions far
// shorter than that (a tree of depth log2(n), or a chain of n / (grid threads) per thread and a tree), except step 1,
// whose one atomic chain has length n (REDUCTION.md says what that means).
#pragma once

#include "launch_info.cuh"

#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kreg_reduction {

// Kernel parameters of one pass: sum count elements of in into out[blockIdx.x] (one partial per block),
// or into out[0] for the last pass.
struct Fp32Pass {
    const float* in;
    float* out;
    int64_t count;
};

// Largest n accepted: 2^34 floats (64 GiB), so every grid below stays within gridDim.x's 2^31 - 1.
constexpr int64_t kMaxCount = int64_t{1} << 34;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One launch: which kernel, and its configuration (the members fill_launch_info reads).
template <class Params>
struct LaunchOf {
    void (*kernel)(Params);
    dim3 grid;
    dim3 block;
    unsigned dynamic_smem;
};
using PassLaunch = LaunchOf<Fp32Pass>;

// Bytes a reduction must move: x read once, one float written.
inline double reduction_bytes(int64_t n) { return 4.0 * static_cast<double>(n) + 4.0; }

// Device scratch that outlives a call: the partial sums between passes (or of the one-pass kernel), a
// counter, CUB's temporary storage. Grown in stream order on the call's stream (cudaMallocAsync does not
// synchronise the device); the first (warm-up) call of a shape pays for it, later calls reuse it. It keeps
// no results: every call writes every partial it reads.
class Scratch {
public:
    Scratch() = default;
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    ~Scratch() {
        if (data_ != nullptr) cudaFree(data_);  // the destructor never throws; an error here has no one to tell
    }

    // At least bytes of scratch, 256-byte aligned, usable by work queued on stream after this call. *fresh
    // (if given) says whether the memory is new, i.e. holds no value a kernel left there.
    void* reserve(size_t bytes, cudaStream_t stream, bool* fresh = nullptr) {
        if (fresh != nullptr) *fresh = bytes > capacity_;
        if (bytes <= capacity_) return data_;
        if (data_ != nullptr) KREG_CUDA_CHECK(cudaFreeAsync(data_, stream));
        data_ = nullptr;
        capacity_ = 0;
        KREG_CUDA_CHECK(cudaMallocAsync(&data_, bytes, stream));
        capacity_ = bytes;
        return data_;
    }

private:
    void* data_ = nullptr;
    size_t capacity_ = 0;
};

// The streaming multiprocessors of the current device (the kernels' grids of steps 6 and 7 are sized by it).
inline int multiprocessor_count() {
    int device = 0, count = 0;
    KREG_CUDA_CHECK(cudaGetDevice(&device));
    KREG_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return std::max(count, 1);
}

// ---------------------------------------------------------------------------------------------------
// The pass driver of steps 2-5: the same kernel again on its own partials until one block is left, whose
// sum is out[0] (the classic multi-pass reduction: no block waits for another within a launch).

// Floats of scratch the passes after the first one need for n elements at per_block elements per block.
inline size_t pass_scratch_floats(int64_t n, int64_t per_block) {
    size_t floats = 0;
    for (int64_t count = ceil_div(n, per_block); count > 1; count = ceil_div(count, per_block))
        floats += static_cast<size_t>(count);
    return floats;
}

// The first pass's launch (what describe_launch reports).
inline PassLaunch first_pass(void (*kernel)(Fp32Pass), int threads, int64_t per_block, int64_t n,
                             unsigned dynamic_smem) {
    return {kernel, dim3(static_cast<unsigned>(ceil_div(n, per_block))), dim3(static_cast<unsigned>(threads)),
            dynamic_smem};
}

// Runs the passes: x (n elements) into out[0]. Each pass's partials follow the previous pass's in scratch.
inline void run_passes(void (*kernel)(Fp32Pass), int threads, int64_t per_block, unsigned dynamic_smem, const float* x,
                       int64_t n, float* out, Scratch& scratch, cudaStream_t stream) {
    const size_t floats = pass_scratch_floats(n, per_block);
    float* partials = floats > 0 ? static_cast<float*>(scratch.reserve(floats * sizeof(float), stream)) : nullptr;
    const float* in = x;
    int64_t count = n;
    for (;;) {
        const int64_t blocks = ceil_div(count, per_block);
        float* dst = blocks == 1 ? out : partials;
        kernel<<<static_cast<unsigned>(blocks), threads, dynamic_smem, stream>>>(Fp32Pass{in, dst, count});
        KREG_CUDA_CHECK_LAUNCH();
        if (blocks == 1) return;
        in = dst;
        count = blocks;
        partials += blocks;  // the next pass's partials follow (pass_scratch_floats counted them)
    }
}

// ---------------------------------------------------------------------------------------------------
// Device helpers of steps 5-7

constexpr unsigned kFullWarp = 0xffffffffu;

// The sum of v over the 32 lanes of a warp, in lane 0 (a tree of depth 5, no shared memory, no barrier).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(kFullWarp, v, offset);
    return v;
}

// The sum of v over the block, in thread 0: each warp's sum by shuffles, then the first warp sums those.
// Threads is a multiple of 32, at most 1024. Every thread of the block must call it; a second call in the
// same kernel needs a __syncthreads() between the two (they share warp_sums).
template <int Threads>
__device__ __forceinline__ float block_sum(float v) {
    static_assert(Threads % 32 == 0 && Threads <= 1024, "whole warps, at most 1024 threads");
    constexpr int kWarps = Threads / 32;
    __shared__ float warp_sums[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < kWarps ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
    }
    return v;
}

// The sum of the elements this thread owns in a grid-stride walk over x[0, n) (steps 6 and 7): float4
// loads, Unroll of them issued before any is added, so each thread has 16 * Unroll bytes in flight; then the
// float4s a full step does not cover, then the n % 4 scalars. Vector: x is 16-byte aligned (the ABI
// promises it; the host checks and takes the scalar walk otherwise). The thread's chain of additions is
// about n / (4 * threads) long: short next to the bound's n / 65536 for any grid of >= 16384 threads.
template <int Threads, int Unroll, bool Vector>
__device__ __forceinline__ float grid_stride_sum(const float* __restrict__ x, int64_t n) {
    const size_t tid = size_t(blockIdx.x) * Threads + threadIdx.x;
    const size_t threads = size_t(gridDim.x) * Threads;
    const size_t count = static_cast<size_t>(n);
    float acc = 0.0f;
    size_t done = 0;  // elements covered by the vector walk
    if (Vector) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        const size_t vectors = count / 4, step = threads * Unroll;
        size_t base = 0;
        for (; base + step <= vectors; base += step) {
            float4 v[Unroll];
#pragma unroll
            for (int u = 0; u < Unroll; ++u) v[u] = __ldg(x4 + base + tid + u * threads);
#pragma unroll
            for (int u = 0; u < Unroll; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        }
        for (size_t i = base + tid; i < vectors; i += threads) {
            const float4 v = __ldg(x4 + i);
            acc += (v.x + v.y) + (v.z + v.w);
        }
        done = vectors * 4;
    }
    for (size_t i = done + tid; i < count; i += threads) acc += __ldg(x + i);
    return acc;
}

// One block sums p.count partials into p.out[0] (the last launch of step 6).
template <int Threads>
__global__ void __launch_bounds__(Threads) single_block_sum(Fp32Pass p) {
    float v = 0.0f;
    for (int64_t i = threadIdx.x; i < p.count; i += Threads) v += p.in[i];
    v = block_sum<Threads>(v);
    if (threadIdx.x == 0) p.out[0] = v;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// How many blocks of kernel (threads each) are resident at once on this device: its occupancy per SM times
// the SMs. Asked once per instance (an instance lives on one device), not on every call.
template <class Params>
int64_t resident_blocks(void (*kernel)(Params), int threads) {
    int per_sm = 0;
    KREG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    return int64_t(std::max(per_sm, 1)) * multiprocessor_count();
}

// Blocks of a grid-stride launch over n: enough for one full step (threads * 4 * unroll elements a block),
// at most the resident ones: more would only wait for a slot, and every extra block is one more partial.
inline unsigned grid_stride_blocks(int64_t resident, int threads, int unroll, int64_t n) {
    const int64_t needed = ceil_div(n, int64_t(threads) * 4 * unroll);
    return static_cast<unsigned>(std::max<int64_t>(1, std::min(needed, resident)));
}

// ---------------------------------------------------------------------------------------------------
// The ABI side (ABI 1.3's generic entry: a kreg_call of KREG_OPERATION_REDUCTION, sizes[0] = n, a = x, c = out)

struct Fp32Sum {
    const float* x;
    float* out;
    int64_t n;
};

inline Fp32Sum fp32_sum(const kreg_call& call) {
    if (call.struct_size < sizeof(kreg_call))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_call.struct_size is smaller than this plugin's ABI");
    if (call.operation != KREG_OPERATION_REDUCTION)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                          "not a reduction call (operation " + std::to_string(int(call.operation)) + ")");
    if (call.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "this kernel sums fp32 only");
    const int64_t n = call.sizes[0];
    if (n < 1 || n > kMaxCount)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                          "n must be in 1..2^34, got " + std::to_string(static_cast<long long>(n)));
    if (call.a == nullptr || call.c == nullptr) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null pointer");
    return {static_cast<const float*>(call.a), static_cast<float*>(call.c), n};
}

// Traffic model for the ABI: its first size is the call's sizes[0], a reduction's n.
inline double model_bytes(int64_t n, int64_t /*unused*/, int64_t /*unused*/, kreg_dtype /*dtype*/) {
    return reduction_bytes(n);
}

// Spec shared by the reduction kernels: CUDA, fp32, any n, on the generic entry.
inline kreg::KernelSpec cuda_spec(const char* name, const char* description) {
    kreg::KernelSpec s;
    s.name = name;
    s.description = description;
    s.operation = KREG_OPERATION_REDUCTION;
    s.backend = KREG_BACKEND_CUDA;
    s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
    s.min_compute_capability = 70;
    s.model_global_bytes = &model_bytes;
    return s;
}

// Base of every reduction kernel class: Derived provides `void sum(const Fp32Sum&, cudaStream_t)` and
// `plan(const Fp32Sum&)` (the first launch sum makes), so the record matches what ran.
template <class Derived>
class ReductionKernel : public kreg::IOperationKernel {
public:
    void run(const kreg_call& call) override {
        static_cast<Derived*>(this)->sum(fp32_sum(call), static_cast<cudaStream_t>(call.stream));
    }
    bool describe_launch(const kreg_call& call, kreg_launch_info& info) override {
        kreg_cuda::fill_launch_info(static_cast<Derived*>(this)->plan(fp32_sum(call)), info);
        return true;
    }
};

}  // namespace kreg_reduction
