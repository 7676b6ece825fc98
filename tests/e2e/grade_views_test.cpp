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
                                           " --rubric hidden.json --submissions subs --out out --secret-seed 12345",
                                       dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;

    const std::string staff = test::slurp(dir / "out" / "students" / "eve.json");
    EXPECT_NE(staff.find("secret ragged"), std::string::npos) << "the staff's result keeps the hidden case";
    // The secret seed's hash: 12345 is found again from it in no time, so no student file may hold it.
    const std::string secret_hash =
        nlohmann::json::parse(staff)["meta"]["provenance"]["secret_sha256"].get<std::string>();
    const fs::path views = dir / "out" / "student-view";
    for (const fs::path& file : {dir / "out" / "gradebook.csv", views / "eve.json", views / "eve.md",
                                 views / "eve.html", dir / "out" / "index.html"}) {
        const std::string text = test::slurp(file);
        ASSERT_FALSE(text.empty()) << file;
        for (const std::string& secret :
             {std::string("secret ragged"), std::string("300x7x129"), std::string("hidden.json"), secret_hash})
            EXPECT_EQ(text.find(secret), std::string::npos) << file << " names '" << secret << "':\n" << text;
    }
    EXPECT_NE(test::slurp(views / "eve.md")
                  .find("The hidden cases and tiers earned 0 of 10 points in total (0/1 cases passed)"),
              std::string::npos)
        << test::slurp(views / "eve.md");
    EXPECT_NE(test::slurp(dir / "out" / "index.html").find("<tr data-student=\"eve\">"), std::string::npos);
    EXPECT_NE(run.out.find("class page: out/index.html"), std::string::npos) << run.out;
    const std::string view = test::slurp(dir / "out" / "student-view" / "eve.json");
    EXPECT_NE(view.find("0/1 cases passed"), std::string::npos) << view;
    const std::string csv = test::slurp(dir / "out" / "gradebook.csv");
    EXPECT_NE(csv.find("hidden: 0/1 cases passed"), std::string::npos);
    // One column per published case and tier, the hidden case only in the hidden column.
    const std::string header = csv.substr(0, csv.find('\n'));
    EXPECT_EQ(header,
              "student,score,max,status,summary,correctness:odd shapes,correctness:a mid-size shape,"
              "hidden:correctness,performance:within 5x of the naive loop,graded_at,wall_s,peak_mb,submission_removed");
    const std::string row = csv.substr(header.size() + 1);
    EXPECT_EQ(row.rfind("eve,0,110,wrong_result,", 0), 0u) << row;
    // The section cells, before graded_at, wall_s, peak_mb and submission_removed.
    EXPECT_NE(row.find("\",0,0,0,0,20"), std::string::npos) << row;
}

// A folder that does not compile: the first compiler error, with the file as the student's folder names it,
// is on the console and in the feedback, and its text (the submission's own, through #error) stays text.
TEST(GradeViews, ABuildFailureShowsItsFirstCompilerErrorOnTheConsoleAndInTheFeedback) {
    const auto dir = test::fresh_dir("grade-views-build");
    fs::create_directories(dir / "subs");
    fs::copy(fs::path(KREG_SOURCE_DIR) / "plugins" / "template", dir / "subs" / "dave", fs::copy_options::recursive);
    std::ofstream(dir / "subs" / "dave" / "my_gemm.cpp", std::ios::app)
        << "\n#error \"<script>alert(1)</script></textarea>\"\nthis is not C++;\n";
    const std::string rubric = (fs::path(KREG_TEST_DATA_DIR) / "grading" / "corpus-rubric.json").string();
    const auto run = test::run_command(
        std::string(KREG_RUNNER) + " grade --rubric " + rubric + " --submissions subs --out out", dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("dave: build_failed"), std::string::npos) << run.err;
    const std::size_t error_line = run.err.find("my_gemm.cpp:");
    ASSERT_NE(error_line, std::string::npos) << "the console does not show the compiler's line:\n" << run.err;
    EXPECT_NE(run.err.find(": error: #error \"<script>alert(1)</script></textarea>\""), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(" | #error \"<script>"), std::string::npos) << "no excerpt under the line:\n" << run.err;
    EXPECT_EQ(run.err.find("/src/my_gemm.cpp"), std::string::npos) << "the build's scratch path is shown:\n" << run.err;

    const std::string md = test::slurp(dir / "out" / "student-view" / "dave.md");
    EXPECT_NE(md.find("## The first compiler error"), std::string::npos) << md;
    EXPECT_NE(md.find(": error: #error \"<script>alert(1)</script></textarea>\""), std::string::npos)
        << "verbatim in a code block:\n"
        << md;
    const std::string html = test::slurp(dir / "out" / "student-view" / "dave.html");
    EXPECT_NE(html.find("error: #error &quot;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/textarea&gt;&quot;"),
              std::string::npos)
        << html;
    EXPECT_EQ(html.find("<script"), std::string::npos) << html;
    const std::string page = test::slurp(dir / "out" / "index.html");
    EXPECT_EQ(page.find("<script>alert"), std::string::npos);
    EXPECT_NE(page.find("<tr data-student=\"dave\">"), std::string::npos);
}

}  // namespace
}  // namespace kreg
