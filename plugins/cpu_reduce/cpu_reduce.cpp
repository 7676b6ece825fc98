// cpu_reduce_sum: the CPU reference of the reduction (ABI 1.3, through the generic entry: a kreg_call with
// sizes[0] = n, a = x, c = out): out[0] = x[0] + ... + x[n-1] in fp32.
//
// Pairwise: halves until a run of at most 64 elements is left, summed left to right, then the halves' sums
// added. Each element passes through at most 64 + ceil(log2(n / 64)) fp32 additions, inside the bound the
// runner checks against (docs/TOLERANCES.md, "Reduction"), where a plain left-to-right loop (n additions
// for x[0]) is outside it from n ~ 70,000 on. The 64-element runs keep the recursion's cost small.
#include <kreg/kernel.hpp>

#include <cstdint>
#include <string>

namespace {

constexpr int64_t kRun = 64;

float pairwise_sum(const float* x, int64_t n) {
    if (n <= kRun) {
        float s = 0.0f;
        for (int64_t i = 0; i < n; ++i) s += x[i];
        return s;
    }
    const int64_t half = n / 2;
    return pairwise_sum(x, half) + pairwise_sum(x + half, n - half);
}

// x read once, one float written (the first size is the call's sizes[0], n).
double reduction_model_bytes(int64_t n, int64_t /*unused*/, int64_t /*unused*/, kreg_dtype /*dtype*/) {
    return 4.0 * double(n) + 4.0;
}

class CpuReduceSum final : public kreg::IOperationKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "cpu_reduce_sum";
        s.description = "pairwise fp32 sum (runs of 64 left to right); the reduction's CPU reference";
        s.operation = KREG_OPERATION_REDUCTION;
        s.backend = KREG_BACKEND_CPU;
        s.model_global_bytes = &reduction_model_bytes;
        return s;
    }

    void run(const kreg_call& call) override {
        if (call.struct_size < sizeof(kreg_call))
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_call is smaller than this plugin expects");
        if (call.operation != KREG_OPERATION_REDUCTION)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "not a reduction call");
        if (call.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
        const int64_t n = call.sizes[0];
        if (n < 1) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "n must be >= 1, got " + std::to_string(n));
        if (call.a == nullptr || call.c == nullptr) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null pointer");
        *static_cast<float*>(call.c) = pairwise_sum(static_cast<const float*>(call.a), n);
    }
};

}  // namespace

KREG_PLUGIN("cpu_reduce", "1.0.0", CpuReduceSum)
