// Grades staff can rerun without fear: an `error` (the grader's failure, not the student's) is retried, a
// gradebook made with the secret seed is not overwritten by a shell without it, a stopped run says how far it
// got and how to go on, and no run leaves a gradebook of two seeds.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "grade/gradebook.hpp"
#include "gradebook_results.hpp"
#include "run_command.hpp"

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const fs::path kFixtures = KREG_FIXTURE_DIR;
const fs::path kRubric = fs::path(KREG_TEST_DATA_DIR) / "grading" / "corpus-rubric.json";

fs::path two_students(const std::string& name) {
    const auto dir = test::fresh_dir(name);
    fs::create_directories(dir / "subs");
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "alice.so");
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "bob.so");
    return dir;
}

TEST(GradeRerunSafety, AResultThatEndedInErrorIsGradedAgainByTheNextRun) {
    const auto dir = two_students("grade-error-retry");
    const std::string grade = kRunner + " grade --rubric " + kRubric.string() + " --submissions subs --out out";
    ASSERT_EQ(test::run_command(grade, dir, dir).exit_code, 0);
    // What a run on a machine whose driver failed leaves (grader.cpp: "cannot be run on this machine"): alice's
    // result says error, from the very inputs she is graded from now.
    const fs::path file = dir / "out" / "students" / "alice.json";
    nlohmann::json stored = nlohmann::json::parse(test::slurp(file));
    stored["status"] = "error";
    stored["score"] = 0;
    stored["summary"] = "cannot be run on this machine: no CUDA driver";
    std::ofstream(file) << stored.dump(2);

    const auto again = test::run_command(grade, dir, dir);
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.err.find("alice: its last grading ended in error; grading again"), std::string::npos) << again.err;
    EXPECT_NE(again.err.find("bob: already graded"), std::string::npos) << again.err;
    EXPECT_EQ(test::results_by_student(dir / "out")["alice"].status, "graded");
}

TEST(GradeRerunSafety, ASecretSeedGradebookIsNotRegradedWithoutItAndReseedNeverMixesSeeds) {
    const auto dir = two_students("grade-seed-guard");
    const std::string grade = kRunner + " grade --rubric " + kRubric.string() + " --submissions subs --out out";
    const auto secret = test::run_command("KREG_SECRET_SEED=4242 " + grade, dir, dir);
    ASSERT_EQ(secret.exit_code, 0) << secret.err;
    const std::string csv = test::slurp(dir / "out" / "gradebook.csv");

    // A new shell without the seed: nothing is graded or changed, and the run names whom it would overwrite.
    const auto unset = test::run_command("env -u KREG_SECRET_SEED " + grade, dir, dir);
    EXPECT_EQ(unset.exit_code, 2) << unset.err;
    EXPECT_NE(unset.err.find("2 result(s) graded with a secret seed, and this run has none"), std::string::npos)
        << unset.err;
    EXPECT_NE(unset.err.find("would overwrite: alice, bob"), std::string::npos) << unset.err;
    EXPECT_NE(unset.err.find("--reseed"), std::string::npos) << unset.err;
    EXPECT_EQ(test::slurp(dir / "out" / "gradebook.csv"), csv);
    // Another secret is refused the same way.
    const auto other = test::run_command("KREG_SECRET_SEED=777 " + grade, dir, dir);
    EXPECT_EQ(other.exit_code, 2) << other.err;
    EXPECT_NE(other.err.find("this run has another one"), std::string::npos) << other.err;
    // So is --jobs, whose merge would replace the gradebook.
    const auto jobs = test::run_command("env -u KREG_SECRET_SEED " + grade + " --jobs 2", dir, dir);
    EXPECT_EQ(jobs.exit_code, 2) << jobs.err;
    EXPECT_NE(jobs.err.find("would overwrite: alice, bob"), std::string::npos) << jobs.err;
    EXPECT_EQ(test::slurp(dir / "out" / "gradebook.csv"), csv);
    // The right seed: both results stand.
    const auto same = test::run_command("KREG_SECRET_SEED=4242 " + grade, dir, dir);
    EXPECT_EQ(same.exit_code, 0) << same.err;
    EXPECT_NE(same.err.find("alice: already graded"), std::string::npos) << same.err;

    // --reseed, stopped while bob (now a hanging submission) is in flight: the gradebook holds alice graded with
    // the new seed and no result of the old one; the old results are kept aside, not lost.
    fs::copy_file(kFixtures / "fixture_hang_in_run.so", dir / "subs" / "bob.so", fs::copy_options::overwrite_existing);
    test::run_command(
        "env -u KREG_SECRET_SEED " + grade +
            " --reseed & pid=$!; for i in $(seq 1 300); do sleep 0.1; "
            "grep -q '\"secret_sha256\": null' out/students/alice.json 2>/dev/null && break; done; sleep 0.5; "
            "kill -TERM $pid; wait $pid; true",
        dir, dir);
    const auto partial = test::results_by_student(dir / "out");
    ASSERT_EQ(partial.count("alice"), 1u);
    EXPECT_TRUE(partial.at("alice").meta["provenance"]["secret_sha256"].is_null()) << partial.at("alice").meta.dump();
    EXPECT_EQ(partial.count("bob"), 0u) << "bob's old-seed result must not stay beside alice's new one";
    EXPECT_TRUE(fs::exists(dir / "out" / "replaced-seed" / "bob.json"));
    const std::string half_csv = test::slurp(dir / "out" / "gradebook.csv");
    EXPECT_EQ(std::count(half_csv.begin(), half_csv.end(), '\n'), 2) << half_csv;  // header and alice
}

TEST(GradeRerunSafety, AStoppedRunSaysHowManyStudentsFinishedAndHowToGoOn) {
    for (const char* signal_name : {"TERM", "INT"}) {
        const auto dir = test::fresh_dir(std::string("grade-stopped-") + signal_name);
        fs::create_directories(dir / "subs");
        fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "a1.so");
        fs::copy_file(kFixtures / "fixture_hang_in_run.so", dir / "subs" / "b_hangs.so");
        fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "c1.so");
        const std::string grade = kRunner + " grade --rubric " + kRubric.string() + " --submissions subs --out out";
        // Stopped while it waits on the hanging submission (a1 recorded). A background job of sh ignores SIGINT
        // unless the program installs its own handler, which is what is under test.
        const auto stopped = test::run_command("(" + grade +
                                                   " & pid=$!; for i in $(seq 1 300); do sleep 0.1; "
                                                   "[ -f out/students/a1.json ] && break; done; sleep 0.5; kill -" +
                                                   std::string(signal_name) + " $pid; wait $pid)",
                                               dir, dir);
        EXPECT_EQ(stopped.exit_code, std::string(signal_name) == "TERM" ? 143 : 130) << stopped.err;
        EXPECT_NE(stopped.err.find("interrupted by SIG" + std::string(signal_name) + ": 1 of 3 student(s) finished"),
                  std::string::npos)
            << stopped.err;
        EXPECT_NE(stopped.err.find("Run the same command again"), std::string::npos) << stopped.err;
        auto partial = test::results_by_student(dir / "out");
        EXPECT_EQ(partial.count("a1"), 1u);
        EXPECT_EQ(partial.count("b_hangs"), 0u) << "the student in flight is no result: " << partial["b_hangs"].summary;

        const auto resumed = test::run_command(grade, dir, dir);
        EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
        EXPECT_NE(resumed.err.find("a1: already graded"), std::string::npos) << resumed.err;
        auto all = test::results_by_student(dir / "out");
        EXPECT_EQ(all["b_hangs"].status, "timeout");
        EXPECT_EQ(all["c1"].status, "graded");
    }
}

}  // namespace
}  // namespace kreg
