// cuda_copy — the ceiling the transpose lab is measured against: a device-to-device copy of A's M*N
// floats into B's storage, the same bytes a transpose reads and writes, with none of the reordering.
//
// It is NOT a transpose (its B is A's elements in A's order, B's rows filled one after the other), so the
// runner must not verify it as one; it exists to be timed next to the transposes in the same run, as
// the "100 %" of a transpose's bandwidth. A transpose that reaches this kernel's time moves its bytes at
// copy speed; the gap is what its access pattern costs.
//
// Packed matrices (lda == N, ldb == M, the benchmark case) are one flat copy: 16-byte loads and stores
// where both pointers are 16-byte aligned, four vectors per thread in flight, grid-stride. Padded
// leading dimensions map element e = i * N + j of A to B(e / M, e % M), one element at a time (correct,
// not fast; only the packed case is a ceiling worth quoting).
#include "../cuda_common/transpose_common.cuh"

namespace {

using kreg_transpose::aligned16;
using kreg_transpose::Fp32Transpose;

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // float4 per thread per grid step: 64 bytes in flight per thread

__global__ void __launch_bounds__(kThreads) copy_kernel(Fp32Transpose p) {
    const size_t count = static_cast<size_t>(p.m) * p.n;
    const size_t tid = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x;
    const size_t threads = static_cast<size_t>(gridDim.x) * kThreads;
    if (p.lda == p.n && p.ldb == p.m) {
        size_t done = 0;  // elements covered by the vector loop
        if (aligned16(p.a) && aligned16(p.b)) {
            const float4* src = reinterpret_cast<const float4*>(p.a);
            float4* dst = reinterpret_cast<float4*>(p.b);
            const size_t vectors = count / 4;
            // Full steps: every thread has kUnroll vectors, loaded before any is stored.
            const size_t step = threads * kUnroll;
            size_t base = 0;
            for (; base + step <= vectors; base += step) {
                float4 v[kUnroll];
#pragma unroll
                for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(src + base + tid + u * threads);
#pragma unroll
                for (int u = 0; u < kUnroll; ++u) dst[base + tid + u * threads] = v[u];
            }
            for (size_t i = base + tid; i < vectors; i += threads) dst[i] = __ldg(src + i);
            done = vectors * 4;
        }
        for (size_t i = done + tid; i < count; i += threads) p.b[i] = p.a[i];
        return;
    }
    for (size_t e = tid; e < count; e += threads) {
        const size_t i = e / p.n, j = e % p.n;
        const size_t bi = e / p.m, bj = e % p.m;
        p.b[bi * p.ldb + bj] = p.a[i * p.lda + j];
    }
}

kreg_transpose::TransposeLaunch copy_plan(const Fp32Transpose& p) {
    // Enough blocks for one full step over the whole matrix (16 KB per block), capped: beyond a few waves
    // of the GPU, more blocks only add scheduling.
    const size_t count = static_cast<size_t>(p.m) * p.n;
    const size_t per_block = static_cast<size_t>(kThreads) * kUnroll * 4;
    const size_t blocks = std::min<size_t>((count + per_block - 1) / per_block, size_t{1} << 16);
    return {&copy_kernel, dim3(static_cast<unsigned>(std::max<size_t>(blocks, 1))), dim3(kThreads), 0};
}

class Copy final : public kreg_transpose::TransposeKernel<Copy> {
public:
    static kreg::KernelSpec spec() {
        return kreg_transpose::cuda_spec("cuda_copy",
                                         "CEILING REFERENCE, not a transpose: copies the M*N floats of A into B "
                                         "unchanged, the bytes a transpose moves");
    }
    kreg_transpose::TransposeLaunch plan(const Fp32Transpose& p) const { return copy_plan(p); }
};

}  // namespace

KREG_PLUGIN("cuda_copy", "1.0.0", Copy)
