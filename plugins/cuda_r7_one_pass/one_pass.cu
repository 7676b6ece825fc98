// cuda_r7_one_pass — reduction step 7: one launch, the last block to finish sums the partials.
//
// Step 6's grid-stride walk and block sum, and no second launch: each block writes its partial, makes it
// visible to the whole GPU (__threadfence), and takes a ticket from a counter in global memory
// (atomicAdd). The block that draws the last ticket knows every other partial is written, sums them
// (reading through L2 with __ldcg, never a stale L1 line) and writes out[0]; it also sets the counter back
// to 0 for the next call. The counter is zeroed once, in stream order, when its scratch is first allocated.
// Saves the second launch and its gap (a few microseconds: it shows at small and medium n).
#include "../cuda_common/reduction_common.cuh"

namespace {

using kreg_reduction::Fp32Sum;

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

struct OnePass {
    const float* x;
    float* out;
    int64_t n;
    float* partials;     // gridDim.x floats
    unsigned* finished;  // blocks done so far in this launch; 0 between launches
};

// The last block's part: the sum of every block's partial, into out[0].
__device__ void finish(const OnePass& p) {
    float v = 0.0f;
    for (unsigned i = threadIdx.x; i < gridDim.x; i += kThreads) v += __ldcg(p.partials + i);
    v = kreg_reduction::block_sum<kThreads>(v);
    if (threadIdx.x == 0) {
        p.out[0] = v;
        *p.finished = 0;  // ready for the next launch on this stream
    }
}

template <bool Vector>
__global__ void __launch_bounds__(kThreads) one_pass(OnePass p) {
    __shared__ bool last;
    float v = kreg_reduction::grid_stride_sum<kThreads, kUnroll, Vector>(p.x, p.n);
    v = kreg_reduction::block_sum<kThreads>(v);
    if (threadIdx.x == 0) {
        p.partials[blockIdx.x] = v;
        __threadfence();  // the partial is visible to every block before the ticket is taken
        last = atomicAdd(p.finished, 1u) == gridDim.x - 1;
    }
    __syncthreads();  // also separates the two block_sum calls (they share shared memory)
    if (last) finish(p);
}

class OnePassKernel final : public kreg_reduction::ReductionKernel<OnePassKernel> {
public:
    static kreg::KernelSpec spec() {
        return kreg_reduction::cuda_spec("cuda_r7_one_pass",
                                         "step 7: step 6 in one launch, the last block to finish sums the partials");
    }
    kreg_reduction::LaunchOf<OnePass> plan(const Fp32Sum& p) {
        void (*kernel)(OnePass) = kreg_reduction::aligned16(p.x) ? &one_pass<true> : &one_pass<false>;
        if (resident_ == 0) resident_ = kreg_reduction::resident_blocks(&one_pass<true>, kThreads);
        return {kernel, dim3(kreg_reduction::grid_stride_blocks(resident_, kThreads, kUnroll, p.n)), dim3(kThreads), 0};
    }
    void sum(const Fp32Sum& p, cudaStream_t stream) {
        const kreg_reduction::LaunchOf<OnePass> launch = plan(p);
        const unsigned blocks = launch.grid.x;
        // The counter first (256 bytes keep the partials aligned), then one partial per block.
        bool fresh = false;
        char* base = static_cast<char*>(scratch_.reserve(256 + blocks * sizeof(float), stream, &fresh));
        unsigned* finished = reinterpret_cast<unsigned*>(base);
        if (fresh) KREG_CUDA_CHECK(cudaMemsetAsync(finished, 0, sizeof(unsigned), stream));
        const OnePass params{p.x, p.out, p.n, reinterpret_cast<float*>(base + 256), finished};
        launch.kernel<<<launch.grid, launch.block, 0, stream>>>(params);
        KREG_CUDA_CHECK_LAUNCH();
    }

private:
    int64_t resident_ = 0;  // blocks resident at once on this instance's device
    kreg_reduction::Scratch scratch_;
};

}  // namespace

KREG_PLUGIN("cuda_r7_one_pass", "1.0.0", OnePassKernel)
