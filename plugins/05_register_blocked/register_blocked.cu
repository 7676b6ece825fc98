// Step 5 — register blocking: a 64x64 block tile, 256 threads, each thread a 4x4 block of outputs kept in
// registers (16 accumulators).
//
// Two gains. Global: a 64x64 tile re-reads A N/64 and B M/64 times, 16 FLOP/B by the model (step 4: 8).
// On chip: per k step a thread loads 4 A and 4 B values from shared memory for 16 FMAs, 0.5 loads per FMA
// (step 4: 1), so the FMA units, not the load path, start to set the pace. Outputs sit at
// (tr + 16i, tc + 16j): a warp covers two thread rows whose A reads are 16 words apart (different banks)
// and 16 consecutive B columns (conflict-free), and its stores are 64-byte row segments.
#include "../cuda_common/gemm_common.cuh"

namespace {

using kreg_cuda::Fp32Gemm;

constexpr int kBM = 64, kBN = 64, kBK = 16;
constexpr int kT = 4;                                      // outputs per thread along each axis
constexpr int kThreadsM = kBM / kT, kThreadsN = kBN / kT;  // 16 x 16
constexpr int kThreads = kThreadsM * kThreadsN;

__global__ void __launch_bounds__(kThreads) register_blocked_gemm(Fp32Gemm p) {
    __shared__ float as[kBM][kBK];
    __shared__ float bs[kBK][kBN];
    const int tid = threadIdx.x;
    const int tr = tid / kThreadsN, tc = tid % kThreadsN;
    const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    float acc[kT][kT] = {};
    for (int k0 = 0; k0 < p.k; k0 += kBK) {
#pragma unroll
        for (int l = 0; l < kBM * kBK / kThreads; ++l) {
            const int e = tid + l * kThreads;
            const int r = e / kBK, c = e % kBK;
            as[r][c] = kreg_cuda::load_or_zero(p.a, p.lda, row0 + r, k0 + c, p.m, p.k);
        }
#pragma unroll
        for (int l = 0; l < kBK * kBN / kThreads; ++l) {
            const int e = tid + l * kThreads;
            const int r = e / kBN, c = e % kBN;
            bs[r][c] = kreg_cuda::load_or_zero(p.b, p.ldb, k0 + r, col0 + c, p.k, p.n);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kBK; ++kk) {
            float a[kT], b[kT];
#pragma unroll
            for (int i = 0; i < kT; ++i) a[i] = as[tr + kThreadsM * i][kk];
#pragma unroll
            for (int j = 0; j < kT; ++j) b[j] = bs[kk][tc + kThreadsN * j];
#pragma unroll
            for (int i = 0; i < kT; ++i)
#pragma unroll
                for (int j = 0; j < kT; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kT; ++i)
#pragma unroll
        for (int j = 0; j < kT; ++j)
            kreg_cuda::store_output(p, row0 + tr + kThreadsM * i, col0 + tc + kThreadsN * j, acc[i][j]);
}

class RegisterBlocked final : public kreg_cuda::SimtKernel<RegisterBlocked> {
public:
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec("cuda_05_register_blocked", "64x64 block tile, 256 threads, 4x4 outputs per thread",
                                    70, &kreg_cuda::block_tile_bytes<kBM, kBN>);
    }
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) const {
        return {&register_blocked_gemm, kreg_cuda::tile_grid(p, kBM, kBN), dim3(kThreads), 0};
    }
};

}  // namespace

KREG_PLUGIN("cuda_05_register_blocked", "1.0.0", RegisterBlocked)
