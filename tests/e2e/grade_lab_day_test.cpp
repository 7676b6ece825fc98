// A lab day as course staff live it: the lab's starting point earns correctness only, the console says
// what limits and confinement are in force, the gradebook says when, how long and how much memory each
// student took, a removed submission is marked, a build error is shown where it is read, and a queue of
// CPU submissions keeps moving past a hanging one.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "grade/gradebook.hpp"
#include "run_command.hpp"

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const fs::path kFixtures = KREG_FIXTURE_DIR;
const fs::path kSource = KREG_SOURCE_DIR;
const fs::path kCorpusRubric = fs::path(KREG_TEST_DATA_DIR) / "grading" / "corpus-rubric.json";

std::map<std::string, StudentResult> results(const fs::path& out) {
    std::map<std::string, StudentResult> by_student;
    for (const auto& r : Gradebook(out).all()) by_student[r.student] = r;
    return by_student;
}

TEST(GradeLabDay, TheUnmodifiedCpuTemplateEarnsTheCpuLabsCorrectnessPointsOnly) {
    const auto dir = test::fresh_dir("grade-template-start");
    fs::create_directories(dir / "subs");
    fs::copy(kSource / "plugins" / "template", dir / "subs" / "starter", fs::copy_options::recursive);
    const fs::path rubric = kSource / "configs" / "grading" / "cpu-lab.json";
    const auto run =
        test::run_command(kRunner + " grade --rubric " + rubric.string() + " --submissions subs --out out", dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const StudentResult r = results(dir / "out").at("starter");
    ASSERT_EQ(r.status, "graded") << r.summary;
    double correctness = 0, correctness_max = 0, performance = 0;
    int tiers = 0;
    for (const CheckResult& c : r.checks) {
        if (c.kind == "correctness") correctness += c.points, correctness_max += c.max_points;
        if (c.kind == "performance") performance += c.points, ++tiers;
    }
    EXPECT_EQ(tiers, 2);
    EXPECT_GT(correctness_max, 0);
    EXPECT_EQ(correctness, correctness_max) << r.summary;
    EXPECT_EQ(performance, 0) << "the starting point must not earn a speed tier: " << r.summary;
    EXPECT_EQ(r.score, correctness_max) << r.summary;
}

TEST(GradeLabDay, TheConsoleSaysWhatIsInForceAndTheGradebookWhenHowLongAndHowMuchMemory) {
    const auto dir = test::fresh_dir("grade-in-force");
    fs::create_directories(dir / "subs");
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "alice.so");
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "bob.so");
    fs::copy(kSource / "plugins" / "template", dir / "subs" / "dave", fs::copy_options::recursive);
    std::ofstream(dir / "subs" / "dave" / "my_gemm.cpp", std::ios::app) << "\nthis is not C++;\n";
    const std::string grade = kRunner + " grade --rubric " + kCorpusRubric.string() + " --submissions subs --out out";
    const auto run = test::run_command(grade, dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    // The limits (corpus-rubric.json: call_s 3, total_s 60) and how memory is capped here, before anyone is graded.
    const size_t header = run.err.find("runner grade: limits: memory 4096 MiB per worker");
    ASSERT_NE(header, std::string::npos) << run.err;
    EXPECT_LT(header, run.err.find("[1/3]")) << run.err;
    const bool cgroup = run.err.find("(cgroup v2 memory.max)") != std::string::npos;
    const bool rlimit = run.err.find("(RLIMIT_DATA; no cgroup: ") != std::string::npos;
    EXPECT_TRUE(cgroup != rlimit) << run.err;
    EXPECT_NE(run.err.find("each call 3 s, a submission's total 60 s"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("runner grade: confinement: namespaces"), std::string::npos) << run.err;
    // What the sandbox of the first worker reported, by step.
    const size_t applied = run.err.find("confinement applied to alice's worker: ");
    ASSERT_NE(applied, std::string::npos) << run.err;
    const std::string steps = run.err.substr(applied, run.err.find('\n', applied) - applied);
    for (const char* step : {"seccomp stage 1", "namespaces", "RLIMIT_CPU", "no_new_privs"})
        EXPECT_NE(steps.find(step), std::string::npos) << step << " in " << steps;
    // The compiler's first error, on the console, without the build's scratch path.
    EXPECT_NE(run.err.find("\n    my_gemm.cpp:"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(": error: "), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("kreg-scratch-"), std::string::npos) << run.err;

    auto graded = results(dir / "out");
    for (const char* student : {"alice", "bob"}) {
        const StudentResult& r = graded[student];
        EXPECT_EQ(r.graded_at.size(), 20u) << r.graded_at;  // 2026-12-02T01:02:03Z
        EXPECT_GT(r.wall_s, 0) << student;
        ASSERT_TRUE(r.peak_mb.has_value()) << student;
        EXPECT_GT(*r.peak_mb, 1) << student;
        EXPECT_LT(*r.peak_mb, 4096) << student;
        EXPECT_FALSE(r.submission_removed) << student;
    }
    std::string csv = test::slurp(dir / "out" / "gradebook.csv");
    EXPECT_NE(csv.find(",graded_at,wall_s,peak_mb,submission_removed\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("\nalice,100,100,graded,"), std::string::npos) << csv;

    // Bob's submission is removed: his result stays, marked in the JSON, the CSV and the console.
    fs::remove(dir / "subs" / "bob.so");
    const auto after = test::run_command(grade, dir, dir);
    EXPECT_EQ(after.exit_code, 0) << after.err;
    EXPECT_NE(after.err.find("bob: submission subs/bob.so is gone; its result stays, marked as removed"),
              std::string::npos)
        << after.err;
    graded = results(dir / "out");
    EXPECT_TRUE(graded["bob"].submission_removed);
    EXPECT_FALSE(graded["alice"].submission_removed);
    csv = test::slurp(dir / "out" / "gradebook.csv");
    const size_t bob = csv.find("\nbob,");
    ASSERT_NE(bob, std::string::npos) << csv;
    EXPECT_EQ(csv.substr(csv.find('\n', bob + 1) - 4, 4), ",yes") << csv;
    EXPECT_NE(after.out.find("[submission removed]"), std::string::npos) << after.out;
    // Back again: the mark goes.
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "bob.so");
    test::run_command(grade, dir, dir);
    EXPECT_FALSE(results(dir / "out")["bob"].submission_removed);
}

TEST(GradeLabDay, WithJobsAHangingSubmissionDoesNotHoldUpTheOthers) {
    const auto dir = test::fresh_dir("grade-jobs");
    fs::create_directories(dir / "subs");
    // Sorted first, so that one at a time it would be graded before the others, and finish first.
    fs::copy_file(kFixtures / "fixture_hang_in_run.so", dir / "subs" / "a_hangs.so");
    for (const char* s : {"b1", "b2", "b3"})
        fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / (std::string(s) + ".so"));
    // First with a call limit of 900 s, so that the hanging one cannot finish while the others are graded
    // however loaded the machine is (an honest one takes about 2 s here; with a 25 s limit the order was a
    // race that a loaded CI machine lost once). The run is stopped as soon as the three honest results are
    // in the gradebook, and what the gradebook held at that moment is kept for the assertions.
    std::string rubric = test::slurp(kCorpusRubric);
    const std::string from = R"("call_s": 3, "total_s": 60)";
    ASSERT_NE(rubric.find(from), std::string::npos);
    rubric.replace(rubric.find(from), from.size(), R"("call_s": 900, "total_s": 1800)");
    std::ofstream(dir / "rubric-hang-long.json") << rubric;
    const std::string students = dir.string() + "/out/students/";
    const auto stopped =
        test::run_command("(" + kRunner +
                              " grade --rubric rubric-hang-long.json --submissions subs --out out --jobs 4 & pid=$!; "
                              "for i in $(seq 1 6000); do sleep 0.1; [ -f " +
                              students + "b1.json ] && [ -f " + students + "b2.json ] && [ -f " + students +
                              "b3.json ] && break; done; ls " + students + " > seen.txt; kill -TERM $pid; wait $pid)",
                          dir, dir);
    // Four lanes at once, each taking the next submission when it is free...
    EXPECT_NE(stopped.err.find("grading 4 submissions at once"), std::string::npos) << stopped.err;
    EXPECT_EQ(stopped.err.find("shard"), std::string::npos) << "no shards: " << stopped.err;
    // ... so that every honest one finished while the hanging one still waited on its first call.
    const std::string seen = test::slurp(dir / "seen.txt");
    for (const char* s : {"b1", "b2", "b3"}) {
        EXPECT_NE(seen.find(std::string(s) + ".json"), std::string::npos) << s << " never finished:\n" << stopped.err;
        EXPECT_NE(stopped.err.find(std::string(s) + ": graded, 100/100"), std::string::npos) << stopped.err;
    }
    EXPECT_EQ(seen.find("a_hangs"), std::string::npos) << "the hanging one finished first: " << seen;
    EXPECT_EQ(stopped.exit_code, 143) << stopped.err;
    EXPECT_NE(stopped.err.find("interrupted by SIGTERM: 3 of 4 student(s) finished"), std::string::npos) << stopped.err;

    // Then the whole run with the rubric's own 3 s limit (a changed rubric grades everyone again): one
    // gradebook, written as each student finished, with its summary and class page, as a run of one lane.
    const auto run = test::run_command(
        kRunner + " grade --rubric " + kCorpusRubric.string() + " --submissions subs --out out --jobs 4", dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("a_hangs: timeout"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(dir / "out" / "shard-1-of-4"));
    const auto graded = results(dir / "out");
    ASSERT_EQ(graded.size(), 4u) << run.err;
    EXPECT_NE(run.out.find("class page: out/index.html (feedback: out/student-view/)"), std::string::npos) << run.out;
    EXPECT_EQ(graded.at("a_hangs").status, "timeout");
    for (const char* s : {"b1", "b2", "b3"}) EXPECT_EQ(graded.at(s).status, "graded") << graded.at(s).summary;
    const std::string csv = test::slurp(dir / "out" / "gradebook.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5) << csv;

    const auto bad = test::run_command(
        kRunner + " grade --rubric " + kCorpusRubric.string() + " --submissions subs --out out2 --jobs 0", dir, dir);
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_NE(bad.err.find("--jobs"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kreg
