// A result never outlives what it was computed from: a re-run of `runner grade` keeps the results whose
// submission, rubric, secret seed and kreg version are unchanged, grades again exactly the others, and
// says why.
#include "grade/gradebook.hpp"
#include "gradebook_results.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const fs::path kFixtures = KREG_FIXTURE_DIR;
const fs::path kRubric = fs::path(KREG_TEST_DATA_DIR) / "grading" / "corpus-rubric.json";

TEST(GradeRerun, OnlyStudentsWhoseInputsChangedAreGradedAgainAndTheRunSaysWhy) {
    const auto dir = test::fresh_dir("grade-rerun");
    fs::create_directories(dir / "subs");
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "alice.so");
    fs::copy_file(fs::path(KREG_PLUGIN_DIR) / "cpu_blocked.so", dir / "subs" / "bob.so");
    fs::copy_file(kRubric, dir / "rubric.json");
    const std::string grade = kRunner + " grade --rubric rubric.json --submissions subs --out out";

    const auto first = test::run_command(grade, dir, dir);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    auto graded = test::results_by_student(dir / "out");
    ASSERT_EQ(graded["alice"].status, "graded") << graded["alice"].summary;
    ASSERT_TRUE(graded["alice"].meta.contains("provenance")) << graded["alice"].meta.dump();
    EXPECT_EQ(graded["alice"].meta["provenance"]["submission_sha256"].get<std::string>().size(), 64u);

    // Nothing changed: both results stand.
    const auto again = test::run_command(grade, dir, dir);
    EXPECT_NE(again.err.find("alice: already graded"), std::string::npos) << again.err;
    EXPECT_NE(again.err.find("bob: already graded"), std::string::npos) << again.err;

    // Alice rebuilt her plugin (into a wrong one): only she is graded again.
    fs::copy_file(kFixtures / "fixture_wrong_result.so", dir / "subs" / "alice.so",
                  fs::copy_options::overwrite_existing);
    const auto rebuilt = test::run_command(grade, dir, dir);
    EXPECT_NE(rebuilt.err.find("alice: submission changed; grading again"), std::string::npos) << rebuilt.err;
    EXPECT_NE(rebuilt.err.find("bob: already graded"), std::string::npos) << rebuilt.err;
    graded = test::results_by_student(dir / "out");
    EXPECT_EQ(graded["alice"].status, "wrong_result");
    EXPECT_EQ(graded["bob"].status, "graded");

    // The rubric changed (a different maximum): everyone is graded again, on the new rubric.
    std::ifstream in(dir / "rubric.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    const std::string from = R"("points": 60)", to = R"("points": 50)";
    ASSERT_NE(text.find(from), std::string::npos);
    text.replace(text.find(from), from.size(), to);
    std::ofstream(dir / "rubric.json") << text;
    const auto changed = test::run_command(grade, dir, dir);
    EXPECT_NE(changed.err.find("alice: rubric changed; grading again"), std::string::npos) << changed.err;
    EXPECT_NE(changed.err.find("bob: rubric changed; grading again"), std::string::npos) << changed.err;
    graded = test::results_by_student(dir / "out");
    EXPECT_EQ(graded["bob"].max_score, 90);

    // A secret seed where there was none.
    const auto secret = test::run_command("KREG_SECRET_SEED=12345 " + grade, dir, dir);
    // Set aside before anyone is graded (a stopped run must not leave a gradebook of two seeds), then graded again.
    EXPECT_NE(secret.err.find("the secret seed changed: 2 result(s) graded with another seed moved to"),
              std::string::npos)
        << secret.err;
    EXPECT_NE(secret.err.find("graded again: alice, bob"), std::string::npos) << secret.err;
    EXPECT_EQ(test::results_by_student(dir / "out")["bob"].status, "graded");
    EXPECT_EQ(secret.err.find("12345"), std::string::npos) << "the secret must not be printed";
}

}  // namespace
}  // namespace kreg
