// The gradebook: per-student files written atomically, the CSV derived from them, resuming, corrupt files
// reported rather than dropped, CSV quoting, the console summary, and student ids from paths.
#include "grade/gradebook.hpp"

#include "grade/rubric.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>

namespace kreg {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

StudentResult result_for(const std::string& student, double score, const std::string& status = "graded",
                         const std::string& summary = "ok") {
    StudentResult r;
    r.student = student;
    r.submission = "subs/" + student + ".so";
    r.status = status;
    r.score = score;
    r.max_score = 100;
    r.summary = summary;
    return r;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

class GradebookTest : public ::testing::Test {
protected:
    void SetUp() override {
        static std::atomic<int> counter{0};
        dir_ = fs::temp_directory_path() /
               ("kreg-gradebook-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(GradebookTest, RecordWritesTheStudentFileAndOneCsvRow) {
    Gradebook book(dir_);
    EXPECT_FALSE(book.has("alice"));
    book.record(result_for("alice", 42.5));
    EXPECT_TRUE(fs::is_regular_file(dir_ / "students" / "alice.json"));
    EXPECT_EQ(book.student_file("alice"), dir_ / "students" / "alice.json");
    EXPECT_EQ(json::parse(read_text(dir_ / "students" / "alice.json")).at("score"), 42.5);
    const std::string csv = read_text(dir_ / "gradebook.csv");
    EXPECT_EQ(
        csv,
        "student,score,max,status,summary,graded_at,wall_s,peak_mb,submission_removed\nalice,42.5,100,graded,ok,,,,\n");
    EXPECT_EQ(csv, book.csv());
}

TEST_F(GradebookTest, WhenHowLongHowMuchMemoryAndARemovedSubmissionAreColumnsAndReadBack) {
    Gradebook book(dir_);
    StudentResult r = result_for("alice", 40);
    r.graded_at = "2026-12-02T01:02:03Z";
    r.wall_s = 12.25;
    r.peak_mb = 37.26;
    r.submission_removed = true;
    book.record(r);
    EXPECT_EQ(book.csv(),
              "student,score,max,status,summary,graded_at,wall_s,peak_mb,submission_removed\n"
              "alice,40,100,graded,ok,2026-12-02T01:02:03Z,12.25,37.3,yes\n");
    const StudentResult back = book.all().at(0);
    EXPECT_EQ(back.graded_at, r.graded_at);
    EXPECT_EQ(back.wall_s, 12.25);
    ASSERT_TRUE(back.peak_mb.has_value());
    EXPECT_DOUBLE_EQ(*back.peak_mb, 37.26);
    EXPECT_TRUE(back.submission_removed);
    // A result of an older kreg has none of them, and still reads back.
    json old = r.to_json();
    for (const char* key : {"graded_at", "wall_s", "peak_mb", "submission_removed"}) old.erase(key);
    const StudentResult older = StudentResult::from_json(old);
    EXPECT_EQ(older.graded_at, "");
    EXPECT_FALSE(older.peak_mb.has_value());
    EXPECT_FALSE(older.submission_removed);
    old["submission_removed"] = "yes";
    EXPECT_THROW(StudentResult::from_json(old), std::invalid_argument);
}

TEST_F(GradebookTest, RecordingAStudentAgainReplacesTheRow) {
    Gradebook book(dir_);
    book.record(result_for("bob", 10, "build_failed", "nvcc failed"));
    book.record(result_for("alice", 90));
    book.record(result_for("bob", 77, "graded", "fixed"));
    EXPECT_EQ(read_text(dir_ / "gradebook.csv"),
              "student,score,max,status,summary,graded_at,wall_s,peak_mb,submission_removed\nalice,90,100,graded,ok,,,,"
              "\nbob,77,100,graded,fixed,,,,\n");
    const auto all = book.all();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].student, "bob");
    EXPECT_EQ(all[1].score, 77);
    EXPECT_EQ(all[1].status, "graded");
}

TEST_F(GradebookTest, RowsAreSortedByStudentWhateverTheOrderOfRecording) {
    Gradebook book(dir_);
    for (const char* s : {"carol", "alice", "bob"}) book.record(result_for(s, 1));
    const auto rows = lines_of(read_text(dir_ / "gradebook.csv"));
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[1].substr(0, 6), "alice,");
    EXPECT_EQ(rows[2].substr(0, 4), "bob,");
    EXPECT_EQ(rows[3].substr(0, 6), "carol,");
}

TEST_F(GradebookTest, ResumeSeesFinishedStudentsAcrossInstancesAndIgnoresTemporaries) {
    {
        Gradebook first_run(dir_);
        first_run.record(result_for("alice", 50));
    }
    // A run killed while writing bob leaves only the atomic writer's hidden temporary.
    write_text(dir_ / "students" / ".bob.json.tmp-123-0", "{\"student\": \"bo");
    Gradebook second_run(dir_);
    EXPECT_TRUE(second_run.has("alice"));
    EXPECT_FALSE(second_run.has("bob"));
    const auto all = second_run.all();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].student, "alice");
    second_run.record(result_for("bob", 60));
    EXPECT_TRUE(second_run.has("bob"));
    EXPECT_EQ(lines_of(second_run.csv()).size(), 3u);
}

TEST_F(GradebookTest, ACorruptStudentFileIsReportedNotDropped) {
    Gradebook book(dir_);
    book.record(result_for("alice", 80));
    write_text(dir_ / "students" / "bob.json", "{\"schema\": \"kreg-student-result\", \"stud");
    // A file named for one student that holds another's result is just as wrong.
    StudentResult dave = result_for("dave", 99);
    write_text(dir_ / "students" / "carol.json", dave.to_json().dump());

    const auto all = book.all();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[1].student, "bob");
    EXPECT_EQ(all[1].status, "error");
    EXPECT_NE(all[1].summary.find((dir_ / "students" / "bob.json").string()), std::string::npos) << all[1].summary;
    EXPECT_EQ(all[1].meta.at("corrupt_file"), (dir_ / "students" / "bob.json").string());
    EXPECT_EQ(all[2].student, "carol");
    EXPECT_EQ(all[2].status, "error");
    EXPECT_NE(all[2].summary.find("names student 'dave'"), std::string::npos) << all[2].summary;

    // Not finished: a resumed run grades them again, and recording replaces the bad file.
    EXPECT_FALSE(book.has("bob"));
    EXPECT_FALSE(book.has("carol"));
    EXPECT_TRUE(book.has("alice"));
    EXPECT_NE(book.csv().find("\nbob,0,0,error,"), std::string::npos) << book.csv();
    EXPECT_NE(book.console_summary().find("1 graded, 2 error"), std::string::npos) << book.console_summary();

    book.record(result_for("bob", 40));
    EXPECT_TRUE(book.has("bob"));
    EXPECT_NE(read_text(dir_ / "gradebook.csv").find("\nbob,40,100,graded,ok,,,,\n"), std::string::npos);
}

TEST_F(GradebookTest, CsvQuotesSummariesWithCommasQuotesAndNewlines) {
    Gradebook book(dir_);
    book.record(result_for("alice", 12.3456789, "graded", "2/3 cases, \"odd shapes\" failed"));
    book.record(result_for("bob", 0, "crashed", "SIGSEGV\nin student_gemm"));
    EXPECT_EQ(book.csv(),
              "student,score,max,status,summary,graded_at,wall_s,peak_mb,submission_removed\n"
              "alice,12.3457,100,graded,\"2/3 cases, \"\"odd shapes\"\" failed\",,,,\n"
              "bob,0,100,crashed,\"SIGSEGV\nin student_gemm\",,,,\n");
}

TEST_F(GradebookTest, InvalidUtf8AndControlBytesAreRecordedPrintableAndReadBack) {
    Gradebook book(dir_);
    StudentResult r = result_for("alice", 10, "build_failed", "bad \xff byte\x1b[2J\nsecond line");
    r.checks.push_back({"build", "cmake\x07", 0, 10, false, "error: \xc3(\r\nmore",
                        json{{"log_tail", "gcc: \xfe\x1b[31merror\nld: failed"}, {"seconds", 1.5}}});
    r.meta = json{{"note", "\xe2\x82"}};
    ASSERT_NO_THROW(book.record(r));
    const auto all = book.all();
    ASSERT_EQ(all.size(), 1u);
    const StudentResult& back = all[0];
    EXPECT_EQ(back.status, "build_failed");  // not a corrupt-file entry
    EXPECT_EQ(back.summary, "bad \xEF\xBF\xBD byte [2J\nsecond line");
    ASSERT_EQ(back.checks.size(), 1u);
    EXPECT_EQ(back.checks[0].name, "cmake ");
    EXPECT_EQ(back.checks[0].summary, "error: \xEF\xBF\xBD(\r\nmore");
    EXPECT_EQ(back.checks[0].evidence["log_tail"], "gcc: \xEF\xBF\xBD [31merror\nld: failed");
    EXPECT_EQ(back.checks[0].evidence["seconds"], 1.5);
    EXPECT_EQ(back.meta["note"], "\xEF\xBF\xBD\xEF\xBF\xBD");
    for (const std::string& text : {book.csv(), book.console_summary(), format_checks(back)})
        for (char c : text) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\r') << int(c);
}

TEST_F(GradebookTest, CsvNeutralisesFormulaTextButNotScores) {
    Gradebook book(dir_);
    StudentResult r = result_for("-minus", -0.5, "graded", "=HYPERLINK(\"http://x\")");
    r.max_score = 10;
    book.record(r);
    book.record(result_for("bob", 1, "graded", "@cmd"));
    EXPECT_EQ(book.csv(),
              "student,score,max,status,summary,graded_at,wall_s,peak_mb,submission_removed\n"
              "'-minus,-0.5,10,graded,\"'=HYPERLINK(\"\"http://x\"\")\",,,,\n"
              "bob,1,100,graded,'@cmd,,,,\n");
}

// A published rubric (two cases, one tier) and a staff file with a hidden case and a hidden tier.
Rubric rubric_with_hidden_cases() {
    auto a_case = [](const std::string& name, double points) {
        return json{{"name", name}, {"points", points}, {"shapes", {{{"square", 17}}}}, {"seeds", {1}}};
    };
    auto a_tier = [](const std::string& name, double points) {
        return json{{"name", name},
                    {"points", points},
                    {"shape", {{"square", 64}}},
                    {"reference", "cpu_naive"},
                    {"min_ratio", 1.0}};
    };
    const Rubric published = parse_rubric(json{{"correctness", {a_case("odd shapes", 40), a_case("=big, \"one\"", 20)}},
                                               {"performance", {a_tier("fast", 20)}}},
                                          "lab.json");
    const Rubric hidden = parse_rubric(json{{"correctness", {a_case("secret ragged", 10), a_case("secret tall", 5)}},
                                            {"performance", {a_tier("secret speed", 5)}}},
                                       "staff/hidden.json");
    return merge_rubrics({published, hidden});
}

TEST(GradebookColumns, PublishedEntriesByNameHiddenOnesAsOneColumnPerSection) {
    std::vector<std::string> headers;
    for (const auto& column : gradebook_columns(rubric_with_hidden_cases())) headers.push_back(column.header);
    EXPECT_EQ(headers, (std::vector<std::string>{"correctness:odd shapes", "correctness:=big, \"one\"",
                                                 "hidden:correctness", "performance:fast", "hidden:performance"}));
    // A rubric without hidden files has no hidden columns.
    headers.clear();
    const json only = {{"name", "only"}, {"points", 1}, {"shapes", {{{"square", 3}}}}, {"seeds", {1}}};
    const Rubric one_file = parse_rubric(json{{"correctness", json::array({only})}}, "a.json");
    for (const auto& column : gradebook_columns(one_file)) headers.push_back(column.header);
    EXPECT_EQ(headers, (std::vector<std::string>{"correctness:only"}));
}

TEST_F(GradebookTest, CsvHasAColumnPerSectionWithTheSameColumnsForEveryStudentAndNoHiddenName) {
    Gradebook book(dir_, rubric_with_hidden_cases());
    StudentResult alice = result_for("alice", 77, "graded", "77/100; hidden: 2/3 cases passed");
    alice.checks = {
        {"audit", "static audit", 0, 0, true, "", json()},
        {"correctness", "odd shapes", 40, 40, true, "4/4 runs ok", json()},
        {"correctness", "=big, \"one\"", 10, 20, false, "1/2 runs ok", json()},
        {"correctness", "secret ragged", 10, 10, true, "1/1 runs ok; shape 300x7x129", json()},
        {"correctness", "secret tall", 0, 5, false, "0/1 runs ok; first failure: wrong_result at 999x1x2", json()},
        {"performance", "fast", 12.5, 20, true, "1.3x", json()},
        {"performance", "secret speed", 5, 5, true, "2x", json()}};
    book.record(alice);
    book.record(result_for("bob", 0, "rejected_audit", "rejected by the static audit: imports socket"));  // no checks
    const std::string csv = read_text(dir_ / "gradebook.csv");
    const auto lines = lines_of(csv);
    ASSERT_EQ(lines.size(), 3u) << csv;
    EXPECT_EQ(lines[0],
              "student,score,max,status,summary,correctness:odd shapes,\"correctness:=big, \"\"one\"\"\","
              "hidden:correctness,performance:fast,hidden:performance,graded_at,wall_s,peak_mb,submission_removed");
    EXPECT_EQ(lines[1], "alice,77,100,graded,77/100; hidden: 2/3 cases passed,40,10,10,12.5,5,,,,");
    EXPECT_EQ(lines[2], "bob,0,100,rejected_audit,rejected by the static audit: imports socket,,,,,,,,,");
    for (const char* secret : {"secret", "300x7x129", "999x1x2", "hidden.json"})
        EXPECT_EQ(csv.find(secret), std::string::npos) << "the CSV names '" << secret << "':\n" << csv;
}

TEST_F(GradebookTest, WithoutARubricTheCsvHasOnlyTheFirstFiveColumns) {
    Gradebook book(dir_);
    StudentResult alice = result_for("alice", 40);
    alice.checks = {{"correctness", "odd shapes", 40, 40, true, "", json()}};
    book.record(alice);
    EXPECT_EQ(
        book.csv(),
        "student,score,max,status,summary,graded_at,wall_s,peak_mb,submission_removed\nalice,40,100,graded,ok,,,,\n");
}

TEST(GradebookText, FormatChecksListsEveryCheckWithItsVerdict) {
    StudentResult r = result_for("alice", 30);
    r.checks.push_back({"build", "build", 0, 0, true, "built in 2.1 s", json()});
    r.checks.push_back({"correctness", "odd shapes", 10, 20, false, "1/2 runs\nsecond line", json()});
    const std::string long_reason =
        "0/1 runs ok; first failure: wrong_result at 17x33x9 seed 1: first call: NaN at (0, 0) "
        "computed from the padding after B: a value was read past the end of B";
    r.checks.push_back({"correctness", "edges", 0, 10, false, long_reason, json()});
    const auto lines = lines_of(format_checks(r));
    ASSERT_EQ(lines.size(), 8u) << format_checks(r);
    EXPECT_EQ(lines[0], "checks of alice:");
    EXPECT_EQ(lines[1], "  kind         name        points  passed  summary");
    EXPECT_EQ(lines[2], "  build        build       0/0     yes     built in 2.1 s");
    // A summary that does not fit one line of its column stands whole under its row.
    EXPECT_EQ(lines[3], "  correctness  odd shapes  10/20   no");
    EXPECT_EQ(lines[4], "    1/2 runs");
    EXPECT_EQ(lines[5], "    second line");
    EXPECT_EQ(lines[6], "  correctness  edges       0/10    no");
    EXPECT_EQ(lines[7], "    " + long_reason);
}

TEST_F(GradebookTest, ConsoleSummaryAlignsColumnsAndShowsLongSummariesWholeUnderTheirRow) {
    Gradebook book(dir_);
    book.record(result_for("alice", 100));
    book.record(result_for("bob", 50));
    book.record(result_for("a_much_longer_id", 70));
    book.record(result_for("dan", 0, "build_failed", "nvcc: error: expected ';'\nmore compiler output"));
    book.record(result_for("eve", 0, "timeout", std::string(200, 'x')));
    const std::string text = book.console_summary();
    const auto lines = lines_of(text);
    ASSERT_EQ(lines.size(), 10u) << text;  // header, 5 students, 3 summary lines under theirs, totals
    EXPECT_EQ(lines.back(), "5 students: 3 graded, 1 timeout, 1 build_failed; mean score 44 of 100");
    // Every row's status column starts where the header's does.
    const std::size_t status_at = lines[0].find("status");
    ASSERT_NE(status_at, std::string::npos);
    for (const std::string& student : {"alice", "bob", "a_much_longer_id", "dan", "eve"}) {
        const auto row = std::find_if(lines.begin(), lines.end(),
                                      [&](const std::string& l) { return l.rfind(student + " ", 0) == 0; });
        ASSERT_NE(row, lines.end()) << student << "\n" << text;
        const std::string rest = row->substr(status_at);
        EXPECT_TRUE(rest.rfind("graded", 0) == 0 || rest.rfind("build_failed", 0) == 0 || rest.rfind("timeout", 0) == 0)
            << *row;
    }
    EXPECT_NE(text.find("\n    nvcc: error: expected ';'\n    more compiler output\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\n    " + std::string(200, 'x') + "\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("..."), std::string::npos) << text;
}

TEST_F(GradebookTest, AnEmptyGradebook) {
    Gradebook book(dir_);
    EXPECT_TRUE(book.all().empty());
    EXPECT_EQ(book.csv(), "student,score,max,status,summary,graded_at,wall_s,peak_mb,submission_removed\n");
    EXPECT_NE(book.console_summary().find("no graded students"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir_));  // reading creates nothing
}

TEST_F(GradebookTest, AnInvalidStudentIdIsRefusedAndWritesNothing) {
    Gradebook book(dir_);
    for (const char* bad : {"", "../escape", "a/b", ".hidden", "sp ace"}) {
        SCOPED_TRACE(bad);
        EXPECT_THROW(book.record(result_for(bad, 1)), std::invalid_argument);
        EXPECT_THROW(book.has(bad), std::invalid_argument);
    }
    EXPECT_FALSE(fs::exists(dir_));
}

TEST(StudentResult, RoundTripsThroughJson) {
    StudentResult r = result_for("alice", 61.5, "graded", "3 of 4 checks");
    r.checks.push_back({"correctness", "tiny and odd shapes", 20, 20, true, "10/10 runs", json{{"runs", 10}}});
    r.checks.push_back({"performance", "half of cuBLAS", 0, 10, false, "ratio 0.31 < 0.5", json{{"ratio", 0.31}}});
    r.sandbox = {{"network_namespace", true}};
    r.meta = {{"rubric", "lab3"}};
    const json j = r.to_json();
    EXPECT_EQ(j.at("schema"), "kreg-student-result");
    EXPECT_EQ(j.at("schema_version"), 1);
    const StudentResult back = StudentResult::from_json(j);
    EXPECT_EQ(back.to_json(), j);
    ASSERT_EQ(back.checks.size(), 2u);
    EXPECT_EQ(back.checks[1].name, "half of cuBLAS");
    EXPECT_FALSE(back.checks[1].passed);
    EXPECT_EQ(back.checks[1].evidence.at("ratio"), 0.31);
}

TEST(StudentResult, FromJsonSaysWhatIsWrong) {
    const json good = result_for("alice", 1).to_json();
    const auto message_of = [](const json& j) {
        try {
            StudentResult::from_json(j);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    json j = good;
    j["status"] = "passed";
    EXPECT_NE(message_of(j).find("unknown status 'passed'"), std::string::npos) << message_of(j);
    j = good;
    j.erase("student");
    EXPECT_NE(message_of(j).find("missing 'student'"), std::string::npos) << message_of(j);
    j = good;
    j["schema_version"] = 2;
    EXPECT_NE(message_of(j).find("/schema_version"), std::string::npos) << message_of(j);
    j = good;
    j["score"] = "lots";
    EXPECT_NE(message_of(j).find("/score: expected a number"), std::string::npos) << message_of(j);
    j = good;
    j["checks"] = json::array({json{{"kind", "build"}, {"name", "build"}, {"points", 0}, {"max_points", 0}}});
    EXPECT_NE(message_of(j).find("/checks/0: missing 'passed'"), std::string::npos) << message_of(j);
    j = good;
    j["student"] = "../x";
    EXPECT_NE(message_of(j).find("not a valid student id"), std::string::npos) << message_of(j);
    EXPECT_NE(message_of(json::array()).find("expected an object"), std::string::npos);
}

// A self-check's marking (grade/self_check.hpp) is a typed part of the result: written only when set, read back
// strictly, and printed under the checks.
TEST(StudentResult, AnUnconfinedSelfCheckIsRecordedReadBackAndPrinted) {
    StudentResult confined = result_for("alice", 60);
    EXPECT_FALSE(confined.to_json().contains("unconfined_self_check"));  // the Linux grader's files are unchanged
    StudentResult r = result_for("alice", 60);
    r.checks.push_back({"correctness", "odd shapes", 60, 60, true, "10/10 runs ok", json()});
    r.unconfined_self_check = UnconfinedSelfCheck{
        "an unconfined self-check", {"a worker process: its own"}, {"namespaces: none here", "seccomp: none here"}};
    const json j = r.to_json();
    ASSERT_TRUE(j.contains("unconfined_self_check")) << j.dump(1);
    const StudentResult back = StudentResult::from_json(j);
    ASSERT_TRUE(back.unconfined_self_check);
    EXPECT_EQ(back.unconfined_self_check->not_applied, r.unconfined_self_check->not_applied);
    EXPECT_EQ(back.to_json(), j);
    const std::string text = format_checks(r);
    EXPECT_NE(text.find("UNCONFINED SELF-CHECK, not a grade:"), std::string::npos) << text;
    EXPECT_NE(text.find("not applied here: namespaces, seccomp"), std::string::npos) << text;
    EXPECT_EQ(format_checks(confined).find("UNCONFINED"), std::string::npos);

    json mistyped = j;
    mistyped["unconfined_self_check"]["not_applied"][1] = 7;
    try {
        StudentResult::from_json(mistyped);
        ADD_FAILURE() << "a mistyped entry was read";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("/unconfined_self_check/not_applied/1: expected a string"),
                  std::string::npos)
            << e.what();
    }
}

TEST(StudentIds, FromPaths) {
    EXPECT_EQ(student_id_from_path("subs/alice.so"), "alice");
    EXPECT_EQ(student_id_from_path("subs/libbob_gemm.so"), "libbob_gemm");
    EXPECT_EQ(student_id_from_path("subs/J\xc3\xb6rg M\xc3\xbcller.so"), "J__rg_M__ller");
    EXPECT_EQ(student_id_from_path("subs/..so"), "_");
    EXPECT_EQ(student_id_from_path("subs/.hidden.so"), "_hidden");
    EXPECT_EQ(student_id_from_path("subs/a.b-c_d.so"), "a.b-c_d");
    EXPECT_EQ(student_id_from_path(std::string(300, 'z') + ".so").size(), 200u);
    EXPECT_THROW(student_id_from_path(""), std::invalid_argument);

    const fs::path dir = fs::temp_directory_path() / ("kreg-ids-" + std::to_string(::getpid())) / "carol.v2";
    fs::create_directories(dir);
    EXPECT_EQ(student_id_from_path(dir), "carol.v2");  // a folder keeps its whole name
    EXPECT_EQ(student_id_from_path(dir.string() + "/"), "carol.v2");
    fs::remove_all(dir.parent_path());
    for (const char* id : {"alice", "a.b-c_d", "_hidden", "x"}) EXPECT_TRUE(is_valid_student_id(id)) << id;
    for (const char* id : {"", ".x", "..", "a/b", "a b", "\xc3\xb6"}) EXPECT_FALSE(is_valid_student_id(id)) << id;
    EXPECT_FALSE(is_valid_student_id(std::string(201, 'a')));
}

TEST(FormatPoints, TrimsTrailingZeros) {
    EXPECT_EQ(format_points(20), "20");
    EXPECT_EQ(format_points(42.5), "42.5");
    EXPECT_EQ(format_points(40.0 / 3), "13.3333");
    EXPECT_EQ(format_points(0), "0");
    EXPECT_EQ(format_points(-0.00001), "0");
    EXPECT_EQ(format_points(1e6), "1000000");
}

}  // namespace
}  // namespace kreg
