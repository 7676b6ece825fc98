// What students read: student-view/<id>.md and .html, and the class page. An attacker student reads
// these files, so none may name a hidden case, shape or seed, or carry the secret seed's hash; and a
// submission's own text (kernel name, messages, compiler output) must render as text, never as markup.
#include "grade/feedback.hpp"
#include "class_fixture.hpp"
#include "grade/class_page.hpp"
#include "grade/self_check.hpp"
#include "grade/student_view.hpp"
#include "report/markup_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

namespace kreg {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// Markdown outside fenced code blocks: every '<', '[' and '`' backslash-escaped, so none opens a tag, a
// link or a code span of the submission's making.
void expect_inert_markdown(const std::string& md) {
    bool in_fence = false;
    std::string fence;
    std::size_t start = 0;
    while (start < md.size()) {
        std::size_t end = md.find('\n', start);
        if (end == std::string::npos) end = md.size();
        const std::string line = md.substr(start, end - start);
        start = end + 1;
        if (line.rfind("```", 0) == 0) {
            const std::string ticks = line.substr(0, line.find_first_not_of('`'));
            if (!in_fence) fence = ticks;
            if (!in_fence || ticks.size() >= fence.size()) in_fence = !in_fence;
            continue;
        }
        if (in_fence) continue;
        for (std::size_t i = 0; i < line.size(); ++i)
            if (line[i] == '<' || line[i] == '`' || (line[i] == '[' && line.find("](", i) != std::string::npos))
                EXPECT_TRUE(i > 0 && line[i - 1] == '\\') << "unescaped '" << line[i] << "' in: " << line;
    }
    EXPECT_FALSE(in_fence) << "a code block is left open";
}

TEST(Feedback, NamesNoHiddenCaseShapeSeedOrSecretInAnyView) {
    const Rubric rubric = test::class_rubric();
    const StudentResult staff = test::graded_student("eve", 2.5, true);
    const Feedback f = make_feedback(staff, rubric);
    const std::string json = student_view(staff, rubric).to_json().dump();
    const std::string page = class_page_html({staff}, rubric);
    for (const std::string& text : {feedback_markdown(f), feedback_html(f), json, page}) {
        for (const auto& hidden : test::kHiddenStrings)
            EXPECT_EQ(text.find(hidden), std::string::npos) << hidden << " in:\n" << text;
        EXPECT_EQ(text.find("5ecre7"), std::string::npos) << "the secret seed's hash is in a student's file";
    }
    ASSERT_TRUE(f.hidden.has_value());
    EXPECT_EQ(f.hidden->points, 0);
    EXPECT_EQ(f.hidden->max_points, 20);
    EXPECT_NE(feedback_markdown(f).find("earned 0 of 20 points in total"), std::string::npos) << feedback_markdown(f);
}

TEST(Feedback, ScoreChecksAndAReproducibleCommandForTheFirstFailure) {
    const Feedback f = make_feedback(test::graded_student("eve", 1.5, true), test::class_rubric());
    EXPECT_EQ(f.score, 20);
    ASSERT_EQ(f.failures.size(), 2u);  // the case and the tier not met
    EXPECT_EQ(f.failures[0].where, "17x33x9, seed 2");
    EXPECT_EQ(f.failures[0].reproduce,
              "runner --plugin eve.so --kernels student_gemm --shape 17x33x9 --seed 2 --strict");
    EXPECT_EQ(f.failures[1].reproduce,
              "runner --plugin eve.so --kernels student_gemm,cpu_naive --shape 64x64x64 --baseline cpu_naive");
    const std::string md = feedback_markdown(f);
    EXPECT_NE(md.find("**Score: 20/100**"), std::string::npos) << md;
    EXPECT_NE(md.find("| correctness: odd shapes | 0/40 | no |"), std::string::npos) << md;
    EXPECT_NE(md.find("| correctness: mid | 20/20 | yes |"), std::string::npos) << md;
    EXPECT_NE(md.find("```\nrunner --plugin eve.so --kernels student_gemm --shape 17x33x9 --seed 2 --strict\n```"),
              std::string::npos)
        << md;
    EXPECT_NE(
        feedback_html(f).find("<pre class=\"reproduce\">runner --plugin eve.so --kernels student_gemm --shape 17x33x9"),
        std::string::npos);
}

// A self-check (grade/self_check.hpp) says so in both files, with the defences that did not apply, and links no
// class page (it writes none); a confined grade's files say nothing of it.
TEST(Feedback, AnUnconfinedSelfCheckSaysSoAndLinksNoClassPage) {
    StudentResult staff = test::graded_student("eve", 1.5, true);
    const Feedback graded = make_feedback(staff, test::class_rubric());
    EXPECT_EQ(feedback_markdown(graded).find("Unconfined"), std::string::npos);
    EXPECT_NE(feedback_html(graded).find("../index.html"), std::string::npos);
    staff.unconfined_self_check = unconfined_self_check();
    const Feedback f = make_feedback(staff, test::class_rubric());
    const std::string md = feedback_markdown(f), html = feedback_html(f);
    EXPECT_NE(md.find("**Unconfined self-check, not a grade:** this runner cannot confine"), std::string::npos) << md;
    EXPECT_NE(md.find("Not applied here: namespaces, seccomp, Landlock"), std::string::npos) << md;
    EXPECT_NE(html.find("<strong>Unconfined self-check, not a grade:</strong>"), std::string::npos) << html;
    EXPECT_EQ(html.find("../index.html"), std::string::npos) << html;
    expect_inert_markdown(md);
}

TEST(Feedback, ABuildFailureShowsItsFirstCompilerError) {
    const std::string error =
        "my_gemm.cpp:4:3: error: 'foo' was not declared in this scope\n    4 |   foo(1);\n      |   ^~~";
    const Feedback f = make_feedback(test::build_failed_student("bob", error), test::class_rubric());
    EXPECT_EQ(f.compiler_error, error);
    EXPECT_EQ(count(feedback_markdown(f), "was not declared"), 1u) << "shown once, under its heading:\n"
                                                                   << feedback_markdown(f);
    EXPECT_NE(feedback_markdown(f).find("## The first compiler error\n\n```\n" + error + "\n```"), std::string::npos)
        << feedback_markdown(f);
    EXPECT_NE(
        feedback_html(f).find("<pre class=\"compiler-error\">my_gemm.cpp:4:3: error: &#39;foo&#39; was not declared"),
        std::string::npos)
        << feedback_html(f);
}

TEST(Feedback, SubmissionTextRendersInertInMarkdownHtmlAndTheClassPage) {
    const std::string& evil = test::kHostileText;
    const Rubric rubric = test::class_rubric();
    StudentResult staff = test::graded_student("mallory", 2.5, true, evil, evil);
    staff.summary = evil;
    const std::string fence_breaker = "a.cpp:1:2: error: #error \"```\n" + evil + "\n````\" " + evil;
    const StudentResult built = test::build_failed_student("trent", fence_breaker);
    for (const StudentResult& r : {staff, built}) {
        const Feedback f = make_feedback(r, rubric);
        const std::string html = lower(feedback_html(f));
        for (const char* markup : {"<script", "<img", "</textarea", "onerror=\""})
            EXPECT_EQ(html.find(markup), std::string::npos) << markup << " in:\n" << html;
        EXPECT_EQ(count(html, "</title>"), 1u);  // the page's own only
        EXPECT_EQ(count(html, "</style>"), 1u);
        EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
        expect_inert_markdown(feedback_markdown(f));
    }
    // The kernel's name reaches the command line quoted: copied into a shell, it is one argument.
    const Feedback f = make_feedback(staff, rubric);
    ASSERT_FALSE(f.failures.empty());
    EXPECT_NE(f.failures[0].reproduce.find("--kernels " + shell_word(evil) + " "), std::string::npos)
        << f.failures[0].reproduce;

    const std::string page = lower(class_page_html({staff, built}, rubric));
    EXPECT_EQ(count(page, "<script"), 1u) << "only the page's own script";
    for (const char* markup : {"<img", "</textarea", "onerror=\""})
        EXPECT_EQ(page.find(markup), std::string::npos) << markup;
}

TEST(MarkupText, EscapesEveryCharacterThatCanStartMarkup) {
    EXPECT_EQ(html_escape("<a href=\"x\" title='y'>&amp;</a>"),
              "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
    EXPECT_EQ(markdown_text("a_b _c_ *c* [d](e) <f> `g` |h &lt; ~~i~~ #\nnext"),
              "a_b \\_c\\_ \\*c\\* \\[d\\](e) \\<f\\> \\`g\\` \\|h \\&lt; \\~\\~i\\~\\~ \\# next");
    EXPECT_EQ(markdown_code_block("x ```` y"), "`````\nx ```` y\n`````\n");
    EXPECT_EQ(shell_word("student_gemm"), "student_gemm");
    EXPECT_EQ(shell_word("a'b; rm -rf ~"), "'a'\\''b; rm -rf ~'");
    EXPECT_EQ(shell_word(""), "''");
}

TEST(ClassPage, EveryStudentHasARowAndBoardsRankByRatioWithoutOptOuts) {
    const Rubric rubric = test::class_rubric(nlohmann::json{{"opt_out", {"carol"}}});
    const std::vector<StudentResult> results{
        test::graded_student("alice", 1.5, false), test::graded_student("bob", 3.25, false),
        test::graded_student("carol", 9.0, false), test::build_failed_student("dave", "a.cpp:1:1: error: x")};
    const std::string page = class_page_html(results, rubric);
    for (const char* id : {"alice", "bob", "carol", "dave"}) {
        EXPECT_NE(
            page.find("<tr data-student=\"" + std::string(id) + "\"><td><a href=\"student-view/" + id + ".html\">"),
            std::string::npos)
            << id;
    }
    const std::size_t board = page.find("<section class=\"board\" data-tier=\"fast\">");
    ASSERT_NE(board, std::string::npos) << page;
    EXPECT_EQ(page.find("data-tier=\"secret speed\""), std::string::npos) << "a hidden tier has a board";
    const std::string ranking = page.substr(board, page.find("</section>", board) - board);
    const std::size_t bob = ranking.find("data-student=\"bob\""), alice = ranking.find("data-student=\"alice\"");
    ASSERT_NE(bob, std::string::npos);
    ASSERT_NE(alice, std::string::npos);
    EXPECT_LT(bob, alice) << "ranked by ratio, highest first";
    EXPECT_EQ(ranking.find("carol"), std::string::npos) << "an opted-out student is on the board";
    EXPECT_EQ(ranking.find("dave"), std::string::npos) << "a student without a measured ratio is ranked";
    EXPECT_NE(ranking.find("2 measured, 1 not"), std::string::npos) << ranking;
    // The histogram counts every student once.
    std::size_t counted = 0;
    for (std::size_t at = page.find("data-count=\""); at != std::string::npos; at = page.find("data-count=\"", at + 1))
        counted += std::stoul(page.substr(at + 12));
    EXPECT_EQ(counted, results.size());

    const std::string hidden_board = class_page_html(results, test::class_rubric(false));
    EXPECT_EQ(hidden_board.find("<section class=\"board\""), std::string::npos);
    EXPECT_NE(hidden_board.find("The rubric hides the speed-up boards."), std::string::npos);
}

}  // namespace
}  // namespace kreg
