// cub_reduce_sum — the reduction lab's trusted reference: cub::DeviceReduce::Sum (CCCL, shipped with the CUDA
// toolkit), on the call's stream, with its temporary storage kept between calls.
//
// CUB picks its own tuning per architecture (a grid of a few waves, vectorised loads, several items per
// thread, a block reduction and a second single-block pass); the lab's steps are measured next to it in the
// same run (sweeps/reduction-h200.json) and the rubric's reference tier is against it
// (grading/reduction.json). Its accumulator is fp32 for fp32 inputs, like every step's.
#include "../cuda_common/reduction_common.cuh"

#include <cub/device/device_reduce.cuh>

namespace {

using kreg_reduction::Fp32Sum;

class CubReduceSum final : public kreg::IOperationKernel {
public:
    static kreg::KernelSpec spec() {
        return kreg_reduction::cuda_spec("cub_reduce_sum",
                                         "REFERENCE: cub::DeviceReduce::Sum, fp32 in and fp32 accumulation");
    }

    void run(const kreg_call& call) override {
        const Fp32Sum p = kreg_reduction::fp32_sum(call);
        const cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
        size_t bytes = 0;
        KREG_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, p.x, p.out, p.n, stream));
        void* temporary = scratch_.reserve(std::max<size_t>(bytes, 1), stream);
        KREG_CUDA_CHECK(cub::DeviceReduce::Sum(temporary, bytes, p.x, p.out, p.n, stream));
    }
    // No launch description: CUB decides its kernels and grids inside Sum, and does not say.

private:
    kreg_reduction::Scratch scratch_;
};

}  // namespace

KREG_PLUGIN("cub_reduce", "1.0.0", CubReduceSum)
