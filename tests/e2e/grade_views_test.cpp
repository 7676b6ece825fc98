// Hidden cases stay hidden where a student may look: the gradebook CSV and the student view name no
// hidden case, shape or seed, while the staff's result keeps everything.
#include "grade/gradebook.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace kreg {
namespace {
namespace fs = std::filesystem;

TEST(GradeViews, HiddenCasesAreCountedNotNamedInTheGradebookAndTheStudentView) {
    const auto dir = test::fresh_dir("grade-views");
    fs::create_directories(dir / "subs");
    fs::copy_file(fs::path(KREG_FIXTURE_DIR) / "fixture_wrong_result.so", dir / "subs" / "eve.so");
    std::ofstream(dir / "hidden.json") << R"({"correctness": [{"name": "secret ragged", "points": 10,
        "shapes": [{"m": 300, "n": 7, "k": 129}], "seeds": [9]}]})";
    const std::string rubric = (fs::path(KREG_TEST_DATA_DIR) / "grading" / "corpus-rubric.json").string();
    const auto run = test::run_command(std::string(KREG_RUNNER) + " grade --rubric " + rubric +
                                           " --rubric hidden.json --submissions subs --out out", dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;

    const std::string staff = test::slurp(dir / "out" / "students" / "eve.json");
    EXPECT_NE(staff.find("secret ragged"), std::string::npos) << "the staff's result keeps the hidden case";
    for (const fs::path& file : {dir / "out" / "gradebook.csv", dir / "out" / "student-view" / "eve.json"}) {
        const std::string text = test::slurp(file);
        ASSERT_FALSE(text.empty()) << file;
        for (const char* secret : {"secret ragged", "300x7x129", "hidden.json"})
            EXPECT_EQ(text.find(secret), std::string::npos) << file << " names '" << secret << "':\n" << text;
    }
    const std::string view = test::slurp(dir / "out" / "student-view" / "eve.json");
    EXPECT_NE(view.find("0/1 cases passed"), std::string::npos) << view;
    const std::string csv = test::slurp(dir / "out" / "gradebook.csv");
    EXPECT_NE(csv.find("hidden: 0/1 cases passed"), std::string::npos);
    // One column per published case and tier, the hidden case only in the hidden column.
    const std::string header = csv.substr(0, csv.find('\n'));
    EXPECT_EQ(header, "student,score,max,status,summary,correctness:odd shapes,correctness:a mid-size shape,"
                      "hidden:correctness,performance:within 5x of the naive loop,graded_at,wall_s,peak_mb,submission_removed");
    const std::string row = csv.substr(header.size() + 1);
    EXPECT_EQ(row.rfind("eve,0,110,wrong_result,", 0), 0u) << row;
    // The section cells, before graded_at, wall_s, peak_mb and submission_removed.
    EXPECT_NE(row.find("\",0,0,0,0,20"), std::string::npos) << row;
}

}  // namespace
}  // namespace kreg
