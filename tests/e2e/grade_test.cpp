// One `runner grade` run over the misbehaving corpus plus honest submissions: every bad one gets the
// right status, every honest one is scored, and a killed run resumes without loss or duplication.
#include "as_nobody.hpp"
#include "grade/gradebook.hpp"
#include "grade/grader.hpp"
#include "run_command.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const fs::path kFixtures = KREG_FIXTURE_DIR;
const std::string kRubric = std::string(KREG_TEST_DATA_DIR) + "/grading/corpus-rubric.json";

// student -> expected status
const std::map<std::string, std::pair<std::string, std::string>> kCorpus = {
    // student                        fixture file                     expected status
    {"alice", {"fixture_good.so", "graded"}},
    {"bob", {"@cpu_blocked.so", "graded"}},
    {"crasher", {"fixture_crash_in_run.so", "crashed"}},
    {"aborter", {"fixture_abort_in_run.so", "aborted"}},
    {"exiter", {"fixture_exit_in_run.so", "exited"}},
    {"thrower", {"fixture_throw_in_run.so", "failed"}},
    {"hanger", {"fixture_hang_in_run.so", "timeout"}},
    {"wrong", {"fixture_wrong_result.so", "wrong_result"}},
    {"lastrow", {"fixture_skips_last_row.so", "wrong_result"}},
    {"refuses", {"fixture_create_throws.so", "failed"}},
    {"createcrash", {"fixture_crash_in_create.so", "crashed"}},
    // One row past C lands on the guard page after it: the worker dies at the write.
    {"overrun", {"fixture_writes_past_c.so", "crashed"}},
    {"loadcrash", {"fixture_crash_at_load.so", "crashed"}},
    {"loadexit", {"fixture_exit_at_load.so", "exited"}},
    {"oldabi", {"fixture_wrong_abi.so", "load_failed"}},
    {"noentry", {"fixture_no_entry.so", "load_failed"}},
    {"textfile", {"not_elf.so", "rejected_audit"}},
    {"socket", {"cheat_socket.so", "rejected_audit"}},
    {"forker", {"cheat_fork.so", "rejected_audit"}},
    {"execer", {"cheat_exec.so", "rejected_audit"}},
    {"dlopener", {"cheat_dlopen.so", "rejected_audit"}},
    {"syscaller", {"cheat_syscall.so", "rejected_audit"}},
    {"cacher", {"cheat_caches.so", "wrong_result"}},
    {"scribbler", {"cheat_modifies_input.so", "failed"}},
    {"lazy", {"cheat_never_writes.so", "wrong_result"}},
    {"constant", {"cheat_constant.so", "wrong_result"}},
    {"halfdone", {"cheat_partial.so", "wrong_result"}},
    {"nthcall", {"cheat_nth_call.so", "wrong_result"}},
    {"background", {"cheat_thread_after_return.so", "wrong_result"}},
    // Correct in every correctness run; wrong from the fourth call in a row with one shape, i.e. on the
    // performance run's timed calls. Keeps its correctness points, loses the tier.
    {"benchmarked", {"cheat_when_benchmarked.so", "wrong_result"}},
    // Harness-state dependence (tests/fixtures/harness_state): C += A*B reading the harness's NaN as 0, far
    // writes past C, inputs used as scratch. Each must fail in grading, not only in sweeps.
    {"nan_as_zero", {"state_nan_as_zero.so", "wrong_result"}},
    {"poison_word", {"state_poison_word_as_zero.so", "wrong_result"}},
    {"large_or_nan", {"state_large_or_nan_as_zero.so", "wrong_result"}},
    {"far_1mib", {"state_write_1mib_past_c.so", "crashed"}},
    {"far_60mib", {"state_write_60mib_past_c.so", "crashed"}},
    {"clobbers_b", {"state_clobbers_b.so", "failed"}},
};

fs::path make_submissions(const fs::path& dir) {
    const fs::path subs = dir / "subs";
    fs::create_directories(subs);
    for (const auto& [student, entry] : kCorpus) {
        const std::string& file = entry.first;
        const fs::path from = file[0] == '@' ? fs::path(KREG_PLUGIN_DIR) / file.substr(1) : kFixtures / file;
        fs::copy_file(from, subs / (student + ".so"));
    }
    // A source folder built against the SDK (the student template), and one that does not compile.
    fs::copy(fs::path(KREG_SOURCE_DIR) / "plugins" / "template", subs / "carol", fs::copy_options::recursive);
    fs::copy(fs::path(KREG_SOURCE_DIR) / "plugins" / "template", subs / "dave", fs::copy_options::recursive);
    std::ofstream(subs / "dave" / "my_gemm.cpp", std::ios::app) << "\nthis is not C++;\n";
    return subs;
}

std::map<std::string, StudentResult> results(const fs::path& out) {
    std::map<std::string, StudentResult> by_student;
    for (const auto& r : Gradebook(out).all()) by_student[r.student] = r;
    return by_student;
}

TEST(Grade, CorpusAndHonestSubmissionsInOneRunThenResume) {
    const auto dir = test::fresh_dir("grade");
    make_submissions(dir);
    const std::string cmd = kRunner + " grade --rubric " + kRubric + " --submissions subs --out out";
    const auto run = test::run_command(cmd, dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;

    auto graded = results(dir / "out");
    ASSERT_EQ(graded.size(), kCorpus.size() + 2) << run.err;
    for (const auto& [student, entry] : kCorpus) {
        const StudentResult& r = graded[student];
        EXPECT_EQ(r.status, entry.second) << student << ": " << r.summary;
        if (entry.second == "graded" || student == "benchmarked") {
            EXPECT_GE(r.score, 80) << student << ": " << r.summary;  // every correctness point
        } else {
            EXPECT_EQ(r.score, 0) << student << ": " << r.summary;
        }
        EXPECT_EQ(r.max_score, 100) << student;
    }
    EXPECT_EQ(graded["carol"].status, "graded") << graded["carol"].summary;
    EXPECT_GE(graded["carol"].score, 80) << graded["carol"].summary;
    EXPECT_EQ(graded["dave"].status, "build_failed") << graded["dave"].summary;
    // Evidence: the crash names its signal; the audit names the symbol; the sandbox says what applied.
    EXPECT_NE(graded["crasher"].summary.find("SIGSEGV"), std::string::npos) << graded["crasher"].summary;
    EXPECT_NE(graded["socket"].summary.find("socket"), std::string::npos) << graded["socket"].summary;
    EXPECT_TRUE(graded["alice"].sandbox.contains("applied")) << graded["alice"].sandbox.dump();
    // Correctness verdicts come from the grader's own check of every call's exported output.
    int trusted_runs = 0;
    for (const auto& check : graded["alice"].checks)
        if (check.kind == "correctness")
            for (const auto& run : check.evidence) {
                EXPECT_EQ(run["trusted_check"]["calls_checked"], 3) << run.dump();
                EXPECT_EQ(run["trusted_check"]["passed"], true) << run.dump();
                ++trusted_runs;
            }
    EXPECT_EQ(trusted_runs, 5);  // 2 shapes x 2 seeds + 1 shape x 1 seed
    // So do the performance runs': every call of the timed run (checked, 1 warm-up, 3 timed) was checked.
    for (const auto& check : graded["alice"].checks)
        if (check.kind == "performance") {
            const auto& mine = check.evidence["submission"];
            EXPECT_EQ(mine["trusted_check"]["calls_checked"], 5) << mine.dump();
            EXPECT_EQ(mine["anticheat"]["calls_verified"], 0) << "the worker computes no reference: " << mine.dump();
            // The tier is measured in paired rounds (at least the rubric's default 3), each with both
            // sides' medians, and its ratio comes with the interval that decided it.
            ASSERT_GE(check.evidence["rounds"].size(), 3u) << check.evidence.dump();
            for (const auto& round : check.evidence["rounds"]) {
                EXPECT_GT(round["submission_ms"].get<double>(), 0) << round.dump();
                EXPECT_GT(round["reference_ms"].get<double>(), 0) << round.dump();
            }
            const double ratio = check.evidence["ratio"].get<double>();
            EXPECT_LE(check.evidence["ratio_interval"]["low"].get<double>(), ratio) << check.evidence.dump();
            EXPECT_GE(check.evidence["ratio_interval"]["high"].get<double>(), ratio) << check.evidence.dump();
            EXPECT_TRUE(check.evidence.contains("decision")) << check.evidence.dump();
        }
    // The cheat that changes when benchmarked: its timed outputs fail the grader's check, so the tier
    // earns nothing, and the evidence names the call.
    EXPECT_EQ(graded["benchmarked"].score, 80) << graded["benchmarked"].summary;
    EXPECT_NE(graded["benchmarked"].summary.find("wrong_result: timed call 2: error"), std::string::npos)
        << graded["benchmarked"].summary;

    // The gradebook has one row per student.
    const std::string csv = test::slurp(dir / "out" / "gradebook.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), long(kCorpus.size() + 3)) << csv;

    // A second run grades nobody again and changes nothing.
    const auto again = test::run_command(cmd, dir, dir);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(std::count(again.err.begin(), again.err.end(), '\n') > 0, true);
    EXPECT_NE(again.err.find("already graded"), std::string::npos) << again.err;
    EXPECT_EQ(test::slurp(dir / "out" / "gradebook.csv"), csv);
}

// The unconfined self-check (grade/self_check.hpp; on Windows the only grading `runner grade` does) checks every call
// inside the worker instead of outside it. Here on Linux through the same Grader option (no sandbox: the project's
// own fixtures), over what only a real check catches: one wrong element, C += A*B reading the harness's NaN fill or
// its poison word as 0 (C's fill varies per call), and a crash, beside an honest plugin.
TEST(Grade, AnUnconfinedSelfCheckChecksEveryCallInsideTheWorker) {
    const auto dir = test::fresh_dir("grade-self-check");
    GradeOptions go;
    go.rubric = load_rubric(kRubric);
    go.out_dir = dir / "out";
    go.runner_exe = kRunner;
    go.reference_plugins = {fs::path(KREG_PLUGIN_DIR) / "cpu_naive.so"};
    go.unconfined_self_check = true;
    Grader grader(go);
    const std::map<std::string, std::string> expected = {{"fixture_good.so", "graded"},
                                                         {"fixture_wrong_result.so", "wrong_result"},
                                                         {"state_nan_as_zero.so", "wrong_result"},
                                                         {"state_poison_word_as_zero.so", "wrong_result"},
                                                         {"fixture_crash_in_run.so", "crashed"}};
    for (const auto& [file, status] : expected) {
        const StudentResult r = grader.grade(Submission{fs::path(file).stem().string(), kFixtures / file, false});
        EXPECT_EQ(r.status, status) << file << ": " << r.summary;
        ASSERT_TRUE(r.unconfined_self_check) << file;
        EXPECT_FALSE(r.unconfined_self_check->not_applied.empty());
        EXPECT_TRUE(r.sandbox.is_null()) << file << ": " << r.sandbox.dump();  // nothing confined it
        if (status == "graded") {
            EXPECT_GE(r.score, 80) << r.summary;  // every correctness point
        } else {
            EXPECT_EQ(r.score, 0) << file << ": " << r.summary;
        }
        for (const CheckResult& check : r.checks) {
            if (check.kind == "audit") EXPECT_TRUE(check.passed) << check.summary;  // an ELF .so is still audited
            if (check.kind != "correctness") continue;
            for (const auto& run : check.evidence) {
                EXPECT_FALSE(run.contains("trusted_check")) << "nothing outside the worker checked it: " << run.dump();
                EXPECT_NE(run.value("checked", std::string()).find("inside the worker"), std::string::npos)
                    << run.dump();
                // Every call the worker made was verified by it against the reference (strict: checked + 2 timed).
                if (status == "graded")
                    EXPECT_EQ(run.value("anticheat", nlohmann::json::object()).value("calls_verified", -1), 3)
                        << run.dump();
            }
        }
    }
}

// A failure of the grader's own is never the student's outcome: a worker it could not start (here a stand-in
// runner that starts the first `allowed` workers and then exits before its hello, as a reaper that never
// started its program or a scratch folder that could not be made would leave it) ran none of the student's
// code, and a trusted reference it could not measure says nothing of the submission. Both make the result an
// `error`, which the next run grades again, instead of `exited`, `failed` or a lost tier kept as a grade.
fs::path runner_that_starts_only(const fs::path& dir, int allowed) {
    const fs::path script = dir / ("runner-" + std::to_string(allowed) + ".sh");
    std::ofstream(script) << "#!/bin/sh\nn=$(cat \"$0.count\" 2>/dev/null || echo 0)\necho $((n + 1)) > \"$0.count\"\n"
                          << "[ \"$n\" -ge " << allowed << " ] && exit 3\nexec " << kRunner << " \"$@\"\n";
    fs::permissions(script, fs::perms::owner_all);
    return script;
}

TEST(Grade, AWorkerItCouldNotStartOrAReferenceItCouldNotMeasureIsTheGradersErrorNotTheStudents) {
    const auto dir = test::fresh_dir("grade-own-errors");
    auto options = [&](const fs::path& runner, const std::string& name) {
        GradeOptions go;
        go.rubric = load_rubric(kRubric);
        go.out_dir = dir / name;
        go.runner_exe = runner.string();
        go.reference_plugins = {fs::path(KREG_PLUGIN_DIR) / "cpu_naive.so"};
        go.unconfined_self_check = true;  // the worker is exec'd as given, so the stand-in runner is what starts
        return go;
    };
    const Submission good{"alice", kFixtures / "fixture_good.so", false};
    // The reference's description starts the one worker allowed: the submission's own cannot start.
    {
        Grader grader(options(runner_that_starts_only(dir, 1), "at-load"));
        const StudentResult r = grader.grade(good);
        EXPECT_EQ(r.status, "error") << r.summary;
        EXPECT_NE(r.summary.find("worker did not start"), std::string::npos) << r.summary;
    }
    // Loaded and described, then no worker for its first correctness case.
    {
        Grader grader(options(runner_that_starts_only(dir, 2), "at-a-case"));
        const StudentResult r = grader.grade(good);
        EXPECT_EQ(r.status, "error") << r.summary;
        EXPECT_NE(r.summary.find("worker did not start"), std::string::npos) << r.summary;
    }
    // Every worker starts; the tier's trusted reference crashes at the tier's shape.
    {
        GradeOptions go = options(kRunner, "reference");
        std::string rubric = test::slurp(kRubric);
        const std::string from = R"("reference": "cpu_naive")";
        ASSERT_NE(rubric.find(from), std::string::npos);
        rubric.replace(rubric.find(from), from.size(), R"("reference": "fixture_crash_in_run")");
        std::ofstream(dir / "crashing-reference.json") << rubric;
        go.rubric = load_rubric(dir / "crashing-reference.json");
        go.reference_plugins = {kFixtures / "fixture_crash_in_run.so"};
        Grader grader(go);
        const StudentResult r = grader.grade(good);
        EXPECT_EQ(r.status, "error") << r.summary;
        bool told = false;
        for (const CheckResult& c : r.checks)
            told = told || (c.kind == "performance" && c.summary.find("could not be measured") != std::string::npos);
        EXPECT_TRUE(told) << r.summary;
    }
    // The same grader with the real runner and its own reference: graded.
    Grader honest(options(kRunner, "honest"));
    EXPECT_EQ(honest.grade(good).status, "graded");
}

// The same two failures of the grader's own through `runner grade`, confined, as the invoker and as nobody: a
// rubric whose load limit no worker's hello can meet (a staff mistake: no plugin code runs before the hello),
// and a tier whose trusted reference (from --plugin-dir) crashes. Each student is an `error` and the run exits 1.
void grade_own_errors(const test::RunAs& who) {
    const auto dir = test::fresh_dir(std::string("grade-own-errors-cli-") + who.name());
    fs::create_directories(dir / "subs");
    fs::create_directories(dir / "refs");
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "alice.so");
    fs::copy_file(kFixtures / "fixture_crash_in_run.so", dir / "refs" / "fixture_crash_in_run.so");
    const std::string rubric = test::slurp(kRubric);
    auto write_with = [&](const std::string& from, const std::string& to, const char* file) {
        std::string changed = rubric;
        ASSERT_NE(changed.find(from), std::string::npos) << from;
        changed.replace(changed.find(from), from.size(), to);
        std::ofstream(dir / file) << changed;
    };
    write_with(R"("load_s": 10)", R"("load_s": 0.0001)", "no-hello.json");
    write_with(R"("reference": "cpu_naive")", R"("reference": "fixture_crash_in_run")", "crashing-reference.json");
    if (who.nobody) test::give_to_nobody(dir);
    const std::pair<const char*, const char*> runs[] = {{"no-hello.json", "worker did not start"},
                                                        {"crashing-reference.json", "could not be measured"}};
    for (const auto& [file, says] : runs) {
        const std::string out = std::string("out-") + file;
        std::string command =
            who.prefix(dir) + kRunner + " grade --rubric " + file + " --submissions subs --out " + out;
        if (std::string(file) == "crashing-reference.json") command += " --plugin-dir refs";
        const auto run = test::run_command(command, dir, dir);
        EXPECT_EQ(run.exit_code, 1) << file << ": " << run.err;
        const auto graded = Gradebook(dir / out).all();
        ASSERT_EQ(graded.size(), 1u) << file << ": " << run.err;
        EXPECT_EQ(graded[0].status, "error") << file << ": " << graded[0].summary;
        bool told = graded[0].summary.find(says) != std::string::npos;
        for (const CheckResult& c : graded[0].checks) told = told || c.summary.find(says) != std::string::npos;
        EXPECT_TRUE(told) << file << " should say '" << says << "': " << graded[0].summary;
        if (who.nobody) EXPECT_EQ(test::owner_uid(dir / out / "gradebook.csv"), long(test::kNobodyUid));
    }
}

TEST(Grade, ItsOwnFailuresAreErrorsThroughTheCommandLine) { grade_own_errors(test::RunAs{false}); }

TEST(Grade, ItsOwnFailuresAreErrorsThroughTheCommandLineAsAnUnprivilegedUser) {
    if (auto why = test::why_cannot_run_as_nobody(kRunner)) GTEST_SKIP() << *why;
    grade_own_errors(test::RunAs{true});
}

TEST(Grade, CommandLineProblemsAreClearAndExitWithTwo) {
    const auto dir = test::fresh_dir("grade-cli");
    const auto help = test::run_command(kRunner + " grade --help", dir, dir);
    EXPECT_EQ(help.exit_code, 0) << help.err;
    EXPECT_NE(help.out.find("--allow-static-libstdcxx"), std::string::npos) << help.out;
    const auto none = test::run_command(kRunner + " grade --rubric " + kRubric, dir, dir);
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("--submission"), std::string::npos) << none.err;
    std::ofstream(dir / "bad.json") << R"({"name": "x", "correctness": [{"name": "a", "point": 1}]})";
    const auto bad = test::run_command(kRunner + " grade --rubric bad.json --submission x.so", dir, dir);
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("/correctness/0/point"), std::string::npos) << bad.err;
}

TEST(Grade, RunnerHelpListsTheGradeSubcommandAndGradeHelpItsExitStatus) {
    const auto dir = test::fresh_dir("grade-help");
    const auto help = test::run_command(kRunner + " --help", dir, dir);
    EXPECT_EQ(help.exit_code, 0) << help.err;
    EXPECT_NE(help.out.find("runner grade --rubric"), std::string::npos) << help.out;
    const auto grade_help = test::run_command(kRunner + " grade --help", dir, dir);
    EXPECT_NE(grade_help.out.find("--fail-under"), std::string::npos) << grade_help.out;
    EXPECT_NE(grade_help.out.find("Exit status: 0"), std::string::npos) << grade_help.out;
}

TEST(Grade, OneSubmissionListsEveryCheckAndFailUnderExitsWithFour) {
    const auto dir = test::fresh_dir("grade-one");
    fs::create_directories(dir / "subs");
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "solo.so");
    const std::string grade = kRunner + " grade --rubric " + kRubric + " --submission subs/solo.so --out out";
    const auto below = test::run_command(grade + " --fail-under 101", dir, dir);
    EXPECT_EQ(below.exit_code, 4) << below.err;
    EXPECT_NE(below.err.find("--fail-under 101"), std::string::npos) << below.err;
    ASSERT_EQ(results(dir / "out").at("solo").status, "graded");
    // Every check, with its verdict, after the summary table.
    const StudentResult solo = results(dir / "out").at("solo");
    ASSERT_FALSE(solo.checks.empty());
    const std::size_t listing = below.out.find("checks of solo:");
    ASSERT_NE(listing, std::string::npos) << below.out;
    EXPECT_GT(listing, below.out.find("mean score")) << below.out;
    for (const auto& check : solo.checks)
        EXPECT_NE(below.out.find(check.kind + "  ", listing), std::string::npos) << check.kind << "\n" << below.out;
    EXPECT_NE(below.out.find("yes", listing), std::string::npos) << below.out;
    // The same result, already graded, with the bar at its score: 0.
    const auto met = test::run_command(grade + " --fail-under " + format_points(solo.score), dir, dir);
    EXPECT_EQ(met.exit_code, 0) << met.err;
}

TEST(Grade, AResultThatCannotBeRecordedIsAnErrorAndTheRunGoesOn) {
    const auto dir = test::fresh_dir("grade-unrecordable");
    fs::create_directories(dir / "subs");
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "a_blocked.so");
    fs::copy_file(kFixtures / "fixture_good.so", dir / "subs" / "b_next.so");
    // A folder where a_blocked's result file goes: its result cannot be renamed into place.
    fs::create_directories(dir / "out" / "students" / "a_blocked.json");
    const auto run =
        test::run_command(kRunner + " grade --rubric " + kRubric + " --submissions subs --out out", dir, dir);
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("a_blocked: error"), std::string::npos) << run.err;
    const auto graded = results(dir / "out");
    ASSERT_EQ(graded.count("b_next"), 1u) << run.err;
    EXPECT_EQ(graded.at("b_next").status, "graded") << graded.at("b_next").summary;
}

TEST(Grade, AsRootASdkTheSandboxUidCannotReadIsAClearBuildFailure) {
    if (::geteuid() != 0) GTEST_SKIP() << "only as root does a build run as another uid";
    // kreg installed under a folder only root may enter: the build, as uid 61000, could not read it.
    const auto dir = test::fresh_dir("grade-private-sdk");
    const fs::path prefix = dir / "private" / "kreg";
    const auto install =
        test::run_command("cmake --install " + std::string(KREG_BINARY_DIR) + " --prefix " + prefix.string(), dir, dir);
    ASSERT_EQ(install.exit_code, 0) << install.err;
    fs::permissions(dir / "private", fs::perms::owner_all);
    fs::create_directories(dir / "subs");
    fs::copy(fs::path(KREG_SOURCE_DIR) / "plugins" / "template", dir / "subs" / "carol", fs::copy_options::recursive);
    const auto run = test::run_command(
        (prefix / "bin" / "runner").string() + " grade --rubric " + kRubric + " --submissions subs --out out", dir,
        dir);
    const auto graded = results(dir / "out");
    ASSERT_EQ(graded.count("carol"), 1u) << run.err;
    EXPECT_EQ(graded.at("carol").status, "build_failed");
    EXPECT_NE(graded.at("carol").summary.find("cannot read the kreg SDK: " + (dir / "private").string() +
                                              " (others may not enter it)"),
              std::string::npos)
        << graded.at("carol").summary;
    // The console says it whole too, down to what to do about it (issue 22: it was cut mid-sentence there).
    EXPECT_NE(run.err.find("carol: build_failed"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("(others may not enter it) (install kreg where any user can read it, e.g. under /usr or "
                           "/opt)"),
              std::string::npos)
        << run.err;
}

TEST(Grade, AKilledRunResumesWithoutLossOrDuplication) {
    const auto dir = test::fresh_dir("grade-resume");
    const fs::path subs = dir / "subs";
    fs::create_directories(subs);
    for (const char* s : {"a1", "a2", "a3"})
        fs::copy_file(kFixtures / "fixture_good.so", subs / (std::string(s) + ".so"));
    fs::copy_file(kFixtures / "fixture_hang_in_run.so", subs / "b_hangs.so");
    for (const char* s : {"c1", "c2"}) fs::copy_file(kFixtures / "fixture_good.so", subs / (std::string(s) + ".so"));
    const std::string grade = kRunner + " grade --rubric " + kRubric + " --submissions subs --out out";
    // Kill the grader while it waits on the hanging submission (after a1..a3 are recorded).
    test::run_command(grade +
                          " & pid=$!; for i in $(seq 1 300); do sleep 0.1; "
                          "[ -f out/students/a3.json ] && break; done; sleep 0.5; kill -9 $pid; wait $pid; true",
                      dir, dir);
    auto partial = results(dir / "out");
    EXPECT_EQ(partial.count("a3"), 1u);
    EXPECT_EQ(partial.count("c2"), 0u);
    const auto resumed = test::run_command(grade, dir, dir);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("a1: already graded"), std::string::npos) << resumed.err;
    auto all = results(dir / "out");
    ASSERT_EQ(all.size(), 6u);
    EXPECT_EQ(all["b_hangs"].status, "timeout");
    for (const char* s : {"a1", "a2", "a3", "c1", "c2"})
        EXPECT_EQ(all[s].status, "graded") << s << ": " << all[s].summary;
    const std::string csv = test::slurp(dir / "out" / "gradebook.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7) << csv;
}

TEST(Grade, DevicesOptionIsCheckedBeforeAnythingRuns) {
    const auto dir = test::fresh_dir("grade-devices-cli");
    const std::string cmd = kRunner + " grade --rubric " + kRubric + " --submission nothing.so --out out";
    for (const auto& [args, says] :
         std::vector<std::pair<std::string, std::string>>{{"--devices x", "--devices"},
                                                          {"--devices all --shard 1/2", "--shard"},
                                                          {"--devices 0 --device 0", "--device"},
                                                          {"--devices 0,0", "named twice"}}) {
        const auto r = test::run_command(cmd + " " + args, dir, dir);
        EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir / "out")) << args;
    }
}

}  // namespace
}  // namespace kreg
