// cuda_r3_sequential — reduction step 3: sequential addressing, no divergence.
//
// Step 2's tree, with the roles turned around: in each round the lower half of the active threads adds the
// upper half (partial[t] += partial[t + s] for t < s, s = 128, 64, ..., 1). The active threads are now the
// first s of the block, so whole warps are either all busy or all idle until s < 32, and the `%` is gone.
// Consecutive threads read consecutive words, so the shared-memory accesses are free of bank conflicts too
// (a strided index 2*s*t, the other way to remove the divergence, makes them 2-, 4-, ... 32-way conflicts).
//
// What is left: half of the threads do nothing but one load before the first round. Step 4 gives them work.
#include "../cuda_common/reduction_common.cuh"

namespace {

using kreg_reduction::Fp32Pass;
using kreg_reduction::Fp32Sum;

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) tree_sequential(Fp32Pass p) {
    __shared__ float partial[kThreads];
    const int t = threadIdx.x;
    const int64_t i = int64_t(blockIdx.x) * kThreads + t;
    partial[t] = i < p.count ? p.in[i] : 0.0f;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0) p.out[blockIdx.x] = partial[0];
}

class Sequential final : public kreg_reduction::ReductionKernel<Sequential> {
public:
    static kreg::KernelSpec spec() {
        return kreg_reduction::cuda_spec("cuda_r3_sequential",
                                         "step 3: shared-memory tree, sequential addressing (no divergence)");
    }
    kreg_reduction::PassLaunch plan(const Fp32Sum& p) const {
        return kreg_reduction::first_pass(&tree_sequential, kThreads, kThreads, p.n, 0);
    }
    void sum(const Fp32Sum& p, cudaStream_t stream) {
        kreg_reduction::run_passes(&tree_sequential, kThreads, kThreads, 0, p.x, p.n, p.out, scratch_, stream);
    }

private:
    kreg_reduction::Scratch scratch_;
};

}  // namespace

KREG_PLUGIN("cuda_r3_sequential", "1.0.0", Sequential)
