// runner merge: K shards of a sweep (runner --shard I/K) make the report the unsharded run makes, row for
// row; shards that are missing, unfinished, given twice, or from another config or kreg are refused, each
// named with what is wrong and, when it can be re-run, the command that does it. Grading shards merge into
// the gradebook the unsharded grading run writes.
#include "grade/gradebook.hpp"
#include "report/journal.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <vector>

namespace kreg {
namespace {
namespace fs = std::filesystem;
using test::run_command;

const std::string kRunner = KREG_RUNNER;
// Ten jobs, so three shards own 4, 3 and 3 of them.
const std::string kSweep = kRunner + " --kernels cpu_naive,cpu_blocked --sizes 8,9,10,11,12 --repeat 1 --warmup 0";

// Runs shard i of k into shard<i>.json (as a Slurm array would, with {shard} in the names).
void run_shard(const fs::path& dir, int i, int k, const std::string& sweep = kSweep) {
    const auto r = run_command(sweep + " --shard " + std::to_string(i) + "/" + std::to_string(k) +
                                   " --json 'shard-{shard}.json' --csv 'shard-{shard}.csv'",
                               dir, dir / ("log" + std::to_string(i)));
    ASSERT_EQ(r.exit_code, 0) << r.err;
}
std::string shard_file(int i, int k) {
    return "shard-shard-" + std::to_string(i) + "-of-" + std::to_string(k) + ".json";
}

std::string merge_of(int k, const std::vector<int>& shards, int of) {
    std::string cmd = kRunner + " merge --expect " + std::to_string(k) + " merged.json";
    for (int i : shards) cmd += " " + shard_file(i, of);
    return cmd;
}

// Rewrites line 1 of a journal (its header) with edit applied.
void edit_journal_header(const fs::path& journal, const std::function<void(nlohmann::json&)>& edit) {
    const std::string text = test::slurp(journal);
    const size_t eol = text.find('\n');
    nlohmann::json header = nlohmann::json::parse(text.substr(0, eol));
    edit(header);
    std::ofstream(journal, std::ios::trunc) << header.dump() << text.substr(eol);
}

TEST(Merge, KShardsMergeIntoTheUnshardedReportRowForRow) {
    const auto dir = test::fresh_dir("merge-equal");
    const auto whole = run_command(kSweep + " --json whole.json --csv whole.csv", dir, dir / "whole");
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    for (int i = 1; i <= 3; ++i) run_shard(dir, i, 3);

    // Each shard says what merge needs.
    const nlohmann::json shard2 = nlohmann::json::parse(test::slurp(dir / shard_file(2, 3)));
    EXPECT_EQ(shard2["meta"]["shard"]["index"], 2);
    EXPECT_EQ(shard2["meta"]["shard"]["count"], 3);
    EXPECT_EQ(shard2["meta"]["shard"]["plan_size"], 10);
    EXPECT_EQ(shard2["meta"]["shard"]["plan_sha256"].get<std::string>().size(), 64u);

    const auto merged = run_command(merge_of(3, {3, 1, 2}, 3), dir, dir / "merge");
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    const auto a = read_records_json(dir / "whole.json");
    const auto b = read_records_json(dir / "merged.json");
    ASSERT_EQ(a.size(), 10u);
    ASSERT_EQ(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(b[i].job_id, a[i].job_id);
        EXPECT_EQ(b[i].kernel, a[i].kernel);
        EXPECT_EQ(b[i].shape.m, a[i].shape.m);
        EXPECT_EQ(b[i].shape.n, a[i].shape.n);
        EXPECT_EQ(b[i].shape.k, a[i].shape.k);
        EXPECT_EQ(b[i].dtype, a[i].dtype);
        EXPECT_EQ(b[i].status, a[i].status) << b[i].kernel << " " << b[i].reason;
    }
    // The CSV has the unsharded one's header and one line per row; the meta says where the rows came from.
    const std::string csv = test::slurp(dir / "merged.csv"), whole_csv = test::slurp(dir / "whole.csv");
    EXPECT_EQ(csv.substr(0, csv.find('\n')), whole_csv.substr(0, whole_csv.find('\n')));
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), std::count(whole_csv.begin(), whole_csv.end(), '\n'));
    const nlohmann::json report = nlohmann::json::parse(test::slurp(dir / "merged.json"));
    EXPECT_FALSE(report["meta"].contains("shard"));
    EXPECT_EQ(report["meta"]["merged_from"]["count"], 3);
    ASSERT_EQ(report["meta"]["merged_from"]["shards"].size(), 3u);
    EXPECT_EQ(report["meta"]["merged_from"]["shards"][0]["index"], 1);
    EXPECT_EQ(report["meta"]["progress"]["complete"], true);
    EXPECT_EQ(report["meta"]["progress"]["planned"], 10);
    for (const auto& word : report["meta"]["argv"]) EXPECT_NE(word, "--shard");
    EXPECT_EQ(report["summary"], nlohmann::json::parse(test::slurp(dir / "whole.json"))["summary"]);

    // The merged report is a complete sweep: resuming it is refused as for any complete report.
    const auto resume = run_command(kRunner + " --resume merged.json", dir, dir / "resume");
    EXPECT_EQ(resume.exit_code, 3) << resume.err;

    // It is never overwritten without --force.
    const auto again = run_command(merge_of(3, {1, 2, 3}, 3), dir, dir / "again");
    EXPECT_EQ(again.exit_code, 3) << again.err;
    EXPECT_NE(again.err.find("merged.json exists (--force overwrites it)"), std::string::npos) << again.err;
    const auto forced = run_command(merge_of(3, {1, 2, 3}, 3) + " --force", dir, dir / "forced");
    EXPECT_EQ(forced.exit_code, 0) << forced.err;
}

TEST(Merge, AMissingShardIsNamedWithTheCommandThatRunsItAndThatCommandWorks) {
    const auto dir = test::fresh_dir("merge-missing");
    run_shard(dir, 1, 3);
    run_shard(dir, 3, 3);
    const auto r = run_command(merge_of(3, {1, 3}, 3), dir, dir / "merge");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("shard 2/3 is missing"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "merged.json"));
    const std::string prefix = "  re-run it with: ";
    const size_t at = r.err.find(prefix);
    ASSERT_NE(at, std::string::npos) << r.err;
    const std::string rerun = r.err.substr(at + prefix.size(), r.err.find('\n', at) - at - prefix.size());
    EXPECT_NE(rerun.find("--shard 2/3"), std::string::npos) << rerun;
    EXPECT_EQ(rerun.rfind("cd ", 0), 0u) << rerun;

    // The printed command makes exactly the missing shard; then the merge goes through.
    const auto made = run_command(rerun, dir, dir / "rerun");
    ASSERT_EQ(made.exit_code, 0) << made.err;
    ASSERT_TRUE(fs::exists(dir / shard_file(2, 3))) << made.err;
    const auto merged = run_command(merge_of(3, {1, 2, 3}, 3), dir, dir / "merge2");
    EXPECT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_EQ(read_records_json(dir / "merged.json").size(), 10u);
}

TEST(Merge, AnIncompleteShardIsNamedWithItsResumeCommand) {
    const auto dir = test::fresh_dir("merge-incomplete");
    for (int i = 1; i <= 2; ++i) run_shard(dir, i, 2);
    // Shard 2's runner killed after its third row: the journal keeps its header and three rows.
    const fs::path journal = journal_path_for(dir / shard_file(2, 2));
    const std::string text = test::slurp(journal);
    size_t end = 0;
    for (int line = 0; line < 4; ++line) end = text.find('\n', end) + 1;
    std::ofstream(journal, std::ios::trunc) << text.substr(0, end);

    const auto r = run_command(merge_of(2, {1, 2}, 2), dir, dir / "merge");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(shard_file(2, 2) + ": shard 2/2 is incomplete (3 of 5 rows)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--resume " + (dir / shard_file(2, 2)).string()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "merged.json"));

    const auto resumed = run_command(kRunner + " --resume " + shard_file(2, 2), dir, dir / "resume");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    const auto merged = run_command(merge_of(2, {1, 2}, 2), dir, dir / "merge2");
    EXPECT_EQ(merged.exit_code, 0) << merged.err;
}

TEST(Merge, DuplicatedShardsOtherConfigsAndOtherKregsAreRefused) {
    const auto dir = test::fresh_dir("merge-refusals");
    for (int i = 1; i <= 2; ++i) run_shard(dir, i, 2);

    // The same shard twice (and so shard 2 missing): a mismatch wins, exit 2.
    const auto twice = run_command(
        kRunner + " merge --expect 2 merged.json " + shard_file(1, 2) + " " + shard_file(1, 2), dir, dir / "twice");
    EXPECT_EQ(twice.exit_code, 2) << twice.err;
    EXPECT_NE(twice.err.find("is shard 1/2 again"), std::string::npos) << twice.err;

    // A shard of another K, and a shard of another sweep (other sizes).
    const auto wrong_k = run_command(
        kRunner + " merge --expect 3 merged.json " + shard_file(1, 2) + " " + shard_file(2, 2), dir, dir / "k");
    EXPECT_EQ(wrong_k.exit_code, 2) << wrong_k.err;
    EXPECT_NE(wrong_k.err.find(shard_file(1, 2) + ": is shard 1 of 2, not of --expect 3"), std::string::npos)
        << wrong_k.err;
    fs::create_directories(dir / "other");
    run_shard(dir / "other", 2, 2,
              kRunner + " --kernels cpu_naive,cpu_blocked --sizes 8,9,10,11,13 --repeat 1 --warmup 0");
    const auto other =
        run_command(kRunner + " merge --expect 2 merged.json " + shard_file(1, 2) + " other/" + shard_file(2, 2), dir,
                    dir / "other-log");
    EXPECT_EQ(other.exit_code, 2) << other.err;
    EXPECT_NE(other.err.find("other/" + shard_file(2, 2) + ": comes from another plan than " + shard_file(1, 2)),
              std::string::npos)
        << other.err;

    // A shard made by another kreg version.
    edit_journal_header(journal_path_for(dir / shard_file(2, 2)),
                        [](nlohmann::json& h) { h["meta"]["kreg_version"] = "0.0.1"; });
    const auto version = run_command(merge_of(2, {1, 2}, 2), dir, dir / "version");
    EXPECT_EQ(version.exit_code, 2) << version.err;
    EXPECT_NE(version.err.find(shard_file(2, 2) + ": was made by another kreg than " + shard_file(1, 2) +
                               " (kreg_version 0.0.1 here"),
              std::string::npos)
        << version.err;

    // A report of an unsharded sweep is not a shard; sweep reports and gradebooks do not mix.
    const auto plain = run_command(kSweep + " --json plain.json --csv plain.csv", dir, dir / "plain");
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const auto unsharded = run_command(kRunner + " merge --expect 1 merged.json plain.json", dir, dir / "unsharded");
    EXPECT_EQ(unsharded.exit_code, 2) << unsharded.err;
    EXPECT_NE(unsharded.err.find("plain.json: not a shard's report"), std::string::npos) << unsharded.err;
    EXPECT_FALSE(fs::exists(dir / "merged.json"));
    const auto usage = run_command(kRunner + " merge merged.json plain.json", dir, dir / "usage");
    EXPECT_EQ(usage.exit_code, 2) << usage.err;
}

// ---- Grading ----------------------------------------------------------------------------------------

TEST(MergeGrading, TwoGradingShardsMergeIntoTheUnshardedGradebook) {
    const auto dir = test::fresh_dir("merge-grading");
    fs::create_directories(dir / "subs");
    const fs::path fixtures = KREG_FIXTURE_DIR, plugins = KREG_PLUGIN_DIR;
    fs::copy_file(fixtures / "fixture_good.so", dir / "subs" / "alice.so");
    fs::copy_file(plugins / "cpu_blocked.so", dir / "subs" / "bob.so");
    fs::copy_file(fixtures / "fixture_wrong_result.so", dir / "subs" / "carol.so");
    fs::copy_file(plugins / "cpu_naive.so", dir / "subs" / "dave.so");
    // Correctness only, so that scores do not depend on timing; one hidden case that must stay unnamed.
    std::ofstream(dir / "rubric.json") << R"({"name": "merge", "backend": "cpu",
        "limits": {"load_s": 10, "call_s": 3, "total_s": 60, "build_s": 240},
        "correctness": [{"name": "odd shapes", "points": 80, "shapes": [{"m": 1, "n": 1, "k": 1}, {"m": 17, "n": 33, "k": 9}], "seeds": [1]},
                        {"name": "a mid-size shape", "points": 20, "shapes": [{"square": 32}], "seeds": [3]}]})";
    std::ofstream(dir / "hidden.json") << R"({"correctness": [{"name": "secret ragged", "points": 10,
        "shapes": [{"m": 30, "n": 7, "k": 13}], "seeds": [9]}]})";
    const std::string grade = kRunner + " grade --rubric rubric.json --rubric hidden.json --submissions subs";

    const auto whole = run_command(grade + " --out whole", dir, dir / "whole-log");
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    for (int i = 1; i <= 2; ++i) {
        const auto r = run_command(grade + " --out grades --shard " + std::to_string(i) + "/2", dir,
                                   dir / ("log" + std::to_string(i)));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find("shard " + std::to_string(i) + "/2: 2 of 4 submission(s)"), std::string::npos) << r.err;
    }
    // Sorted by student: shard 1 has alice and carol, shard 2 bob and dave.
    EXPECT_TRUE(fs::exists(dir / "grades/shard-1-of-2/students/alice.json"));
    EXPECT_TRUE(fs::exists(dir / "grades/shard-1-of-2/students/carol.json"));
    EXPECT_TRUE(fs::exists(dir / "grades/shard-2-of-2/students/bob.json"));
    EXPECT_FALSE(fs::exists(dir / "grades/shard-2-of-2/students/alice.json"));

    // Shard 2 alone: shard 1 is missing, with the grade command that makes it.
    const auto lone = run_command(kRunner + " merge --expect 2 grades grades/shard-2-of-2", dir, dir / "lone");
    EXPECT_EQ(lone.exit_code, 3) << lone.err;
    EXPECT_NE(lone.err.find("grading shard 1/2 is missing"), std::string::npos) << lone.err;
    EXPECT_NE(
        lone.err.find(" grade --rubric rubric.json --rubric hidden.json --submissions subs --out grades --shard 1/2"),
        std::string::npos)
        << lone.err;
    // The same shard twice.
    const auto twice =
        run_command(kRunner + " merge --expect 2 grades grades/shard-1-of-2 grades/shard-1-of-2", dir, dir / "twice");
    EXPECT_EQ(twice.exit_code, 2) << twice.err;
    EXPECT_NE(twice.err.find("is grading shard 1/2 again"), std::string::npos) << twice.err;
    // A shard with a student's result gone is incomplete; re-running its command grades only that student.
    fs::rename(dir / "grades/shard-2-of-2/students/dave.json", dir / "dave.json");
    const auto incomplete =
        run_command(kRunner + " merge --expect 2 grades grades/shard-1-of-2 grades/shard-2-of-2", dir, dir / "inc");
    EXPECT_EQ(incomplete.exit_code, 3) << incomplete.err;
    EXPECT_NE(incomplete.err.find("grades/shard-2-of-2: grading shard 2/2 is incomplete (1 of 2 students graded)"),
              std::string::npos)
        << incomplete.err;
    fs::rename(dir / "dave.json", dir / "grades/shard-2-of-2/students/dave.json");

    const auto merged =
        run_command(kRunner + " merge --expect 2 grades grades/shard-2-of-2 grades/shard-1-of-2", dir, dir / "merge");
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    // The same students, scores, statuses and points per check, and the same CSV columns, as the unsharded run
    // (summaries of failed runs quote values of inputs the grader draws afresh for every call, so they differ).
    const auto merged_results = Gradebook(dir / "grades").all(), whole_results = Gradebook(dir / "whole").all();
    ASSERT_EQ(merged_results.size(), 4u);
    ASSERT_EQ(whole_results.size(), merged_results.size());
    for (size_t i = 0; i < merged_results.size(); ++i) {
        const StudentResult &m = merged_results[i], &w = whole_results[i];
        EXPECT_EQ(m.student, w.student);
        EXPECT_EQ(m.score, w.score) << m.student;
        EXPECT_EQ(m.max_score, w.max_score) << m.student;
        EXPECT_EQ(m.status, w.status) << m.student;
        ASSERT_EQ(m.checks.size(), w.checks.size()) << m.student;
        for (size_t c = 0; c < m.checks.size(); ++c) {
            EXPECT_EQ(m.checks[c].name, w.checks[c].name) << m.student;
            EXPECT_EQ(m.checks[c].points, w.checks[c].points) << m.student << " " << m.checks[c].name;
        }
    }
    EXPECT_EQ(merged_results[2].student, "carol");
    EXPECT_EQ(merged_results[2].status, "wrong_result");
    const std::string csv = test::slurp(dir / "grades/gradebook.csv"),
                      whole_csv = test::slurp(dir / "whole/gradebook.csv");
    EXPECT_EQ(csv.substr(0, csv.find('\n')), whole_csv.substr(0, whole_csv.find('\n')));
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), std::count(whole_csv.begin(), whole_csv.end(), '\n'));
    EXPECT_NE(csv.find("\nbob,110,110,graded,"), std::string::npos) << csv;
    for (const char* student : {"alice", "bob", "carol", "dave"}) {
        const fs::path view = dir / "grades/student-view" / (std::string(student) + ".json");
        ASSERT_TRUE(fs::exists(view)) << view;
        EXPECT_TRUE(fs::exists(dir / "grades/students" / (std::string(student) + ".json")));
        for (const fs::path& file : {view, dir / "grades/gradebook.csv"})
            for (const char* secret : {"secret ragged", "30x7x13", "hidden.json"})
                EXPECT_EQ(test::slurp(file).find(secret), std::string::npos) << file << " names '" << secret << "'";
    }
    EXPECT_TRUE(fs::exists(dir / "grades/gradebook-merge.json"));
    const auto again =
        run_command(kRunner + " merge --expect 2 grades grades/shard-1-of-2 grades/shard-2-of-2", dir, dir / "again");
    EXPECT_EQ(again.exit_code, 3) << again.err;
    EXPECT_NE(again.err.find("gradebook.csv exists"), std::string::npos) << again.err;
}

}  // namespace
}  // namespace kreg
