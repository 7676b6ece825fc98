// cuda_r4_first_add — reduction step 4: the first addition during the load.
//
// Step 3 with each block covering 2 * 256 elements: thread t loads element t and element t + 256 of its
// block's range and stores their sum, so the tree starts from 256 values that already hold 512 elements.
// Half as many blocks, half as many partials, and no thread idles through the load; the tree is step 3's.
// Both loads are coalesced (a warp reads two runs of 32 consecutive floats).
#include "../cuda_common/reduction_common.cuh"

namespace {

using kreg_reduction::Fp32Pass;
using kreg_reduction::Fp32Sum;

constexpr int kThreads = 256;
constexpr int64_t kPerBlock = 2 * kThreads;

__global__ void __launch_bounds__(kThreads) first_add(Fp32Pass p) {
    __shared__ float partial[kThreads];
    const int t = threadIdx.x;
    const int64_t i = int64_t(blockIdx.x) * kPerBlock + t;
    float v = i < p.count ? p.in[i] : 0.0f;
    if (i + kThreads < p.count) v += p.in[i + kThreads];
    partial[t] = v;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0) p.out[blockIdx.x] = partial[0];
}

class FirstAdd final : public kreg_reduction::ReductionKernel<FirstAdd> {
public:
    static kreg::KernelSpec spec() {
        return kreg_reduction::cuda_spec("cuda_r4_first_add",
                                         "step 4: two elements per thread, the first addition during the load");
    }
    kreg_reduction::PassLaunch plan(const Fp32Sum& p) const {
        return kreg_reduction::first_pass(&first_add, kThreads, kPerBlock, p.n, 0);
    }
    void sum(const Fp32Sum& p, cudaStream_t stream) {
        kreg_reduction::run_passes(&first_add, kThreads, kPerBlock, 0, p.x, p.n, p.out, scratch_, stream);
    }

private:
    kreg_reduction::Scratch scratch_;
};

}  // namespace

KREG_PLUGIN("cuda_r4_first_add", "1.0.0", FirstAdd)
