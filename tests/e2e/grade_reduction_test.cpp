// `runner grade` with a reduction rubric (tests/data/grading/reduction-cpu-rubric.json), on the CPU: the CPU
// template's starting point (plugins/template/reduction) and an honest pairwise sum earn every point a CPU
// kernel can; a kernel that drops the last element, one that counts the first twice and one that writes a NaN
// are wrong results with a reason that says so, each call's output checked by the grader outside the
// submission's worker with inputs it drew (sentinels included); the copy tier says it cannot judge a CPU kernel.
#include "grade/gradebook.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <map>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const fs::path kFixtures = KREG_FIXTURE_DIR;
const std::string kRubric = std::string(KREG_TEST_DATA_DIR) + "/grading/reduction-cpu-rubric.json";

std::map<std::string, StudentResult> results(const fs::path& out) {
    std::map<std::string, StudentResult> by_student;
    for (const auto& r : Gradebook(out).all()) by_student[r.student] = r;
    return by_student;
}

TEST(GradeReduction, TheTemplateAndAnHonestSumPassAndEachWrongSumIsCaughtOutsideItsWorker) {
    const auto dir = test::fresh_dir("grade-reduction");
    fs::create_directories(dir / "subs");
    const std::map<std::string, std::string> students{
        {"template", "fixture_student_reduction_cpu.so"},  {"good", "fixture_reduction_good.so"},
        {"drops_last", "fixture_reduction_drops_last.so"}, {"doubles_first", "fixture_reduction_doubles_first.so"},
        {"writes_nan", "fixture_reduction_writes_nan.so"}, {"gemm", "fixture_good.so"},
    };
    for (const auto& [student, file] : students) fs::copy_file(kFixtures / file, dir / "subs" / (student + ".so"));
    const auto run =
        test::run_command(kRunner + " grade --rubric " + kRubric + " --submissions subs --out out", dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto graded = results(dir / "out");
    ASSERT_EQ(graded.size(), students.size()) << run.err;

    for (const std::string student : {"template", "good"}) {
        const StudentResult& r = graded[student];
        EXPECT_EQ(r.status, "graded") << student << ": " << r.summary;
        EXPECT_EQ(r.score, 90) << student << ": " << r.summary;  // the copy tier is not judged on the CPU
        int runs = 0;
        for (const auto& c : r.checks)
            if (c.kind == "correctness")
                for (const auto& row : c.evidence) {
                    ++runs;
                    EXPECT_EQ(row["operation"], "reduction") << row.dump();
                    EXPECT_EQ(row["trusted_check"]["passed"], true) << row.dump();
                    EXPECT_EQ(row["anticheat"]["calls_verified"], 0) << row.dump();
                    EXPECT_GT(row["tolerance"].get<double>(), 1e-5) << "the reduction's bound: " << row.dump();
                }
        EXPECT_EQ(runs, 5 * 2 + 1) << student;
        EXPECT_NE(r.summary.find("half of the copy bandwidth: not judged"), std::string::npos) << r.summary;
    }
    const std::map<std::string, std::string> wrong{
        {"drops_last", "but the exact sum is"},
        {"doubles_first", "but the exact sum is"},
        {"writes_nan", "NaN"},
    };
    for (const auto& [student, says] : wrong) {
        const StudentResult& r = graded[student];
        EXPECT_EQ(r.status, "wrong_result") << student << ": " << r.summary;
        EXPECT_EQ(r.score, 0) << student << ": " << r.summary;
        EXPECT_NE(r.summary.find(says), std::string::npos) << student << ": " << r.summary;
    }
    const StudentResult& gemm = graded["gemm"];
    EXPECT_EQ(gemm.status, "load_failed") << gemm.summary;
    EXPECT_NE(gemm.summary.find("is a gemm kernel; the rubric (" + kRubric + ": /operation) grades reduction kernels"),
              std::string::npos)
        << gemm.summary;
}

}  // namespace
}  // namespace kreg
