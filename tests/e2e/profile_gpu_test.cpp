// runner --profile on a GPU with ncu (label gpu): the 32x32 tile without padding (cuda_t2_smem) must show
// its 32-way column reads in the table, the padded one (cuda_t3_padded) none. Skipped, with the reason,
// without a device, without ncu, or without the CUDA plugins.
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace {
using kreg::test::fresh_dir;
using kreg::test::run_command;

const std::string kRunner = KREG_RUNNER;

// The wavefronts per shared load of one kernel's row in the table.
double load_ways(const std::string& table, const std::string& kernel) {
    std::stringstream lines(table);
    for (std::string line; std::getline(lines, line);) {
        std::stringstream fields(line);
        std::string name, block, shape, time, ld_req, ld_wf, ld_confl, ld_way;
        if (fields >> name >> block >> shape >> time >> ld_req >> ld_wf >> ld_confl >> ld_way && name == kernel)
            return std::atof(ld_way.c_str());
    }
    return -1;
}

TEST(ProfileCommandGpu, ConflictingTileShowsItsConflicts) {
    const auto dir = fresh_dir("profile-gpu");
    const auto list = run_command(kRunner + " --list --format json", dir, dir / "list");
    if (list.out.find("\"cuda_t2_smem\"") == std::string::npos)
        GTEST_SKIP() << "cuda_t2_smem is not built (no CUDA toolkit)";
    const auto r = run_command(kRunner + " --profile --kernels cuda_t2_smem,cuda_t3_padded --shape 1024x1024 --logs " +
                                   (dir / "logs").string(),
                               dir, dir / "run");
    if (r.err.find("Nsight Compute not found") != std::string::npos) GTEST_SKIP() << "no ncu here: " << r.err;
    if (r.out.find("skipped: no CUDA device") != std::string::npos) GTEST_SKIP() << "no CUDA device: " << r.out;
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    // Column reads of a 32-word-stride tile: 32 wavefronts per load; padded: 1.
    EXPECT_GE(load_ways(r.out, "cuda_t2_smem"), 16.0) << r.out;
    const double padded = load_ways(r.out, "cuda_t3_padded");
    EXPECT_GE(padded, 1.0) << r.out;
    EXPECT_LT(padded, 1.5) << r.out;
}

// A reduction (one size key, n) is profiled at each --shape N: its row names the shape by n alone, and the
// sequential-addressing step's shared loads are conflict-free (1 wavefront per request, docs/REDUCTION.md).
// Its driver is called with --n alone; a missing --n is named.
TEST(ProfileCommandGpu, AReductionIsProfiledAtEachN) {
    const auto dir = fresh_dir("profile-gpu-reduction");
    const auto list = run_command(kRunner + " --list --format json", dir, dir / "list");
    if (list.out.find("\"cuda_r3_sequential\"") == std::string::npos)
        GTEST_SKIP() << "cuda_r3_sequential is not built (no CUDA toolkit)";
    const std::string plugin = std::string(KREG_PLUGIN_DIR) + "/cuda_r3_sequential.so";
    const auto call = run_command(kRunner + " __profile_driver --plugin " + plugin +
                                      " --kernel cuda_r3_sequential --operation reduction --n 1000",
                                  dir, dir / "driver");
    if (call.err.find("no CUDA device") != std::string::npos) GTEST_SKIP() << "no CUDA device: " << call.err;
    EXPECT_EQ(call.exit_code, 0) << call.err;
    const auto missing = run_command(kRunner + " __profile_driver --plugin " + plugin +
                                         " --kernel cuda_r3_sequential --operation reduction --m 1000",
                                     dir, dir / "missing");
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.err.find("missing --n (a reduction takes --n)"), std::string::npos) << missing.err;

    const auto r = run_command(
        kRunner + " --profile --kernels cuda_r3_sequential --shape 1048576 --logs " + (dir / "logs").string(), dir,
        dir / "run");
    if (r.err.find("Nsight Compute not found") != std::string::npos) GTEST_SKIP() << "no ncu here: " << r.err;
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("1048576"), std::string::npos) << r.out;
    const double ways = load_ways(r.out, "cuda_r3_sequential");
    EXPECT_GE(ways, 1.0) << r.out;
    EXPECT_LT(ways, 1.5) << r.out;
}

// The driver runs a GEMM in a dtype the kernel declares: a bf16-only kernel (cuBLAS's bf16 reference) in
// bf16, with bf16 inputs; it used to be called in tf32, which it does not declare, and failed.
TEST(ProfileDriverGpu, ABf16OnlyKernelIsCalledInBf16) {
    const auto dir = fresh_dir("profile-driver-bf16");
    const std::string cublas = std::string(KREG_PLUGIN_DIR) + "/cublas_reference.so";
    if (run_command("test -f " + cublas, dir, dir / "exists").exit_code != 0)
        GTEST_SKIP() << "cublas_reference.so is not built (no CUDA toolkit)";
    const std::string call = kRunner + " __profile_driver --plugin " + cublas +
                             " --kernel cublas_bf16 --operation gemm --m 64 --n 48 --k 40 --block 0";
    const auto r = run_command(call, dir, dir / "bf16");
    if (r.err.find("no CUDA device") != std::string::npos) GTEST_SKIP() << "no CUDA device: " << r.err;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto wrong = run_command(call + " --dtype tf32", dir, dir / "tf32");
    EXPECT_EQ(wrong.exit_code, 1);
    EXPECT_NE(wrong.err.find("does not declare dtype tf32"), std::string::npos) << wrong.err;
}

}  // namespace
