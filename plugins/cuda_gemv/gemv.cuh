// GEMV-like paths for M = 1 or N = 1 (and a few rows), where a GEMM is a matrix-vector product and memory bound:
// 1 x 4096 x 4096 reads 64 MB of B for 33 MFLOP, so the floor is B's bytes over the read bandwidth (about
// 16 us on an H200), not the FMA rate. A tile kernel spends its time on a 1-row tile padded to 64 or 128 rows
// (cuda_09_warptiled measured 0.12 and 0.17 of cuBLAS there). A header so that the dispatch plugin compiles the
// same code; gemv.cu exports it as cuda_gemv.
//
// Two kernels, each reading its big operand once, coalesced along the dimension that is contiguous in memory:
//   - gemv_rows<R> (N > 1): C[r, :] = A[r, :] B for R rows at a time. A block is 32 lanes x 8 k-groups; lane l
//     owns 4 consecutive columns (one 16-byte load of B per k where B's rows are aligned, so a warp reads 512
//     contiguous bytes of one row of B) and k-group g the rows k = g, g + 8, ... of its slice; the R values of
//     A per k are one broadcast load each. The 8 k-groups' sums meet in shared memory and are added in order
//     0..7. Every B load feeds R x 4 FMAs, so B is read ceil(M / R) times: the path is for M <= 8 (R = M rounded
//     up to a power of two); larger M stays correct but reads B M / 8 times.
//   - gemv_cols (N = 1): C[r, 0] = A[r, :] . B[:, 0]. One warp per row of A; lanes walk the row in 16-byte loads
//     where A's rows are aligned (scalar, still coalesced, where not), B's column comes through L1 (it is the
//     same for every warp), and the warp's 32 sums are added by a fixed shuffle tree.
// Both split K over blocks when the rows (or columns) alone give fewer blocks than the SMs hold: 1 x 4096 x 4096
// has 32 column blocks, so K is cut into 32 slices of 128 and the GPU gets 1024 blocks. Each slice writes its
// partial row to a workspace and kreg_cuda::reduce_splits adds them in a fixed order (split_reduce.cuh): the
// result is the same on every run. The workspace is M x N x slices floats, under 1 % of B's bytes on this class.
//
// Edges: any M, N, K >= 1 and leading dimensions; alpha and beta in the epilogue (C is read only if beta != 0).
// Columns past N, rows past M and k past the slice are guarded, and 16-byte loads are used only where the whole
// vector is inside the matrix and aligned.
#pragma once

#include "../cuda_common/gemm_common.cuh"
#include "../cuda_common/split_reduce.cuh"

#include <algorithm>
#include <cstdint>
#include <string>

namespace kreg_gemv {

using kreg_cuda::Fp32Gemm;
using kreg_cuda::SplitWorkspace;

constexpr int kThreads = 256;
constexpr int kKGroups = kThreads / 32;   // gemv_rows: k-groups per block; gemv_cols: rows per block
constexpr int kColumnsPerBlock = 32 * 4;  // gemv_rows: 4 columns per lane
constexpr int kResidentBlocks = 8;        // blocks per SM the split count aims for (2048 threads / 256)
constexpr int kMaxSplits = 1024;
constexpr int kRowsMinSplitK = 128;  // gemv_rows: 16 k per thread at least
constexpr int kColsMinSplitK = 512;  // gemv_cols: 4 16-byte loads per lane at least
constexpr int kMaxGridZ = 65535;
constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;

// Where slice s of a split call writes element (row, col); with one slice, C itself (alpha, beta).
__device__ __forceinline__ void store_partial(const Fp32Gemm& p, const SplitWorkspace& w, int split, int row, int col,
                                              float sum) {
    if (w.splits > 1)
        w.data[(static_cast<size_t>(split) * w.rows + row) * w.ld + col] = sum;
    else
        kreg_cuda::store_output(p, row, col, sum);
}

template <int R>
__global__ void __launch_bounds__(kThreads) gemv_rows(Fp32Gemm p, SplitWorkspace w, int k_per_split) {
    __shared__ __align__(16) float partial[kKGroups][R][kColumnsPerBlock];
    const int lane = threadIdx.x % 32, group = threadIdx.x / 32;
    const int col = static_cast<int>(blockIdx.x) * kColumnsPerBlock + lane * 4;
    const int split = static_cast<int>(blockIdx.y);
    const int k0 = split * k_per_split, k_end = min(k0 + k_per_split, p.k);
    const bool vector_b = kreg_cuda::aligned16(p.b) && p.ldb % 4 == 0 && col + 3 < p.n;

    for (int row0 = static_cast<int>(blockIdx.z) * R; row0 < p.m; row0 += static_cast<int>(gridDim.z) * R) {
        float acc[R][4] = {};
        const float* a_rows[R];
#pragma unroll
        for (int r = 0; r < R; ++r) a_rows[r] = p.a + static_cast<size_t>(min(row0 + r, p.m - 1)) * p.lda;
#pragma unroll 4
        for (int k = k0 + group; k < k_end; k += kKGroups) {
            const float* b_row = p.b + static_cast<size_t>(k) * p.ldb + col;
            float4 b;
            if (vector_b) {
                b = __ldg(reinterpret_cast<const float4*>(b_row));
            } else {
                b.x = col < p.n ? __ldg(b_row) : 0.0f;
                b.y = col + 1 < p.n ? __ldg(b_row + 1) : 0.0f;
                b.z = col + 2 < p.n ? __ldg(b_row + 2) : 0.0f;
                b.w = col + 3 < p.n ? __ldg(b_row + 3) : 0.0f;
            }
#pragma unroll
            for (int r = 0; r < R; ++r) {
                // Rows past M read row M - 1 (always inside A) and are never stored.
                const float a = __ldg(a_rows[r] + k);
                acc[r][0] = fmaf(a, b.x, acc[r][0]);
                acc[r][1] = fmaf(a, b.y, acc[r][1]);
                acc[r][2] = fmaf(a, b.z, acc[r][2]);
                acc[r][3] = fmaf(a, b.w, acc[r][3]);
            }
        }
        __syncthreads();  // the previous row group's sums have been read
#pragma unroll
        for (int r = 0; r < R; ++r)
            *reinterpret_cast<float4*>(&partial[group][r][lane * 4]) =
                make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
        __syncthreads();
        for (int e = threadIdx.x; e < R * kColumnsPerBlock; e += kThreads) {
            const int r = e / kColumnsPerBlock, c = e % kColumnsPerBlock;
            const int row = row0 + r, column = static_cast<int>(blockIdx.x) * kColumnsPerBlock + c;
            if (row >= p.m || column >= p.n) continue;
            float sum = partial[0][r][c];
#pragma unroll
            for (int g = 1; g < kKGroups; ++g) sum += partial[g][r][c];
            store_partial(p, w, split, row, column, sum);
        }
    }
}

__global__ void __launch_bounds__(kThreads) gemv_cols(Fp32Gemm p, SplitWorkspace w, int k_per_split) {
    const int lane = threadIdx.x % 32;
    const int row = static_cast<int>(blockIdx.x) * kKGroups + static_cast<int>(threadIdx.x) / 32;
    if (row >= p.m) return;  // whole warps: no barrier below
    const int split = static_cast<int>(blockIdx.y);
    const int k0 = split * k_per_split, k_end = min(k0 + k_per_split, p.k);
    const float* a_row = p.a + static_cast<size_t>(row) * p.lda;
    auto b_at = [&](int k) { return __ldg(p.b + static_cast<size_t>(k) * p.ldb); };
    float sum = 0.0f;
    if (kreg_cuda::aligned16(p.a) && p.lda % 4 == 0) {  // k0 is a multiple of 4, so every vector is aligned
        int k = k0 + lane * 4;
#pragma unroll 4
        for (; k + 3 < k_end; k += 32 * 4) {
            const float4 a = __ldg(reinterpret_cast<const float4*>(a_row + k));
            sum = fmaf(a.x, b_at(k), sum);
            sum = fmaf(a.y, b_at(k + 1), sum);
            sum = fmaf(a.z, b_at(k + 2), sum);
            sum = fmaf(a.w, b_at(k + 3), sum);
        }
        // The one vector that crosses k_end, if this lane holds it (every later one starts past k_end).
        for (int j = k; j < k_end && j < k + 4; ++j) sum = fmaf(__ldg(a_row + j), b_at(j), sum);
    } else {
#pragma unroll 4
        for (int k = k0 + lane; k < k_end; k += 32) sum = fmaf(__ldg(a_row + k), b_at(k), sum);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) store_partial(p, w, split, row, 0, sum);
}

// What one call launches.
struct GemvPlan {
    bool columns = false;  // gemv_cols (N = 1) rather than gemv_rows
    int rows_per_block = 1;
    int splits = 1;
    int k_per_split = 0;
    dim3 grid;
};

inline int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Slices so that the blocks fill the SMs kResidentBlocks times, each at least min_k long, kps a multiple of
// `multiple`; fewer when the workspace would pass kMaxWorkspaceBytes.
inline void choose_splits(GemvPlan& plan, int64_t base_blocks, int64_t m, int64_t n, int64_t k, int sms, int64_t min_k,
                          int64_t multiple) {
    const int64_t target = int64_t{sms} * kResidentBlocks;
    int64_t splits = std::max<int64_t>(1, ceil_div64(target, base_blocks));
    splits = std::min<int64_t>({splits, kMaxSplits, std::max<int64_t>(1, k / min_k)});
    const int64_t ld = kreg_cuda::workspace_ld(static_cast<int>(n));
    while (splits > 1 && splits * m * ld * 4 > static_cast<int64_t>(kMaxWorkspaceBytes)) splits /= 2;
    int64_t kps = ceil_div64(ceil_div64(k, splits), multiple) * multiple;
    kps = std::min(kps, k);
    plan.k_per_split = static_cast<int>(kps);
    plan.splits = static_cast<int>(ceil_div64(k, kps));
}

inline GemvPlan plan_gemv(int64_t m, int64_t n, int64_t k, int sms) {
    GemvPlan plan;
    if (n == 1) {
        plan.columns = true;
        const int64_t blocks = ceil_div64(m, kKGroups);
        choose_splits(plan, blocks, m, n, k, sms, kColsMinSplitK, 32 * 4);
        plan.grid = dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(plan.splits));
        return plan;
    }
    plan.rows_per_block = m >= 8 ? 8 : m >= 4 ? (m == 4 ? 4 : 8) : m >= 2 ? (m == 2 ? 2 : 4) : 1;
    const int64_t column_blocks = ceil_div64(n, kColumnsPerBlock);
    const int64_t row_groups = std::min<int64_t>(ceil_div64(m, plan.rows_per_block), kMaxGridZ);
    choose_splits(plan, column_blocks * row_groups, m, n, k, sms, kRowsMinSplitK, kKGroups * 4);
    plan.grid = dim3(static_cast<unsigned>(column_blocks), static_cast<unsigned>(plan.splits),
                     static_cast<unsigned>(row_groups));
    return plan;
}

class Gemv final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        return kreg_cuda::simt_spec("cuda_gemv",
                                    "GEMV paths for m = 1 (rows of C = a row of A times B, 16-byte loads along N) and "
                                    "n = 1 (a warp per row of A), K split over blocks to fill the GPU, deterministic "
                                    "reduction; correct but slow for larger m",
                                    80, &model_bytes);
    }

    void run_gemm(const kreg_gemm_args& args) override {
        const Fp32Gemm p = kreg_cuda::fp32_gemm(args);
        const cudaStream_t stream = static_cast<cudaStream_t>(args.stream);
        const int sms = sm_count_.get();
        const GemvPlan plan = plan_gemv(p.m, p.n, p.k, sms);
        SplitWorkspace w{nullptr, plan.splits, p.m, kreg_cuda::workspace_ld(p.n)};
        if (plan.splits > 1)
            w.data = workspace_.get(size_t(plan.splits) * size_t(p.m) * size_t(w.ld) * sizeof(float), stream);
        const Launch launch = launch_of(plan);
        launch.kernel<<<launch.grid, launch.block, 0, stream>>>(p, w, plan.k_per_split);
        KREG_CUDA_CHECK_LAUNCH();
        if (plan.splits > 1) kreg_cuda::launch_reduce_splits(p, w, sms, stream);
    }

    bool describe_launch(const kreg_gemm_args& args, kreg_launch_info& info) override {
        const Fp32Gemm p = kreg_cuda::fp32_gemm(args);
        kreg_cuda::fill_launch_info(launch_of(plan_gemv(p.m, p.n, p.k, sm_count_.get())), info);
        return true;
    }

private:
    struct Launch {
        void (*kernel)(Fp32Gemm, SplitWorkspace, int);
        dim3 grid;
        dim3 block;
        unsigned dynamic_smem;
    };

    static Launch launch_of(const GemvPlan& plan) {
        void (*kernel)(Fp32Gemm, SplitWorkspace, int) = &gemv_cols;
        if (!plan.columns) {
            switch (plan.rows_per_block) {
                case 1:
                    kernel = &gemv_rows<1>;
                    break;
                case 2:
                    kernel = &gemv_rows<2>;
                    break;
                case 4:
                    kernel = &gemv_rows<4>;
                    break;
                default:
                    kernel = &gemv_rows<8>;
                    break;
            }
        }
        return {kernel, plan.grid, dim3(kThreads), 0};
    }

    // A read once, B once per row group (once for N = 1, where B is a column), C written once, plus the workspace
    // written and read back when K is split; for the H200's SM count.
    static double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype /*dtype*/) {
        const GemvPlan plan = plan_gemv(m, n, k, kreg_cuda::kModelSmCount);
        const double md = static_cast<double>(m), nd = static_cast<double>(n), kd = static_cast<double>(k);
        const double b_reads = plan.columns ? 1.0 : static_cast<double>(ceil_div64(m, plan.rows_per_block));
        double bytes = 4.0 * (md * kd + kd * nd * b_reads + md * nd);
        if (plan.splits > 1) bytes += 4.0 * 2.0 * plan.splits * md * kreg_cuda::workspace_ld(static_cast<int>(n));
        return bytes;
    }

    kreg_cuda::SmCount sm_count_;
    kreg_cuda::Workspace workspace_;
};

}  // namespace kreg_gemv
