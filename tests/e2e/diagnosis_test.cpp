// End to end: a kernel that reads past the end of B, as a student's would, in a sweep and in grading.
// What it must be told is where its NaN came from, in full, in the sweep's table and in its grade.
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const std::string kReadPastB = std::string(KREG_FIXTURE_DIR) + "/fixture_reads_past_b.so";
constexpr const char* kDiagnosis =
    "first call: NaN at (0, 0) computed from the padding after B: a value was read past the end of B (the NaN carries "
    "its payload) (561 of 561 elements of C are not finite)";

TEST(Diagnosis, ASweepTableShowsTheWholeReasonOfAReadPastB) {
    const auto dir = test::fresh_dir("diagnosis-sweep");
    const auto r = test::run_command(kRunner + " --no-default-plugins --plugin " + kReadPastB +
                                         " --shape 17x33x9 --warmup 0 --repeat 1 --output-dir out",
                                     dir, dir);
    ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
    // The reason stands whole on a line of its own under the row, not cut to a column.
    EXPECT_NE(r.out.find(std::string("\n    ") + kDiagnosis + "\n"), std::string::npos) << r.out;
}

// Right on the checked call, reading past B from the next one on: the scan of every later call explains
// the NaN from its bits too, not only the full check of the first.
TEST(Diagnosis, TheScanOfALaterCallExplainsItsNaNToo) {
    const auto dir = test::fresh_dir("diagnosis-later-call");
    const auto r =
        test::run_command(kRunner + " --no-default-plugins --plugin " + std::string(KREG_FIXTURE_DIR) +
                              "/fixture_reads_past_b_after_first_call.so --shape 17x33x9 --warmup 1 --repeat 1"
                              " --output-dir out",
                          dir, dir);
    ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("warm-up call 1: NaN at (0, 0) computed from the padding after B: a value was read past the "
                         "end of B (the NaN carries its payload) (561 of 561 elements of C are NaN or Inf)"),
              std::string::npos)
        << r.out;
}

TEST(Diagnosis, GradingExplainsAReadPastB) {
    const auto dir = test::fresh_dir("diagnosis-grade");
    fs::create_directories(dir / "subs");
    fs::copy_file(kReadPastB, dir / "subs" / "bob.so");
    const std::string rubric = (fs::path(KREG_TEST_DATA_DIR) / "grading" / "corpus-rubric.json").string();
    const auto r =
        test::run_command(kRunner + " grade --rubric " + rubric + " --submission subs/bob.so --out out", dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    // Checked by the grader in its own process, from the sealed copy of C: the same bits, the same words.
    const std::string result = test::slurp(dir / "out" / "students" / "bob.json");
    EXPECT_NE(result.find("computed from the padding after B: a value was read past the end of B"), std::string::npos)
        << result;
    EXPECT_NE(r.out.find("read past the end of B"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("..."), std::string::npos) << "nothing cut off:\n" << r.out;
}

}  // namespace
}  // namespace kreg
