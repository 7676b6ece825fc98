// student_reduction: a starting point for the reduction on the CPU. Correct and simple; make it faster and
// keep it correct.
//
// out[0] = x[0] + ... + x[n-1], fp32, through ABI 1.3's generic entry: a kreg_call (see <kreg/abi.h>, REDUCTION)
// with call.sizes[0] = n, call.a = x and call.c = out. Checked against the
// exact sum within gamma_D(n) * sum |x_i|, D(n) = 256 + ceil(n / 65536): the fp32 additions any element may
// pass through (docs/TOLERANCES.md, "Reduction"). This loop puts x[0] through n - 1 of them: outside that
// bound from n = 258 on, and inside the tolerance on the harness's inputs only because round-to-nearest
// errors of random sign cancel. The classic next steps: several accumulators (the loop's one chain of
// dependent additions runs at one add per 4 cycles or so; eight chains fill the vector unit), then a
// pairwise sum of blocks (depth log2 n, inside the bound for every n).
#include <kreg/kernel.hpp>

#include <cstdint>
#include <string>

namespace {

void check_arguments(const kreg_call& call) {
    if (call.struct_size < sizeof(kreg_call))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_call is smaller than this plugin expects");
    if (call.operation != KREG_OPERATION_REDUCTION)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "not a reduction call");
    if (call.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
    if (call.sizes[0] < 1)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "n must be >= 1, got " + std::to_string(call.sizes[0]));
    if (call.a == nullptr || call.c == nullptr) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null pointer");
}

class StudentReduction final : public kreg::IOperationKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "student_reduction";  // unique across every loaded plugin
        s.description = "left to right, one fp32 accumulator";
        s.operation = KREG_OPERATION_REDUCTION;  // through the generic entry, run(const kreg_call&)
        s.backend = KREG_BACKEND_CPU;
        return s;
    }

    void run(const kreg_call& call) override {
        check_arguments(call);
        const auto* x = static_cast<const float*>(call.a);
        const int64_t n = call.sizes[0];
        float sum = 0.0f;
        for (int64_t i = 0; i < n; ++i) sum += x[i];
        *static_cast<float*>(call.c) = sum;
    }
};

}  // namespace

KREG_PLUGIN("my_reduction", "0.1.0", StudentReduction)
