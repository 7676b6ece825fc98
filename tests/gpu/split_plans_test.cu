// The launch plans of the split kernels (cuda_splitk, cuda_small_tile, cuda_gemv), checked on the host: the plans
// are pure functions of the shape and the SM count, so their edges (K = 1, K smaller than the split count would
// be, K just past a multiple of the slice, M or N of 1, grids at their limits) are testable without a GPU. What
// each kernel computes from a plan is checked on the GPU by cuda_kernels_test and compute-sanitizer.
#include "../../plugins/cuda_gemv/gemv.cuh"
#include "../../plugins/cuda_small_tile/small_tile.cuh"
#include "../../plugins/cuda_splitk/splitk.cuh"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <vector>

namespace {

const std::vector<int64_t>& edge_sizes() {
    static const std::vector<int64_t> sizes = {1, 2, 7, 15, 16, 17, 33, 63, 64, 65, 127, 128, 129, 517, 1025, 4097};
    return sizes;
}

const std::vector<int64_t>& edge_depths() {  // K: every size above, and deep ones
    static const std::vector<int64_t> depths = [] {
        std::vector<int64_t> d = edge_sizes();
        for (int64_t k : {255, 256, 257, 4095, 4096, 16383, 16384, 100003, 1 << 20}) d.push_back(k);
        return d;
    }();
    return depths;
}

// Every k in [0, K) lies in exactly one slice, and no slice is empty: kps * (S - 1) < K <= kps * S.
void expect_slices_cover_k(int64_t k, int splits, int k_per_split, const char* what) {
    SCOPED_TRACE(testing::Message() << what << " K=" << k << " splits=" << splits << " kps=" << k_per_split);
    ASSERT_GE(splits, 1);
    ASSERT_GE(k_per_split, 1);
    EXPECT_LT(int64_t{k_per_split} * (splits - 1), k);
    EXPECT_GE(int64_t{k_per_split} * splits, k);
}

template <class Planner>
void check_split_plans(const char* name, int64_t tile_bm_min) {
    for (int sms : {1, 132})
        for (int64_t m : edge_sizes())
            for (int64_t n : edge_sizes())
                for (int64_t k : edge_depths()) {
                    const kreg_splitk::SplitPlan plan = Planner::choose(m, n, k, sms, false);
                    SCOPED_TRACE(testing::Message() << name << " " << m << "x" << n << "x" << k << " on " << sms
                                                    << " SMs: config " << plan.config);
                    expect_slices_cover_k(k, plan.splits, plan.k_per_split, name);
                    EXPECT_LE(plan.splits, kreg_splitk::kMaxSplits);
                    // Slices start tile-aligned (so B keeps its 16-byte alignment), and a split is never thinner
                    // than the minimum the policy allows.
                    if (plan.splits > 1) {
                        EXPECT_EQ(plan.k_per_split % kreg_splitk::kSplitKMultiple, 0);
                        EXPECT_GE(plan.k_per_split, kreg_splitk::kMinSplitK);
                    }
                    EXPECT_GE(plan.tiles, 1);
                    EXPECT_LE(plan.tiles, (m + tile_bm_min - 1) / tile_bm_min * n);
                    EXPECT_LE(kreg_splitk::workspace_bytes(plan, m, n), kreg_splitk::kMaxWorkspaceBytes);
                    EXPECT_GT(plan.model_seconds, 0);
                }
}

TEST(SplitKPlans, SlicesCoverKAtEveryEdgeShape) {
    check_split_plans<kreg_splitk::SplitPlanner<kreg_splitk::LargeTile, kreg_splitk::SmallTile>>("cuda_splitk", 64);
}

TEST(SmallTilePlans, SlicesCoverKAtEveryEdgeShape) {
    check_split_plans<kreg_splitk::SplitPlanner<kreg_small_tile::Small64, kreg_small_tile::Small32>>("cuda_small_tile",
                                                                                                     32);
}

using SplitK = kreg_splitk::SplitPlanner<kreg_splitk::LargeTile, kreg_splitk::SmallTile>;

// The policy's intent on the H200's 132 SMs, for the classes of issue 24.
TEST(SplitKPlans, SplitsOnlyWhereTheTilesDoNotFillTheGpu) {
    // Big squares fill the GPU with whole-K tiles: a split would only add workspace traffic.
    EXPECT_EQ(SplitK::choose(4096, 4096, 4096, 132, false).splits, 1);
    EXPECT_EQ(SplitK::choose(8192, 8192, 8192, 132, false).splits, 1);
    // 517³: 45 tiles of 64x128 for 132 SMs.
    EXPECT_GT(SplitK::choose(517, 517, 517, 132, false).splits, 1);
    // Deep K, narrow N, and K in the millions: many slices.
    EXPECT_GE(SplitK::choose(4096, 64, 16384, 132, false).splits, 2);
    EXPECT_GE(SplitK::choose(128, 128, 1 << 20, 132, false).splits, 64);
    // K too short to split (fewer than 2 x kMinSplitK), whatever the grid.
    for (int64_t k : {1, 7, 33, 64, 127}) EXPECT_EQ(SplitK::choose(64, 64, k, 132, false).splits, 1) << "K=" << k;
}

TEST(GemvPlans, SlicesCoverKAndGridsFitAtEveryEdgeShape) {
    for (int sms : {1, 132})
        for (int64_t m : edge_sizes())
            for (int64_t n : edge_sizes())
                for (int64_t k : edge_depths()) {
                    const kreg_gemv::GemvPlan plan = kreg_gemv::plan_gemv(m, n, k, sms);
                    SCOPED_TRACE(testing::Message()
                                 << "cuda_gemv " << m << "x" << n << "x" << k << " on " << sms << " SMs");
                    expect_slices_cover_k(k, plan.splits, plan.k_per_split, "cuda_gemv");
                    EXPECT_EQ(plan.columns, n == 1);
                    EXPECT_LE(plan.splits, kreg_gemv::kMaxSplits);
                    EXPECT_EQ(plan.grid.y, static_cast<unsigned>(plan.splits));
                    EXPECT_LE(plan.grid.y, 65535u);
                    EXPECT_LE(plan.grid.z, 65535u);
                    EXPECT_GE(plan.grid.x * uint64_t{plan.grid.z}, 1u);
                    // gemv_cols's 16-byte path needs every slice to start at a multiple of 4.
                    if (plan.splits > 1) EXPECT_EQ(plan.k_per_split % 4, 0);
                    if (plan.columns) {
                        EXPECT_EQ(plan.grid.x,
                                  static_cast<unsigned>((m + kreg_gemv::kKGroups - 1) / kreg_gemv::kKGroups));
                    } else {
                        EXPECT_GE(plan.rows_per_block, std::min<int64_t>(m, 8));
                        EXPECT_EQ(plan.grid.x, static_cast<unsigned>((n + kreg_gemv::kColumnsPerBlock - 1) /
                                                                     kreg_gemv::kColumnsPerBlock));
                    }
                }
}

TEST(GemvPlans, VectorShapesFillTheGpu) {
    // 1 x 4096 x 4096: 32 column blocks, so K is cut until about 8 blocks per SM run.
    const kreg_gemv::GemvPlan row = kreg_gemv::plan_gemv(1, 4096, 4096, 132);
    EXPECT_FALSE(row.columns);
    EXPECT_EQ(row.rows_per_block, 1);
    EXPECT_GE(uint64_t{row.grid.x} * row.grid.y, 132u * 4);
    // 4096 x 1 x 4096: 512 blocks of 8 rows, split so that they are more than the SMs hold at once.
    const kreg_gemv::GemvPlan column = kreg_gemv::plan_gemv(4096, 1, 4096, 132);
    EXPECT_TRUE(column.columns);
    EXPECT_GE(uint64_t{column.grid.x} * column.grid.y, 132u * 4);
    // Rows past the grid's z limit are walked by the kernel's loop, not dropped: the grid is capped, the plan
    // still covers M through the loop's stride.
    const kreg_gemv::GemvPlan tall = kreg_gemv::plan_gemv(int64_t{1} << 22, 2, 8, 132);
    EXPECT_EQ(tall.grid.z, 65535u);
}

// The reduction's threads per output vector: a power of two inside one warp, at most about kLoadsPerThread slices
// per thread below 32, no more threads than slices when the grid is already full, and all 32 where few vectors
// meet many slices (the m = 1 GEMV's 1024 vectors x 32 slices, which one thread per vector made a chain of 32
// round trips).
TEST(ReduceSplits, ThreadsPerVectorBoundEachThreadsLoads) {
    for (int sms : {1, 132})
        for (int splits : {2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 128, 133, 1024})
            for (int64_t vectors :
                 {int64_t{1}, int64_t{9}, int64_t{1024}, int64_t{2304}, int64_t{67210}, int64_t{1} << 22}) {
                const int group = kreg_cuda::reduce_group_size(splits, vectors, sms);
                SCOPED_TRACE(testing::Message() << splits << " splits, " << vectors << " vectors, " << sms << " SMs");
                EXPECT_GE(group, 1);
                EXPECT_LE(group, 32);
                EXPECT_EQ(32 % group, 0);  // a power of two: a group never spans two warps
                if (group < 32) EXPECT_LE((splits + group - 1) / group, kreg_cuda::kLoadsPerThread);
                if (group > 1) EXPECT_LT(group / 2, splits);  // never a member with no slice at all
            }
    EXPECT_EQ(kreg_cuda::reduce_group_size(32, 1024, 132), 32);
    EXPECT_EQ(kreg_cuda::reduce_group_size(2, int64_t{1} << 22, 132), 1);
}

}  // namespace
