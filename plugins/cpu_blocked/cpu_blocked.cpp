// cpu_blocked: the same GEMM as cpu_naive, arranged for the memory hierarchy (the GotoBLAS layout).
//
// The idea, loop by loop:
//   - Threads own contiguous ranges of rows of C (multiples of kMR), so no two threads write one element.
//   - For each kNC-wide slice of columns and each kKC-deep slice of k, the thread packs B's block into
//     kNR-wide column panels (contiguous in k) and A's kMC-row block into kMR-tall row panels. Packing
//     turns strided reads into unit-stride streams, puts the zero padding of edge tiles in the buffer
//     (so the micro-kernel never branches), and keeps a B panel in L1 and the A block in L2.
//   - The micro-kernel keeps a kMR x kNR tile of C in registers for the whole kKC loop: per step one
//     broadcast of A per row and one vector load of B per column group, no loads or stores of C. It is
//     plain C++ with fixed trip counts, which GCC/Clang unroll and vectorise; on x86-64 it is also
//     compiled for x86-64-v3 (AVX2 + FMA) and picked at load time (target_clones).
//   - C is touched only when a tile is done: the first k-slice writes alpha*acc (+ beta*C, and C is
//     never read when beta == 0, as in BLAS), later slices add alpha*acc. Edge tiles store only their
//     valid rows and columns, so any M, N, K >= 1 and any leading dimensions work.
#include "blocked_gemm.hpp"

#include <kreg/kernel.hpp>

namespace {

class CpuBlocked final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "cpu_blocked";
        s.description = "packed A/B panels, 6x16 register tile, cache blocking, std::thread over row ranges";
        s.backend = KREG_BACKEND_CPU;
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        s.model_global_bytes = &kreg::cpu_blocked::model_bytes;
        return s;
    }

    void run_gemm(const kreg_gemm_args& args) override { kreg::cpu_blocked::run(args); }
};

}  // namespace

KREG_PLUGIN("cpu_blocked", "1.0.0", CpuBlocked)
