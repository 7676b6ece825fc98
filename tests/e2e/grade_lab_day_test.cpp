// A lab day as course staff live it: the lab's starting point earns correctness only, the console says
// what limits and confinement are in force, the gradebook says when, how long and how much memory each
// student took, a removed submission is marked, a build error is shown where it is read, and a queue of
// CPU submissions keeps moving past a hanging one.
#include "grade/gradebook.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

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
    const auto run = test::run_command(kRunner + " grade --rubric " + rubric.string() + " --submissions subs --out out", dir, dir);
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

}  // namespace
}  // namespace kreg
