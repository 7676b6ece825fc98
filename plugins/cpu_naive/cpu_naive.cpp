// cpu_naive: the baseline every other kernel is compared with.
//
// The textbook triple loop: one fp32 dot product per element of C, walking a row of A (unit stride)
// and a column of B (stride ldb, a new cache line per step). No blocking, no threads, no tricks, so it
// is obviously correct for every shape, and its speed shows what the memory hierarchy costs when it is
// ignored. Honours alpha, beta (beta == 0 never reads C, as in BLAS) and leading dimensions.
#include "naive_gemm.hpp"

#include <kreg/kernel.hpp>

namespace {

class CpuNaive final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "cpu_naive";
        s.description = "triple loop, one fp32 dot product per element of C; the baseline";
        s.backend = KREG_BACKEND_CPU;
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        s.model_global_bytes = &kreg::cpu_naive::model_bytes;
        return s;
    }

    void run_gemm(const kreg_gemm_args& args) override { kreg::cpu_naive::run(args); }
};

}  // namespace

KREG_PLUGIN("cpu_naive", "1.0.0", CpuNaive)
