// cuda_r6_grid_stride — reduction step 6: several elements per thread, a grid-stride loop, two launches.
//
// Steps 2-5 launch one block per 256 or 512 elements and then reduce the partials again and again: at
// n = 2^26 that is 131,072 blocks, each spending most of its life on the block sum and the barrier. Here
// the grid is what the GPU holds at once (occupancy x SMs, about a thousand blocks on an H200), and each
// thread walks x with a stride of the whole grid, adding as it goes (kreg_reduction::grid_stride_sum):
// float4 loads, four of them issued before the first is added, so 64 bytes per thread are in flight to hide
// DRAM latency. The block sum (warp shuffles, step 5) then runs once per thousand elements instead of once
// per 512, and the partials are few enough for one block of 1024 threads to finish them in a second launch.
#include "../cuda_common/reduction_common.cuh"

namespace {

using kreg_reduction::Fp32Pass;
using kreg_reduction::Fp32Sum;

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr int kFinishThreads = 1024;

template <bool Vector>
__global__ void __launch_bounds__(kThreads) grid_stride(Fp32Pass p) {
    float v = kreg_reduction::grid_stride_sum<kThreads, kUnroll, Vector>(p.in, p.count);
    v = kreg_reduction::block_sum<kThreads>(v);
    if (threadIdx.x == 0) p.out[blockIdx.x] = v;
}

class GridStride final : public kreg_reduction::ReductionKernel<GridStride> {
public:
    static kreg::KernelSpec spec() {
        return kreg_reduction::cuda_spec("cuda_r6_grid_stride",
                                         "step 6: resident grid, grid-stride float4 loads x4 per thread, two launches");
    }
    kreg_reduction::PassLaunch plan(const Fp32Sum& p) {
        void (*kernel)(Fp32Pass) = kreg_reduction::aligned16(p.x) ? &grid_stride<true> : &grid_stride<false>;
        if (resident_ == 0) resident_ = kreg_reduction::resident_blocks(&grid_stride<true>, kThreads);
        return {kernel, dim3(kreg_reduction::grid_stride_blocks(resident_, kThreads, kUnroll, p.n)), dim3(kThreads), 0};
    }
    void sum(const Fp32Sum& p, cudaStream_t stream) {
        const kreg_reduction::PassLaunch launch = plan(p);
        const unsigned blocks = launch.grid.x;
        float* partials = static_cast<float*>(scratch_.reserve(blocks * sizeof(float), stream));
        launch.kernel<<<launch.grid, launch.block, 0, stream>>>(Fp32Pass{p.x, partials, p.n});
        KREG_CUDA_CHECK_LAUNCH();
        kreg_reduction::single_block_sum<kFinishThreads>
            <<<1, kFinishThreads, 0, stream>>>(Fp32Pass{partials, p.out, int64_t(blocks)});
        KREG_CUDA_CHECK_LAUNCH();
    }

private:
    int64_t resident_ = 0;  // blocks resident at once on this instance's device
    kreg_reduction::Scratch scratch_;
};

}  // namespace

KREG_PLUGIN("cuda_r6_grid_stride", "1.0.0", GridStride)
