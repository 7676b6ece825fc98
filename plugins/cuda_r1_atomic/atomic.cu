// cuda_r1_atomic — reduction step 1: every thread adds its element to the result with one atomicAdd.
//
// The shortest correct parallel sum, and the slowest: all n additions land on one address, so the L2 slice
// that owns out[0] performs them one after another (the hardware may combine a warp's same-address atomics,
// but the chain across warps stays serial). It is also the least accurate step: the result is one sequential
// chain of n fp32 additions in an order no one chooses, the one order outside the bound the runner checks
// against for large n (docs/TOLERANCES.md, "Reduction"); on the harness's inputs its error stays far below
// the tolerance because round-to-nearest errors of random sign mostly cancel, not because any bound says so.
//
// out[0] is set to 0 first (cudaMemsetAsync on the call's stream: the runner poisons it before every call).
#include "../cuda_common/reduction_common.cuh"

namespace {

using kreg_reduction::Fp32Pass;
using kreg_reduction::Fp32Sum;

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) atomic_sum(Fp32Pass p) {
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i < p.count) atomicAdd(p.out, p.in[i]);
}

class Atomic final : public kreg_reduction::ReductionKernel<Atomic> {
public:
    static kreg::KernelSpec spec() {
        return kreg_reduction::cuda_spec("cuda_r1_atomic", "step 1: one atomicAdd per element onto out[0]");
    }
    kreg_reduction::PassLaunch plan(const Fp32Sum& p) const {
        return kreg_reduction::first_pass(&atomic_sum, kThreads, kThreads, p.n, 0);
    }
    void sum(const Fp32Sum& p, cudaStream_t stream) {
        KREG_CUDA_CHECK(cudaMemsetAsync(p.out, 0, sizeof(float), stream));
        const kreg_reduction::PassLaunch launch = plan(p);
        atomic_sum<<<launch.grid, launch.block, 0, stream>>>(Fp32Pass{p.x, p.out, p.n});
        KREG_CUDA_CHECK_LAUNCH();
    }
};

}  // namespace

KREG_PLUGIN("cuda_r1_atomic", "1.0.0", Atomic)
