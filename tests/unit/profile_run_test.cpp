// ProfileRun's parts that need no ncu and no GPU: ncu's CSV summed over launches, the variants a registry
// listing gives (shapes per operation, blocks of a block transpose and why one is skipped), the driver's
// command line of each (one --KEY per key of its operation), and the refusal when ncu is not there.
#include "run/profile_run.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace kreg {
namespace {

TEST(ProfileRun, NcuCsvIsSummedOverLaunchesAfterItsOwnLines) {
    const std::string csv =
        "==PROF== Connected to process 1\n"
        "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
        "\"0\",\"k\",\"smsp__sass_inst_executed_op_shared_ld.sum\",\"inst\",\"1,024\"\n"
        "\"0\",\"k\",\"gpu__time_duration.sum\",\"ns\",\"2000\"\n"
        "\"1\",\"k\",\"smsp__sass_inst_executed_op_shared_ld.sum\",\"inst\",\"976\"\n"
        "\"1\",\"k\",\"gpu__time_duration.sum\",\"ns\",\"n/a\"\n";
    const NcuMetrics m = parse_ncu_csv(csv);
    EXPECT_EQ(m.launches, 2);
    EXPECT_DOUBLE_EQ(m.sum.at("smsp__sass_inst_executed_op_shared_ld.sum"), 2000.0);
    EXPECT_DOUBLE_EQ(m.sum.at("gpu__time_duration.sum"), 2000.0);  // "n/a" is no value
    EXPECT_EQ(parse_ncu_csv("==PROF== no kernel profiled\n").launches, 0);
}

TEST(ProfileRun, VariantsFollowEachOperationsShapesAndBlocks) {
    const nlohmann::json list = {
        {"kernels",
         {{{"name", "cpu_naive"}, {"backend", "cpu"}, {"plugin_path", "a.so"}},
          {{"name", "cuda_t1_naive"}, {"backend", "cuda"}, {"plugin_path", "t.so"}, {"operation", "transpose"}},
          {{"name", "cuda_01_naive"},
           {"backend", "cuda"},
           {"plugin_path", "g.so"},
           {"unavailable_reason", "no CUDA device"}},
          {{"name", "cuda_block_transpose"},
           {"backend", "cuda"},
           {"plugin_path", "b.so"},
           {"operation", "block_transpose"},
           {"max_block", 16}}}}};
    ProfileRequest request;
    request.globs = {"cuda_*"};
    request.shapes[3] = {{64, 64, 64}};
    request.blocks = {3, 8, 32};
    request.block_target = 100;
    const std::vector<ProfileVariant> v = profile_variants(list, request);
    ASSERT_EQ(v.size(), 5u);  // no CPU kernel; one transpose, one GEMM, three blocks
    EXPECT_EQ(v[0].kernel, "cuda_t1_naive");
    EXPECT_EQ(v[0].operation, Operation::transpose);
    EXPECT_EQ(v[0].shape.m, 8192);  // a transpose's default shape
    EXPECT_EQ(variant_text(v[0]), "8192x8192");
    EXPECT_EQ(v[1].kernel, "cuda_01_naive");
    EXPECT_EQ(v[1].shape.k, 64);
    EXPECT_EQ(variant_text(v[1]), "64x64x64");
    EXPECT_EQ(v[1].skip_reason, "no CUDA device");
    EXPECT_EQ(v[2].shape.block, 3);
    EXPECT_EQ(v[2].shape.m, 99);  // the largest square multiple of the block up to --block-target
    EXPECT_EQ(v[2].shape.n, 99);
    EXPECT_EQ(variant_text(v[2]), "99x99/b3");
    EXPECT_TRUE(v[2].skip_reason.empty());
    EXPECT_EQ(v[3].shape.m, 96);
    EXPECT_EQ(v[4].skip_reason, "block 32 above the kernel's max_block 16");

    request.shapes[2] = {{100, 64}};
    const std::vector<ProfileVariant> w = profile_variants(list, request);
    ASSERT_EQ(w.size(), 5u);
    EXPECT_EQ(w[0].shape.n, 64);
    EXPECT_EQ(w[2].skip_reason, "the sizes 100x64 are not multiples of block 3");
    EXPECT_EQ(w[3].skip_reason, "the sizes 100x64 are not multiples of block 8");  // 64 is, 100 is not
    EXPECT_THROW(profile_variants(nlohmann::json::object(), request), std::exception);
}

// A reduction has one size key (n, operations.def): it runs at each --shape N, 2^24 without one, and the driver
// is given --n alone, as a GEMM is given --m --n --k and a block transpose --m --n --block.
TEST(ProfileRun, AReductionRunsAtEachNAndItsDriverGetsOnlyN) {
    const nlohmann::json list = {
        {"kernels",
         {{{"name", "cuda_r1_atomic"}, {"backend", "cuda"}, {"plugin_path", "r.so"}, {"operation", "reduction"}},
          {{"name", "cuda_01_naive"}, {"backend", "cuda"}, {"plugin_path", "g.so"}},
          {{"name", "cuda_block_transpose"},
           {"backend", "cuda"},
           {"plugin_path", "b.so"},
           {"operation", "block_transpose"}}}}};
    ProfileRequest request;
    request.globs = {"cuda_*"};
    request.blocks = {16};
    const std::vector<ProfileVariant> v = profile_variants(list, request);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].operation, Operation::reduction);
    EXPECT_EQ(v[0].shape.n, int64_t{1} << 24);
    EXPECT_EQ(variant_text(v[0]), "16777216");
    EXPECT_TRUE(v[0].skip_reason.empty());
    EXPECT_EQ(profile_driver_args(v[0]),
              (std::vector<std::string>{"__profile_driver", "--plugin", "r.so", "--kernel", "cuda_r1_atomic",
                                        "--operation", "reduction", "--n", "16777216"}));
    EXPECT_EQ(profile_driver_args(v[1]),
              (std::vector<std::string>{"__profile_driver", "--plugin", "g.so", "--kernel", "cuda_01_naive",
                                        "--operation", "gemm", "--m", "2048", "--n", "2048", "--k", "2048"}));
    EXPECT_EQ(
        profile_driver_args(v[2]),
        (std::vector<std::string>{"__profile_driver", "--plugin", "b.so", "--kernel", "cuda_block_transpose",
                                  "--operation", "block_transpose", "--m", "4096", "--n", "4096", "--block", "16"}));

    request.shapes[1] = {{1000}, {1 << 26}};
    const std::vector<ProfileVariant> w = profile_variants(list, request);
    ASSERT_EQ(w.size(), 4u);  // two reductions, one GEMM, one block
    EXPECT_EQ(w[0].shape.n, 1000);
    EXPECT_EQ(w[1].shape.n, 1 << 26);
    EXPECT_EQ(w[1].kernel, "cuda_r1_atomic");
    EXPECT_EQ(profile_driver_args(w[0]).back(), "1000");
    EXPECT_EQ(w[2].operation, Operation::gemm);  // a one-size --shape is no GEMM's
}

TEST(ProfileRun, AMissingNcuCannotRunAndSaysWhereItLooked) {
    ProfileRequest request;
    request.ncu = "/nonexistent/ncu";
    std::ostringstream log, out;
    try {
        ProfileRun(request, "/nonexistent/runner", log, out).find_ncu();
        ADD_FAILURE() << "no RunError";
    } catch (const RunError& e) {
        EXPECT_EQ(e.kind(), RunError::Kind::cannot_run);
        EXPECT_NE(std::string(e.what()).find("--ncu /nonexistent/ncu does not exist"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace kreg
