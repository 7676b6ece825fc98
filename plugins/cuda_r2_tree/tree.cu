// cuda_r2_tree — reduction step 2: a tree in shared memory, interleaved addressing.
//
// Each block of 256 threads loads 256 elements into shared memory (0 past the end) and halves them in
// log2(256) = 8 rounds: in round s, thread t with t % (2s) == 0 adds element t + s to element t. One partial
// per block goes to global memory, and the same kernel runs again on the partials until one block is left
// (kreg_reduction::run_passes). Each element now passes through log2(n) additions instead of n, and no two
// blocks touch the same address.
//
// What it costs: the `%` test makes every warp divergent from the first round on (in round 1 half of each
// warp's threads idle, in round 5 one thread in 32 works, yet the whole warp issues), and `%` itself is slow.
// Step 3 removes both.
#include "../cuda_common/reduction_common.cuh"

namespace {

using kreg_reduction::Fp32Pass;
using kreg_reduction::Fp32Sum;

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) tree_interleaved(Fp32Pass p) {
    __shared__ float partial[kThreads];
    const int t = threadIdx.x;
    const int64_t i = int64_t(blockIdx.x) * kThreads + t;
    partial[t] = i < p.count ? p.in[i] : 0.0f;
    __syncthreads();
    for (int s = 1; s < kThreads; s *= 2) {
        if (t % (2 * s) == 0) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0) p.out[blockIdx.x] = partial[0];
}

class Tree final : public kreg_reduction::ReductionKernel<Tree> {
public:
    static kreg::KernelSpec spec() {
        return kreg_reduction::cuda_spec("cuda_r2_tree",
                                         "step 2: shared-memory tree per block, interleaved (divergent) addressing");
    }
    kreg_reduction::PassLaunch plan(const Fp32Sum& p) const {
        return kreg_reduction::first_pass(&tree_interleaved, kThreads, kThreads, p.n, 0);
    }
    void sum(const Fp32Sum& p, cudaStream_t stream) {
        kreg_reduction::run_passes(&tree_interleaved, kThreads, kThreads, 0, p.x, p.n, p.out, scratch_, stream);
    }

private:
    kreg_reduction::Scratch scratch_;
};

}  // namespace

KREG_PLUGIN("cuda_r2_tree", "1.0.0", Tree)
