// The lecture's BlockTranspose (Lab 3), as written and fixed, for every BLOCK_SIZE from 1 to 20.
//
// The lecture's kernel transposes each BLOCK_SIZE x BLOCK_SIZE block of A in place, one thread per
// element:
//
//     __shared__ float blockA[BLOCK_SIZE][BLOCK_SIZE];
//     int baseIdx = blockIdx.x * BLOCK_SIZE + threadIdx.x;
//     baseIdx += (blockIdx.y * BLOCK_SIZE + threadIdx.y) * A_width;
//     blockA[threadIdx.y][threadIdx.x] = A_elements[baseIdx];
//     A_elements[baseIdx] = blockA[threadIdx.x][threadIdx.y];
//
// Two things to see in it:
//  1. The read blockA[threadIdx.x][threadIdx.y] walks down a column: lanes with consecutive threadIdx.x
//     read words BLOCK_SIZE apart, and bank = word mod 32, so within one row of threads every
//     32 / gcd(BLOCK_SIZE, 32)-th lane meets the same bank (BLOCK_SIZE 16: 8-way). A warp spans several
//     rows of threads when BLOCK_SIZE < 32, and lanes of different rows collide too (BLOCK_SIZE 11:
//     4-way although gcd = 1); docs/TRANSPOSE.md has the exact per-warp table for 1..20
//     (tools/bank_conflicts.py). `cuda_block_transpose_padded` declares blockA[BLOCK_SIZE][BLOCK_SIZE + 1],
//     the usual fix: it removes the 8-way conflict at 16, but makes 15 (stride 16) 8-way.
//  2. As printed, the kernel has no barrier between the shared store and the shared load, so it is
//     correct only while one warp holds the whole block (BLOCK_SIZE <= 5: 25 threads) and even then only
//     by relying on the warp executing in lockstep, which Volta's independent thread scheduling no longer
//     promises. Both kernels here keep the lecture's indexing and add the __syncthreads() it needs, so
//     every BLOCK_SIZE 1..20 is correct (compute-sanitizer racecheck runs on them).
//
// `block` is a per-call parameter; the kernel is a template on it, and the call picks the instantiation
// from a table of all 20. M and N must be multiples of block; any lda >= N.
#include "../cuda_common/transpose_common.cuh"

#include <array>
#include <utility>

namespace {

using kreg_transpose::Fp32BlockTranspose;

constexpr int kMaxBlock = 20;

// PAD = 0: the lecture's blockA[B][B]; PAD = 1: the padded fix. The y loop only runs more than once when
// M / B exceeds gridDim.y's limit of 65535 block rows.
template <int B, int PAD>
__global__ void __launch_bounds__(B* B) block_transpose(Fp32BlockTranspose p) {
    __shared__ float blockA[B][B + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int by = blockIdx.y; by < p.m / B; by += gridDim.y) {
        const size_t baseIdx = static_cast<size_t>(by * B + ty) * p.lda + blockIdx.x * B + tx;
        blockA[ty][tx] = p.a[baseIdx];
        __syncthreads();  // missing in the lecture's text: every element must be in blockA before any is read
        p.a[baseIdx] = blockA[tx][ty];
        if (by + static_cast<int>(gridDim.y) < p.m / B) __syncthreads();  // before the next block overwrites
    }
}

template <int PAD, int... I>
constexpr std::array<void (*)(Fp32BlockTranspose), sizeof...(I)> kernel_table(std::integer_sequence<int, I...>) {
    return {&block_transpose<I + 1, PAD>...};
}

// The instantiation for block (1..20).
template <int PAD>
kreg_transpose::BlockTransposeLaunch block_plan(const Fp32BlockTranspose& p, int block) {
    static constexpr auto table = kernel_table<PAD>(std::make_integer_sequence<int, kMaxBlock>{});
    const dim3 grid(static_cast<unsigned>(p.n / block),
                    static_cast<unsigned>(std::min(p.m / block, kreg_transpose::kMaxGridY)));
    return {table[block - 1], grid, dim3(block, block), 0};
}

template <int PAD>
class BlockTranspose final : public kreg_transpose::BlockTransposeKernel<BlockTranspose<PAD>> {
public:
    static constexpr int kMaxBlock = ::kMaxBlock;
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s = kreg_transpose::cuda_spec(
            PAD == 0 ? "cuda_block_transpose" : "cuda_block_transpose_padded",
            PAD == 0 ? "the lecture's BlockTranspose, block 1..20: reads blockA[threadIdx.x][threadIdx.y] down a "
                       "column, bank conflicts for most blocks above 5 (8-way at 16)"
                     : "BlockTranspose with blockA[block][block + 1]: column stride block + 1 (conflict-free at 16, "
                       "8-way at 15)");
        s.max_block = kMaxBlock;
        return s;
    }
    kreg_transpose::BlockTransposeLaunch plan(const Fp32BlockTranspose& p, int block) const {
        return block_plan<PAD>(p, block);
    }
};

using Lecture = BlockTranspose<0>;
using Padded = BlockTranspose<1>;

}  // namespace

KREG_PLUGIN("cuda_block_transpose", "1.0.0", Lecture, Padded)
