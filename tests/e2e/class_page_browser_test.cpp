// The class page and the feedback pages in a real browser: Debian's chromium, headless, loading the files
// from file:// as staff would. What is checked in the DOM chromium dumps after the page's script ran:
// the script ran to its end (data-kreg-ready on <html>, with the number of rows), every student has a row,
// index.html#sort=score:desc sorted the table, nothing a submission wrote became an element or ran (its
// text tries to set data-pwned); and on chromium's stderr, that the page logged nothing to the console
// (no error, no CSP refusal). A second load adds a script as if escaping had failed: the page's Content
// Security Policy must refuse it while the page's own script still runs.
//
// chromium runs as root here (CI and the development machine), which it refuses without --no-sandbox; the
// pages are the project's own output, loaded from local files with no network.
//
// Skips where chromium is not installed, unless KREG_REQUIRE_BROWSER=1 (CI: tools/setup.sh installs it).
#include "class_fixture.hpp"
#include "grade/class_page.hpp"
#include "grade/feedback.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace kreg {
namespace {
namespace fs = std::filesystem;

std::string find_chromium() {
    if (const char* given = std::getenv("KREG_CHROMIUM"); given && *given) return given;
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (std::size_t start = 0; start <= dirs.size();) {
        const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
        for (const char* name : {"chromium", "chromium-browser"}) {
            const fs::path candidate = fs::path(dirs.substr(start, colon - start)) / name;
            if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
        }
        start = colon + 1;
    }
    return "";
}

#define REQUIRE_CHROMIUM(chromium)                                                                                 \
    const std::string chromium = find_chromium();                                                                  \
    if (chromium.empty()) {                                                                                        \
        const char* required = std::getenv("KREG_REQUIRE_BROWSER");                                                \
        if (required && std::string(required) == "1")                                                              \
            FAIL() << "KREG_REQUIRE_BROWSER=1 but chromium is not installed";                                      \
        GTEST_SKIP()                                                                                               \
            << "chromium is not installed (apt-get install chromium): the class page is not checked in a browser"; \
    }

struct Loaded {
    std::string dom, console;  // the DOM after load; chromium's console lines from stderr
};

Loaded load(const std::string& chromium, const fs::path& page, const std::string& fragment, const fs::path& scratch) {
    const std::string url = "file://" + page.string() + fragment;
    const auto run = test::run_command(
        "timeout 120 " + chromium +
            " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
            " --disable-extensions --user-data-dir='" +
            (scratch / "profile").string() + "' --enable-logging=stderr --v=0 --dump-dom '" + url + "'",
        scratch, scratch / "run");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    Loaded loaded{run.out, ""};
    std::istringstream lines(run.err);
    for (std::string line; std::getline(lines, line);)
        if (line.find(":CONSOLE") != std::string::npos) loaded.console += line + "\n";
    return loaded;
}

// The <html> element's start tag in a dumped DOM: where the page's script puts its mark, and where the
// hostile text's scripts and handlers would put theirs (the text itself says "data-pwned" as text).
std::string html_tag(const std::string& dom) {
    const std::size_t start = dom.find("<html");
    return start == std::string::npos ? "" : dom.substr(start, dom.find('>', start) - start + 1);
}

// A class of 30: ordinary students with distinct scores, hostile ones, a build failure.
struct ClassFolder {
    fs::path dir;
    std::map<std::string, double> scores;
};

ClassFolder write_class(const std::string& name, const Rubric& rubric) {
    ClassFolder c{test::fresh_dir(name), {}};
    Gradebook book(c.dir, rubric);
    std::vector<StudentResult> results;
    for (int i = 0; i < 26; ++i)
        results.push_back(test::graded_student("student" + std::to_string(i), 0.5 + 0.25 * i, i % 3 == 0));
    results.push_back(test::graded_student("mallory", 2.5, true, test::kHostileText, test::kHostileText));
    results.back().summary = test::kHostileText;
    results.push_back(test::graded_student("oscar", 4, false, "student_gemm", test::kHostileText));
    results.push_back(test::build_failed_student("trent", "a.cpp:1:2: error: #error \"" + test::kHostileText + "\""));
    results.push_back(test::build_failed_student("zed", "z.cpp:3:1: error: expected ';'"));
    for (const auto& r : results) {
        book.record(r);
        write_student_feedback(c.dir, r, rubric);
        c.scores[r.student] = r.score;
    }
    write_class_page(book, rubric);
    return c;
}

// data-student of every row of the gradebook table, in DOM order.
std::vector<std::string> gradebook_rows(const std::string& dom) {
    const std::size_t start = dom.find("id=\"gradebook\""), end = dom.find("</table>", start);
    std::vector<std::string> rows;
    if (start == std::string::npos) return rows;
    const std::string table = dom.substr(start, end - start);
    const std::regex row("<tr data-student=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(table.begin(), table.end(), row); it != std::sregex_iterator(); ++it)
        rows.push_back((*it)[1]);
    return rows;
}

TEST(ClassPageBrowser, LoadsWithoutConsoleOutputHoldsEveryStudentSortsAndRunsNothingOfTheirs) {
    REQUIRE_CHROMIUM(chromium);
    const ClassFolder c = write_class("class-page-browser", test::class_rubric());
    const Loaded page = load(chromium, c.dir / "index.html", "#sort=score:desc", c.dir);
    EXPECT_EQ(page.console, "") << "the page logged to the console (a script error, a refused resource)";
    EXPECT_NE(html_tag(page.dom).find("data-kreg-ready=\"" + std::to_string(c.scores.size()) + "\""), std::string::npos)
        << "the page's script did not run to its end: " << html_tag(page.dom);
    EXPECT_EQ(html_tag(page.dom).find("data-pwned"), std::string::npos)
        << "a submission's text ran: " << html_tag(page.dom);

    const std::vector<std::string> rows = gradebook_rows(page.dom);
    EXPECT_EQ(rows.size(), c.scores.size());
    for (const auto& [student, score] : c.scores)
        EXPECT_EQ(std::count(rows.begin(), rows.end(), student), 1)
            << student << " has no row (or several) in the table";
    for (std::size_t i = 1; i < rows.size(); ++i)
        EXPECT_GE(c.scores.at(rows[i - 1]), c.scores.at(rows[i]))
            << "#sort=score:desc: " << rows[i - 1] << " before " << rows[i];

    // A feedback page: no script of its own, and none of the submission's runs.
    const Loaded feedback = load(chromium, c.dir / "student-view" / "mallory.html", "", c.dir);
    EXPECT_EQ(feedback.console, "");
    EXPECT_EQ(html_tag(feedback.dom).find("data-pwned"), std::string::npos) << html_tag(feedback.dom);
    EXPECT_NE(feedback.dom.find("&lt;script&gt;"), std::string::npos) << "the hostile text is not shown as text";
}

TEST(ClassPageBrowser, ItsContentSecurityPolicyRefusesAScriptThatEscapingMissed) {
    REQUIRE_CHROMIUM(chromium);
    const ClassFolder c = write_class("class-page-csp", test::class_rubric());
    std::string html = test::slurp(c.dir / "index.html");
    const std::size_t body_end = html.rfind("</body>");
    ASSERT_NE(body_end, std::string::npos);
    html.insert(body_end, "<script>document.documentElement.setAttribute('data-pwned', 'injected')</script>");
    std::ofstream(c.dir / "injected.html") << html;
    const Loaded page = load(chromium, c.dir / "injected.html", "", c.dir);
    EXPECT_EQ(html_tag(page.dom).find("data-pwned"), std::string::npos)
        << "an injected inline script ran: " << html_tag(page.dom);
    EXPECT_NE(page.console.find("Content Security Policy"), std::string::npos) << page.console;
    EXPECT_NE(html_tag(page.dom).find("data-kreg-ready=\""), std::string::npos)
        << "the CSP refused the page's own script";
}

}  // namespace
}  // namespace kreg
