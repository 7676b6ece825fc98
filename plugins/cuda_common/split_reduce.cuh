// What every kernel that splits K over blocks needs (plugins/cuda_splitk, cuda_small_tile, cuda_gemv): a workspace
// the instance owns, and the second pass that sums the splits' partial results in a fixed order. Header-only and
// included by relative path, like the rest of this folder.
//
// Why a workspace and a second pass rather than atomicAdd on C: float addition is not associative, so atomics make
// C depend on which split finished first, and a result that moves between runs on the same input cannot be told
// apart from a race (GPU.md). Each split s writes its partial tile to slice s of the workspace, a
// splits x m x ld float array; reduce_splits then adds the slices of every element in one fixed order (set by the
// split count and the shape alone, below), and applies alpha and beta once. The cost is the workspace traffic, 2 x 4 x
// splits x m x n bytes, which the split policies weigh against the wave they fill.
#pragma once

#include "gemm_common.cuh"

#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kreg_cuda {

// Where the partial results of a split call go: slice s, row r, column c is data[(s * rows + r) * ld + c].
// ld is a multiple of 4 and data 256-byte aligned, so every row of every slice starts 16-byte aligned.
struct SplitWorkspace {
    float* data;
    int splits;
    int rows;  // m of the call
    int ld;    // n rounded up to a multiple of 4
};

inline int workspace_ld(int n) { return (n + 3) / 4 * 4; }

// How many threads share one output vector (4 columns of one row) in reduce_splits: a power of two up to 32, so
// that each thread loads at most about kLoadsPerThread slices and the grid has enough threads to keep the loads in
// flight. One thread per vector walking every slice in turn made the reduction a chain of dependent round trips:
// for m = 1 (1024 vectors, 4 blocks) with 32 slices it took 8 us beside the GEMV's 28, and 23 us beside split-K's
// 44 at 96x96x40000 with 133 slices (ncu on an H100, docs/results/h200-2026-12-07c). A function of the shape and the SM
// count only, so the order of the additions, and the bits of C, are the same on every run on one GPU.
constexpr int kLoadsPerThread = 4;

inline int reduce_group_size(int splits, int64_t vectors, int sm_count) {
    int group = 1;
    const int64_t enough_threads = int64_t{sm_count} * 1024;
    while (group < 32 &&
           (int64_t{group} * kLoadsPerThread < splits || (vectors * group < enough_threads && group * 2 <= splits)))
        group *= 2;
    return group;
}

// The sum of the splits for four consecutive columns (c .. c + 3) of row r; then C = alpha * sum + beta * C
// through the lab's epilogue (edges, alignment and beta == 0 handled there). `group` threads (a power of two
// dividing 32, and so inside one warp) share a vector: thread j adds slices j, j + group, j + 2 group, ... in that
// order, and the group's sums meet in a fixed butterfly of __shfl_xor_sync (float addition is commutative, so both
// lanes of a pair hold the same bits). The order of the additions depends only on splits and group: the same input
// gives the same C on every run. Grid-stride over vectors, so any m x n fits the grid. (A template only so that
// several headers' users in one .so share one definition.)
template <int kThreads>
__global__ void __launch_bounds__(kThreads) reduce_splits(Fp32Gemm p, SplitWorkspace w, int group) {
    const int vectors_per_row = w.ld / 4;
    const int64_t total = int64_t{w.rows} * vectors_per_row;
    const size_t slice = static_cast<size_t>(w.rows) * w.ld;
    const int member = static_cast<int>(threadIdx.x) & (group - 1);
    const int lane = static_cast<int>(threadIdx.x) % 32;
    // The group's lanes: a group never spans two warps, and its members share every loop trip below.
    const unsigned mask = group == 32 ? 0xffffffffu : ((1u << group) - 1u) << (lane & ~(group - 1));
    const int64_t groups_in_grid = int64_t{gridDim.x} * blockDim.x / group;
    for (int64_t i = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / group; i < total; i += groups_in_grid) {
        const int row = static_cast<int>(i / vectors_per_row), col = static_cast<int>(i % vectors_per_row) * 4;
        const float* src = w.data + static_cast<size_t>(row) * w.ld + col;
        auto at = [&](int s) { return __ldg(reinterpret_cast<const float4*>(src + s * slice)); };
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        auto add = [&sum](const float4& v) {
            sum.x += v.x;
            sum.y += v.y;
            sum.z += v.z;
            sum.w += v.w;
        };
        int s = member;
        // Four loads in flight, then added in slice order.
        for (; s + 3 * group < w.splits; s += 4 * group) {
            const float4 v0 = at(s), v1 = at(s + group), v2 = at(s + 2 * group), v3 = at(s + 3 * group);
            add(v0);
            add(v1);
            add(v2);
            add(v3);
        }
        for (; s < w.splits; s += group) add(at(s));
        for (int offset = group / 2; offset > 0; offset /= 2) {
            sum.x += __shfl_xor_sync(mask, sum.x, offset);
            sum.y += __shfl_xor_sync(mask, sum.y, offset);
            sum.z += __shfl_xor_sync(mask, sum.z, offset);
            sum.w += __shfl_xor_sync(mask, sum.w, offset);
        }
        if (member == 0) store_output4(p, row, col, sum);
    }
}

// Launches reduce_splits on `stream`: enough blocks for every SM several times over, no more (the loop covers the
// rest).
inline void launch_reduce_splits(const Fp32Gemm& p, const SplitWorkspace& w, int sm_count, cudaStream_t stream) {
    const int64_t vectors = int64_t{w.rows} * (w.ld / 4);
    const int group = reduce_group_size(w.splits, vectors, sm_count);
    const int64_t threads = vectors * group;
    const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>((threads + 255) / 256, int64_t{sm_count} * 16));
    reduce_splits<256><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p, w, group);
    KREG_CUDA_CHECK_LAUNCH();
}

// The workspace of one kernel instance: a device buffer grown on demand, never shrunk, freed with the instance.
// Not copyable: it owns the buffer.
//
// Reuse across calls is safe without events (which the grading audit refuses a kernel): every call of an instance
// comes from one thread, one at a time (kreg/abi.h), so two calls on the same stream are ordered by that stream;
// a call on a different stream than the last first waits for the device, so the earlier call's reduction has
// read the buffer before this call's splits overwrite it. Growing waits for the device too (cudaFree), so no
// earlier call still reads the old buffer; both happen in a warm-up, not in a timed steady state.
class Workspace {
public:
    Workspace() = default;
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;
    ~Workspace() {
        if (buffer_ != nullptr) cudaFree(buffer_);
    }

    // A buffer of at least `bytes` on the current device, safe to overwrite from `stream`.
    float* get(size_t bytes, cudaStream_t stream) {
        int device = 0;
        KREG_CUDA_CHECK(cudaGetDevice(&device));
        if (stream != last_stream_ && last_stream_known_) KREG_CUDA_CHECK(cudaDeviceSynchronize());
        last_stream_ = stream;
        last_stream_known_ = true;
        if (buffer_ != nullptr && bytes_ >= bytes && device_ == device) return buffer_;
        // Grow by half again at least, so a sweep of rising shapes does not reallocate at every shape.
        const size_t want = std::max(bytes, bytes_ + bytes_ / 2);
        if (buffer_ != nullptr) {
            KREG_CUDA_CHECK(cudaFree(buffer_));
            buffer_ = nullptr;
            bytes_ = 0;
        }
        KREG_CUDA_CHECK(cudaMalloc(&buffer_, want));
        bytes_ = want;
        device_ = device;
        return buffer_;
    }

private:
    float* buffer_ = nullptr;
    size_t bytes_ = 0;
    int device_ = -1;
    cudaStream_t last_stream_ = nullptr;
    bool last_stream_known_ = false;
};

// The current device's SM count, read once per device.
class SmCount {
public:
    int get() {
        int device = 0;
        KREG_CUDA_CHECK(cudaGetDevice(&device));
        if (device != device_) {
            KREG_CUDA_CHECK(cudaDeviceGetAttribute(&count_, cudaDevAttrMultiProcessorCount, device));
            device_ = device;
        }
        return count_;
    }

private:
    int count_ = 0;
    int device_ = -1;
};

// The H200's SM count, which the traffic models (called without a device) assume.
constexpr int kModelSmCount = 132;

}  // namespace kreg_cuda
