// cuda_r5_warp_shuffle — reduction step 5: warp shuffles instead of the shared-memory tree.
//
// Step 4's load (two elements per thread, first addition on the way in), then the block's sum without the
// eight barrier-separated shared-memory rounds: within a warp, __shfl_down_sync passes registers between
// lanes (five rounds, no shared memory, no barrier); each warp's sum goes to shared memory once, and the
// first warp sums those eight values with five more shuffles (kreg_reduction::block_sum). One
// __syncthreads per block instead of eight, and 32 bytes of shared memory instead of 1 KB.
#include "../cuda_common/reduction_common.cuh"

namespace {

using kreg_reduction::Fp32Pass;
using kreg_reduction::Fp32Sum;

constexpr int kThreads = 256;
constexpr int64_t kPerBlock = 2 * kThreads;

__global__ void __launch_bounds__(kThreads) warp_shuffle(Fp32Pass p) {
    const int64_t i = int64_t(blockIdx.x) * kPerBlock + threadIdx.x;
    float v = i < p.count ? p.in[i] : 0.0f;
    if (i + kThreads < p.count) v += p.in[i + kThreads];
    v = kreg_reduction::block_sum<kThreads>(v);
    if (threadIdx.x == 0) p.out[blockIdx.x] = v;
}

class WarpShuffle final : public kreg_reduction::ReductionKernel<WarpShuffle> {
public:
    static kreg::KernelSpec spec() {
        return kreg_reduction::cuda_spec("cuda_r5_warp_shuffle",
                                         "step 5: step 4's load, block sum by warp shuffles (one barrier)");
    }
    kreg_reduction::PassLaunch plan(const Fp32Sum& p) const {
        return kreg_reduction::first_pass(&warp_shuffle, kThreads, kPerBlock, p.n, 0);
    }
    void sum(const Fp32Sum& p, cudaStream_t stream) {
        kreg_reduction::run_passes(&warp_shuffle, kThreads, kPerBlock, 0, p.x, p.n, p.out, scratch_, stream);
    }

private:
    kreg_reduction::Scratch scratch_;
};

}  // namespace

KREG_PLUGIN("cuda_r5_warp_shuffle", "1.0.0", WarpShuffle)
