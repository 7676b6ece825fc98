// runner --profile: the bank-conflict table from Nsight Compute. Without ncu it must say so and exit 3;
// bad options exit 2 naming the option. The GPU half is profile_gpu_test.cpp.
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {
using kreg::test::fresh_dir;
using kreg::test::run_command;

const std::string kRunner = KREG_RUNNER;

TEST(ProfileCommand, MissingNcuIsAClearMessageAndExit3) {
    const auto dir = fresh_dir("profile-no-ncu");
    const auto r = run_command(kRunner + " --profile --ncu " + (dir / "no-such-ncu").string(), dir, dir / "run");
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("Nsight Compute not found"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no-such-ncu does not exist"), std::string::npos) << r.err;
}

TEST(ProfileCommand, BadOptionsExit2NamingTheOption) {
    const auto dir = fresh_dir("profile-bad");
    auto r = run_command(kRunner + " --profile --blocks 0-3", dir, dir / "a");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--blocks"), std::string::npos) << r.err;
    r = run_command(kRunner + " --profile --shape 10x", dir, dir / "b");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--shape"), std::string::npos) << r.err;
    r = run_command(kRunner + " --profile --help", dir, dir / "c");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("bank conflicts"), std::string::npos) << r.out;
}

TEST(ProfileCommand, NoMatchingKernelExit3) {
    const auto dir = fresh_dir("profile-none");
    // /bin/true stands in for ncu: the command stops before running it.
    const auto r = run_command(kRunner + " --profile --ncu /bin/true --kernels 'no_such_kernel*'", dir, dir / "run");
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("no CUDA kernel matches --kernels"), std::string::npos) << r.err;
}

}  // namespace
