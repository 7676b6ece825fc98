// student_reduction: your starting point for the CUDA reduction lab (grading/reduction.json). A correct,
// slow sum of n floats; make it reach copy speed and keep it correct.
//
// out[0] = x[0] + ... + x[n-1], fp32 in and out, device pointers, any n >= 1, through ABI 1.3's generic entry:
// a kreg_call (<kreg/abi.h>, REDUCTION) with call.sizes[0] = n, call.a = x, call.c = out. The runner checks the result
// against the exact sum within gamma_D(n) * sum |x_i|, where D(n) = 256 + ceil(n / 65536) is how many fp32 additions
// any element may pass through on its way to the result (docs/TOLERANCES.md, "Reduction"). This kernel gives every
// element to one atomicAdd on out[0]: n additions in one chain, one address for the whole GPU to queue on. Both are
// what the lab's steps fix.
//
// The lab's steps (plugins/cuda_r1_atomic .. cuda_r7_one_pass in the kreg sources, docs/REDUCTION.md;
// reduction.json scores you against cuda_r3_sequential, cub::DeviceReduce::Sum and 90 % of the copy
// bandwidth the grader measures):
//   1. A tree per block in shared memory: load 256 elements (0 past the end), halve them in 8 rounds with
//      __syncthreads() between, write one partial per block, and run the kernel again on the partials until
//      one block is left.
//   2. Sequential addressing: in each round the first s threads add element t + s (no divergent warps, no
//      bank conflicts), instead of every (2s)-th thread.
//   3. The first addition during the load: each thread loads two elements and stores their sum.
//   4. Warp shuffles: __shfl_down_sync within a warp, one shared-memory slot per warp, one barrier.
//   5. Several elements per thread: a grid of the blocks the GPU holds at once, a grid-stride loop with
//      float4 loads (x is 16-byte aligned), several loads in flight before the first add.
//   6. One pass: the last block to finish (a __threadfence() and an atomic ticket) sums the partials.
// Every step adds edges: check n = 1, 2, 255, 257, 1000003 after each change. Scratch memory (the partials)
// belongs to your instance: allocate it with cudaMallocAsync on the call's stream and keep it for later calls.
#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) atomic_sum(const float* x, int64_t n, float* out) {
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i < n) atomicAdd(out, x[i]);
}

void check_arguments(const kreg_call& call) {
    if (call.struct_size < sizeof(kreg_call))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_call is smaller than this plugin expects");
    if (call.operation != KREG_OPERATION_REDUCTION)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "not a reduction call");
    if (call.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
    if (call.sizes[0] < 1 || call.sizes[0] > (int64_t(1) << 38))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "n must be in 1..2^38, got " + std::to_string(call.sizes[0]));
    if (call.a == nullptr || call.c == nullptr) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null pointer");
}

dim3 grid_of(const kreg_call& call) { return dim3(unsigned((call.sizes[0] + kThreads - 1) / kThreads)); }

// A reduction reads every element once and writes one: 4 n + 4 bytes is the minimum, and what the roofline
// (the device-to-device copy bandwidth) is measured against. The first size is the call's sizes[0], n.
double student_model_bytes(int64_t n, int64_t /*unused*/, int64_t /*unused*/, kreg_dtype /*dtype*/) {
    return 4.0 * double(n) + 4.0;
}

class StudentReduction final : public kreg::IOperationKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "student_reduction";  // what reduction.json grades
        s.description = "atomics: one atomicAdd per element onto out[0]";
        s.operation = KREG_OPERATION_REDUCTION;  // through the generic entry, run(const kreg_call&)
        s.backend = KREG_BACKEND_CUDA;
        s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
        s.model_global_bytes = &student_model_bytes;
        return s;
    }

    void run(const kreg_call& call) override {
        check_arguments(call);
        const cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
        // The runner poisons out[0] (a NaN) before every call: start from 0, in stream order.
        KREG_CUDA_CHECK(cudaMemsetAsync(call.c, 0, sizeof(float), stream));
        atomic_sum<<<grid_of(call), kThreads, 0, stream>>>(static_cast<const float*>(call.a), call.sizes[0],
                                                           static_cast<float*>(call.c));
        KREG_CUDA_CHECK_LAUNCH();
    }

    bool describe_launch(const kreg_call& call, kreg_launch_info& info) override {
        check_arguments(call);
        const dim3 grid = grid_of(call);
        info.device_function = reinterpret_cast<const void*>(&atomic_sum);
        info.grid[0] = grid.x;
        info.grid[1] = info.grid[2] = 1;
        info.block[0] = kThreads;
        info.block[1] = info.block[2] = 1;
        info.dynamic_shared_bytes = 0;
        return true;
    }
};

}  // namespace

KREG_PLUGIN("my_reduction", "0.1.0", StudentReduction)
