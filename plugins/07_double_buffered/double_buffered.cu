// Step 7 — big register tiles and a shared-memory ping-pong: 128x128 block tile, 256 threads, 8x8 outputs
// per thread, two shared buffers.
//
// Global: a 128x128 tile re-reads A N/128 and B M/128 times, 32 FLOP/B by the model. On chip: per k step a
// thread reads 8 A and 8 B values as four 16-byte loads for 64 FMAs (step 6: 8 scalar loads for 16 FMAs).
// A is stored transposed, as[k][m], so a thread's 4 consecutive rows are one float4; the row stride is
// BM + 4 so the transposing stores of a warp hit 32 different banks. Each thread's 8x8 outputs are two
// 4x4 blocks 64 apart on each axis: a warp's B float4 reads then cover 64 contiguous floats (no conflict).
//
// The ping-pong: while the block computes on one buffer, each thread has already issued the global loads
// of the next tile into registers and stores them to the other buffer afterwards, so memory latency hides
// behind the 512 FMAs of a tile and a single __syncthreads per tile suffices. C is written with float4.
#include "../cuda_common/gemm_common.cuh"

namespace {

using kreg_cuda::Fp32Gemm;

constexpr int kBM = 128, kBN = 128, kBK = 8;
constexpr int kThreadsM = 16, kThreadsN = 16;  // each thread: rows ty*4 + {0..3} (+64), cols tx*4 + {0..3} (+64)
constexpr int kThreads = kThreadsM * kThreadsN;
constexpr int kLdA = kBM + 4;  // padded row of the transposed A tile
static_assert(kBM * kBK / 4 == kThreads && kBK * kBN / 4 == kThreads, "one float4 of each tile per thread");

__global__ void __launch_bounds__(kThreads, 2) double_buffered_gemm(Fp32Gemm p) {
    __shared__ __align__(16) float as[2][kBK][kLdA];
    __shared__ __align__(16) float bs[2][kBK][kBN];
    const int tid = threadIdx.x;
    const int ty = tid / kThreadsN, tx = tid % kThreadsN;
    const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    // This thread's float4 of each tile: A rows a_r, k a_c..a_c+3; B row b_r, columns b_c..b_c+3.
    const int a_r = tid / (kBK / 4), a_c = (tid % (kBK / 4)) * 4;
    const int b_r = tid / (kBN / 4), b_c = (tid % (kBN / 4)) * 4;

    auto load_tiles = [&](int k0, float4& a_regs, float4& b_regs) {
        a_regs = kreg_cuda::load4_or_zero(p.a, p.lda, row0 + a_r, k0 + a_c, p.m, p.k);
        b_regs = kreg_cuda::load4_or_zero(p.b, p.ldb, k0 + b_r, col0 + b_c, p.k, p.n);
    };
    auto store_tiles = [&](int buf, const float4& a_regs, const float4& b_regs) {
        as[buf][a_c + 0][a_r] = a_regs.x;
        as[buf][a_c + 1][a_r] = a_regs.y;
        as[buf][a_c + 2][a_r] = a_regs.z;
        as[buf][a_c + 3][a_r] = a_regs.w;
        *reinterpret_cast<float4*>(&bs[buf][b_r][b_c]) = b_regs;
    };

    float acc[8][8] = {};
    float4 a_next, b_next;
    load_tiles(0, a_next, b_next);
    store_tiles(0, a_next, b_next);
    __syncthreads();

    const int k_tiles = (p.k + kBK - 1) / kBK;
    for (int t = 0; t < k_tiles; ++t) {
        const int buf = t & 1;
        const bool has_next = t + 1 < k_tiles;
        if (has_next) load_tiles((t + 1) * kBK, a_next, b_next);  // in flight during the FMAs below
#pragma unroll
        for (int kk = 0; kk < kBK; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(&as[buf][kk][ty * 4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&as[buf][kk][ty * 4 + kBM / 2]);
            const float4 b0 = *reinterpret_cast<const float4*>(&bs[buf][kk][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&bs[buf][kk][tx * 4 + kBN / 2]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        // The other buffer was last read in iteration t - 1, which every thread finished before the
        // barrier that ended it; one barrier per tile then publishes the new tile.
        if (has_next) store_tiles(buf ^ 1, a_next, b_next);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + ty * 4 + (i & 3) + (i >> 2) * (kBM / 2);
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            const int col = col0 + tx * 4 + s * (kBN / 2);
            kreg_cuda::store_output4(
                p, row, col, make_float4(acc[i][4 * s], acc[i][4 * s + 1], acc[i][4 * s + 2], acc[i][4 * s + 3]));
        }
    }
}

class DoubleBuffered final : public kreg_cuda::SimtKernel<DoubleBuffered> {
public:
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec("cuda_07_double_buffered",
                                    "128x128 block tile, 8x8 per thread, register-staged shared ping-pong, float4 C",
                                    70, &kreg_cuda::block_tile_bytes<kBM, kBN>);
    }
    kreg_cuda::LaunchPlan plan(const Fp32Gemm& p) const {
        return {&double_buffered_gemm, kreg_cuda::tile_grid(p, kBM, kBN), dim3(kThreads), 0};
    }
};

}  // namespace

KREG_PLUGIN("cuda_07_double_buffered", "1.0.0", DoubleBuffered)
