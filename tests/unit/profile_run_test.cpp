// ProfileRun's parts that need no ncu and no GPU: ncu's CSV summed over launches, the variants a registry
// listing gives (shapes per operation, blocks of a block transpose and why one is skipped), and the refusal
// when ncu is not there.
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
    request.shapes3 = {{64, 64, 64}};
    request.blocks = {3, 8, 32};
    request.block_target = 100;
    const std::vector<ProfileVariant> v = profile_variants(list, request);
    ASSERT_EQ(v.size(), 5u);  // no CPU kernel; one transpose, one GEMM, three blocks
    EXPECT_EQ(v[0].kernel, "cuda_t1_naive");
    EXPECT_EQ(v[0].m, 8192);  // a transpose's default shape
    EXPECT_EQ(v[1].kernel, "cuda_01_naive");
    EXPECT_EQ(v[1].k, 64);
    EXPECT_EQ(v[1].skip_reason, "no CUDA device");
    EXPECT_EQ(v[2].block, 3);
    EXPECT_EQ(v[2].m, 99);  // the largest square multiple of the block up to --block-target
    EXPECT_TRUE(v[2].skip_reason.empty());
    EXPECT_EQ(v[3].m, 96);
    EXPECT_EQ(v[4].skip_reason, "block 32 above the kernel's max_block 16");

    request.shapes2 = {{100, 64}};
    const std::vector<ProfileVariant> w = profile_variants(list, request);
    ASSERT_EQ(w.size(), 5u);
    EXPECT_EQ(w[0].n, 64);
    EXPECT_EQ(w[2].skip_reason, "M and N are not multiples of block 3");
    EXPECT_THROW(profile_variants(nlohmann::json::object(), request), std::exception);
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
