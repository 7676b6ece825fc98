// Transpose step 3, dynamic — the padded tile in dynamic shared memory, its size chosen at launch.
//
// `extern __shared__ float tile[]` has no compile-time size: the launch passes the bytes (here
// 32 * 33 * 4 = 4,224), and the kernel takes the tile width from blockDim.x and pads each row by one word
// (stride T + 1, the same ≡ 1 (mod 32) rule as the static step 3 when T = 32). The price: the tile width
// and the loop trip counts are run-time values, so the compiler cannot unroll the row loops or fold
// the offsets into immediate addresses (compare the SASS with cuda_t3_padded's). The gain: one binary
// serves any tile the launch picks, and a tile above 48 KiB could opt in with cudaFuncSetAttribute.
#include "../cuda_common/transpose_common.cuh"

namespace {

using kreg_transpose::Fp32Transpose;

constexpr int kTile = 32;  // what the launch picks; the kernel itself reads blockDim.x
// 32 x 4 threads, 8 elements each per tile: twice step 2's loads per thread in flight. The loops below have
// run-time trip counts, so the compiler cannot fully unroll them and issue all loads at once as the static
// step 3 does; fewer threads with more iterations each still measured faster on the H200 (0.82 of the copy bandwidth at
// 8192^2, 0.76 with 32 x 8).
constexpr int kRows = 4;

__global__ void __launch_bounds__(1024) padded_dynamic_transpose(Fp32Transpose p) {
    extern __shared__ float tile[];  // tile[r * ld + c] = A(row0 + r, col0 + c)
    const int t = blockDim.x, rows = blockDim.y, ld = t + 1;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col0 = blockIdx.x * t;
    for (int row0 = blockIdx.y * t; row0 < p.m; row0 += gridDim.y * t) {
        const int col = col0 + tx;
        for (int r = ty; r < t; r += rows)
            if (row0 + r < p.m && col < p.n) tile[r * ld + tx] = p.a[static_cast<size_t>(row0 + r) * p.lda + col];
        __syncthreads();
        const int bcol = row0 + tx;
        for (int c = ty; c < t; c += rows)
            if (col0 + c < p.n && bcol < p.m) p.b[static_cast<size_t>(col0 + c) * p.ldb + bcol] = tile[tx * ld + c];
        if (row0 + gridDim.y * t < p.m) __syncthreads();
    }
}

kreg_transpose::TransposeLaunch padded_dynamic_plan(const Fp32Transpose& p) {
    constexpr unsigned kSmemBytes = kTile * (kTile + 1) * sizeof(float);
    return {&padded_dynamic_transpose, kreg_transpose::tile_grid(p.m, p.n, kTile, kTile), dim3(kTile, kRows),
            kSmemBytes};
}

class PaddedDynamic final : public kreg_transpose::TransposeKernel<PaddedDynamic> {
public:
    static kreg::KernelSpec spec() {
        return kreg_transpose::cuda_spec("cuda_t3_padded_dynamic",
                                         "the padded 32x33 tile in dynamic shared memory, its size given at launch");
    }
    kreg_transpose::TransposeLaunch plan(const Fp32Transpose& p) const { return padded_dynamic_plan(p); }
};

}  // namespace

KREG_PLUGIN("cuda_t3_padded_dynamic", "1.0.0", PaddedDynamic)
