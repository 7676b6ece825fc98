// The real runner.exe of the cross build under Windows (run here under wine64), driven as a user drives it: its
// listing of .dll plugins, a CPU sweep writing the JSON and CSV reports, a crashing and a hanging .dll becoming
// rows while the sweep goes on, --resume of a sweep whose journal lost its last rows, runner compare, runner merge
// of two shards, runner grade refusing to grade others' submissions with the reason, and a student's unconfined
// self-check of their own .dll (grade/self_check.hpp): the template graded with its points, a wrong, a crashing and a
// hanging .dll each ending as its status with its result written, every result marked unconfined.
#include "platform/child_process.hpp"
#include "platform/host.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

namespace {

using namespace kreg;
namespace fs = std::filesystem;

const fs::path& bin_dir() {
    static const fs::path dir = platform::executable_path().parent_path();
    return dir;
}
fs::path runner() { return bin_dir() / "runner.exe"; }
fs::path fixture(const std::string& name) { return bin_dir() / "fixtures" / ("fixture_" + name + ".dll"); }
fs::path plugin_dir() { return bin_dir().parent_path() / "lib" / "kreg" / "plugins"; }

// A fresh folder for one test's files, in the build tree.
fs::path scratch(const std::string& name) {
    const fs::path dir = bin_dir() / "runner_test" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

struct RunnerRun {
    int status = -1;
    std::string out;  // stdout, every line
    std::string err;  // the last of stderr
};

// runner.exe with args, to its end (at most timeout_s; a runner still running then is a failure).
RunnerRun run(const std::vector<std::string>& args, double timeout_s = 120) {
    platform::ChildProcess child = platform::ChildProcess::start(runner(), args);
    RunnerRun r;
    std::string line;
    for (;;) {
        const platform::ChildProcess::Read read = child.read_line(line, timeout_s);
        if (read == platform::ChildProcess::Read::line) {
            r.out += line + "\n";
            continue;
        }
        if (read == platform::ChildProcess::Read::timed_out) {
            child.kill_tree();
            ADD_FAILURE() << "runner " << args.front() << "... still ran after " << timeout_s << " s";
        }
        break;
    }
    const platform::ChildExit end = child.wait();
    r.status = end.exit_code.value_or(-1);
    r.err = child.stderr_tail();
    return r;
}

std::string said(const RunnerRun& r) {
    return "exit " + std::to_string(r.status) + "\nstdout:\n" + r.out + "stderr:\n" + r.err;
}

nlohmann::json read_json(const fs::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

// The rows of a JSON report by kernel name: their status.
std::map<std::string, std::string> statuses(const nlohmann::json& report) {
    std::map<std::string, std::string> out;
    for (const nlohmann::json& row : report.at("records")) out[row.at("kernel").get<std::string>()] = row.at("status");
    return out;
}

// A small CPU sweep's arguments: the in-tree plugins' folder only, two kernels, one small size.
std::vector<std::string> cpu_sweep(const fs::path& json, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {
        "--plugin-dir", plugin_dir().string(), "--kernels", "cpu_naive,cpu_blocked", "--sizes", "64", "--repeat", "3",
        "--json",       json.string()};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

TEST(WindowsRunner, ListsTheDllPlugins) {
    const RunnerRun r = run({"--list", "--plugin-dir", plugin_dir().string(), "--format", "json"});
    ASSERT_EQ(r.status, 0) << said(r);
    const nlohmann::json listed = nlohmann::json::parse(r.out);
    std::map<std::string, std::string> plugin_of;
    for (const nlohmann::json& k : listed.at("kernels"))
        plugin_of[k.at("name").get<std::string>()] = k.value("plugin_path", std::string());
    ASSERT_TRUE(plugin_of.count("cpu_naive")) << r.out;
    ASSERT_TRUE(plugin_of.count("cpu_blocked")) << r.out;
    EXPECT_EQ(fs::path(plugin_of["cpu_naive"]).extension(), ".dll") << r.out;
}

TEST(WindowsRunner, ACpuSweepWritesItsJsonAndCsvReports) {
    const fs::path dir = scratch("sweep");
    const RunnerRun r = run(cpu_sweep(dir / "sweep.json", {"--csv", (dir / "sweep.csv").string()}));
    ASSERT_EQ(r.status, 0) << said(r);
    const nlohmann::json report = read_json(dir / "sweep.json");
    const auto rows = statuses(report);
    EXPECT_EQ(rows.at("cpu_naive"), "ok") << report.dump(1);
    EXPECT_EQ(rows.at("cpu_blocked"), "ok") << report.dump(1);
    std::ifstream csv(dir / "sweep.csv");
    std::stringstream text;
    text << csv.rdbuf();
    EXPECT_NE(text.str().find("cpu_naive"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("cpu_blocked"), std::string::npos) << text.str();
}

TEST(WindowsRunner, ACrashingAndAHangingDllBecomeRowsAndTheSweepGoesOn) {
    const fs::path dir = scratch("misbehaving");
    const RunnerRun r = run({"--plugin", fixture("crash_in_run").string(), "--plugin", fixture("hang_in_run").string(),
                             "--plugin", (plugin_dir() / "cpu_naive.dll").string(), "--kernels",
                             "fixture_crash_in_run,fixture_hang_in_run,cpu_naive", "--sizes", "32", "--repeat", "2",
                             "--timeout", "5", "--json", (dir / "rows.json").string()});
    EXPECT_EQ(r.status, 1) << said(r);  // some row crashed or timed out
    const nlohmann::json report = read_json(dir / "rows.json");
    const auto rows = statuses(report);
    EXPECT_EQ(rows.at("fixture_crash_in_run"), "crashed") << report.dump(1);
    EXPECT_EQ(rows.at("fixture_hang_in_run"), "timeout") << report.dump(1);
    EXPECT_EQ(rows.at("cpu_naive"), "ok") << report.dump(1);
    for (const nlohmann::json& row : report.at("records"))
        if (row.at("kernel") == "fixture_crash_in_run")
            EXPECT_NE(row.value("reason", std::string()).find("EXCEPTION_ACCESS_VIOLATION"), std::string::npos)
                << row.dump(1);
}

TEST(WindowsRunner, ResumeRunsOnlyTheRowsTheJournalLacks) {
    const fs::path dir = scratch("resume");
    const fs::path json = dir / "sweep.json";
    ASSERT_EQ(run(cpu_sweep(json)).status, 0);
    // The sweep "died" after its first row: the journal keeps its header and that row, the report is gone.
    const fs::path journal = dir / "sweep.journal.jsonl";
    ASSERT_TRUE(fs::exists(journal));
    std::ifstream in(journal, std::ios::binary);
    std::string header, first_row;
    std::getline(in, header);
    std::getline(in, first_row);
    in.close();
    const nlohmann::json kept = nlohmann::json::parse(first_row).at("record");
    std::ofstream(journal, std::ios::binary | std::ios::trunc) << header << "\n" << first_row << "\n";
    fs::remove(json);
    const RunnerRun resumed = run({"--resume", json.string()});
    ASSERT_EQ(resumed.status, 0) << said(resumed);
    const nlohmann::json report = read_json(json);
    const auto rows = statuses(report);
    EXPECT_EQ(rows.size(), 2u) << report.dump(1);
    EXPECT_EQ(rows.at("cpu_naive"), "ok");
    EXPECT_EQ(rows.at("cpu_blocked"), "ok");
    // The journal's row is taken as it was (its samples are the first run's); only the other one ran again.
    for (const nlohmann::json& row : report.at("records"))
        if (row.at("kernel") == kept.at("kernel")) EXPECT_EQ(row.at("samples_ms"), kept.at("samples_ms"));
    const RunnerRun again = run({"--resume", json.string()});
    EXPECT_NE(again.err.find("nothing to resume"), std::string::npos) << said(again);
}

TEST(WindowsRunner, CompareReadsTwoReports) {
    const fs::path dir = scratch("compare");
    ASSERT_EQ(run(cpu_sweep(dir / "a.json")).status, 0);
    ASSERT_EQ(run(cpu_sweep(dir / "b.json")).status, 0);
    const RunnerRun same = run({"compare", (dir / "a.json").string(), (dir / "a.json").string()});
    EXPECT_EQ(same.status, 0) << said(same);
    EXPECT_NE(same.out.find("cpu_naive"), std::string::npos) << said(same);
    const RunnerRun missing = run({"compare", (dir / "a.json").string(), (dir / "nothing.json").string()});
    EXPECT_EQ(missing.status, 2) << said(missing);
}

TEST(WindowsRunner, MergePutsTwoShardsBackTogether) {
    const fs::path dir = scratch("merge");
    // As a Slurm array names them: {shard} becomes shard-I-of-K.
    ASSERT_EQ(run(cpu_sweep(dir / "part-{shard}.json", {"--shard", "1/2"})).status, 0);
    ASSERT_EQ(run(cpu_sweep(dir / "part-{shard}.json", {"--shard", "2/2"})).status, 0);
    const fs::path first = dir / "part-shard-1-of-2.json", second = dir / "part-shard-2-of-2.json";
    EXPECT_EQ(statuses(read_json(first)).size(), 1u);
    const RunnerRun missing = run({"merge", "--expect", "2", (dir / "half.json").string(), first.string()});
    EXPECT_EQ(missing.status, 3) << said(missing);
    const RunnerRun merged =
        run({"merge", "--expect", "2", (dir / "all.json").string(), first.string(), second.string()});
    ASSERT_EQ(merged.status, 0) << said(merged);
    const auto rows = statuses(read_json(dir / "all.json"));
    EXPECT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows.at("cpu_naive"), "ok");
    EXPECT_EQ(rows.at("cpu_blocked"), "ok");
}

// The student's self-check: one --submission against a published rubric, results in dir/out.
RunnerRun self_check(const fs::path& submission, const fs::path& rubric, const fs::path& dir) {
    return run(
        {"grade", "--rubric", rubric.string(), "--submission", submission.string(), "--out", (dir / "out").string()},
        300);
}

const fs::path kCpuLab = KREG_SOURCE_DIR "/configs/grading/cpu-lab.json";

// A student's result as the self-check wrote it, every check's points by its kind and name; a failure when missing.
struct SelfCheckResult {
    nlohmann::json result;
    std::map<std::string, double> points;  // "correctness:tiny and odd shapes" -> 40
    std::map<std::string, std::string> summary;
};
SelfCheckResult result_of(const fs::path& dir, const std::string& student) {
    SelfCheckResult r;
    const fs::path file = dir / "out" / "students" / (student + ".json");
    if (!fs::exists(file)) {
        ADD_FAILURE() << "no result written: " << file;
        return r;
    }
    r.result = read_json(file);
    for (const nlohmann::json& check : r.result.at("checks")) {
        const std::string key = check.at("kind").get<std::string>() + ":" + check.at("name").get<std::string>();
        r.points[key] = check.at("points").get<double>();
        r.summary[key] = check.value("summary", std::string());
    }
    return r;
}

// What every self-check's result records: the marking, with the defences that did not apply named.
void expect_marked_unconfined(const SelfCheckResult& r) {
    ASSERT_TRUE(r.result.contains("unconfined_self_check")) << r.result.dump(1);
    const nlohmann::json& marking = r.result.at("unconfined_self_check");
    std::string names;
    for (const nlohmann::json& entry : marking.at("not_applied"))
        names += entry.get<std::string>().substr(0, entry.get<std::string>().find(": ")) + "|";
    for (const char* defence : {"namespaces|", "seccomp|", "Landlock|", "cgroup memory limit|", "static audit|",
                                "outputs checked outside the worker|", "the grader's clock|", "CPU pinning|"})
        EXPECT_NE(names.find(defence), std::string::npos) << defence << " not named in " << marking.dump(1);
    EXPECT_NE(marking.value("summary", std::string()).find("not a grade"), std::string::npos) << marking.dump(1);
}

// The "done when": the template built as a .dll by the cross toolchain (windows.template_dll copies it next to
// these tests), self-checked with the published CPU rubric: its correctness points (it is the naive loop, so not the
// tiers' speed-ups), the audit said to be skipped for a PE file, every run checked inside the worker, no class page.
TEST(WindowsRunner, AStudentsSelfCheckOfTheTemplateDllGradesItAndSaysItIsUnconfined) {
    const fs::path dll = bin_dir() / "template" / "my_gemm.dll";
    ASSERT_TRUE(fs::exists(dll)) << dll
                                 << " is missing: windows.template_dll builds it (ctest -L windows in the "
                                    "Linux build runs that step before these tests)";
    const fs::path dir = scratch("self_check_template");
    const RunnerRun r = self_check(dll, kCpuLab, dir);
    ASSERT_EQ(r.status, 0) << said(r);
    EXPECT_NE(r.out.find("UNCONFINED SELF-CHECK, not a grade"), std::string::npos) << said(r);
    EXPECT_NE(r.err.find("my_gemm's worker was not confined (an unconfined self-check)"), std::string::npos) << said(r);
    const SelfCheckResult result = result_of(dir, "my_gemm");
    EXPECT_EQ(result.result.value("status", std::string()), "graded") << result.result.dump(1);
    EXPECT_EQ(result.points.at("correctness:tiny and odd shapes"), 40) << result.result.dump(1);
    EXPECT_EQ(result.points.at("correctness:mid-size shapes"), 20) << result.result.dump(1);
    EXPECT_EQ(result.points.at("performance:twice the naive loop"), 0) << result.result.dump(1);  // the naive loop
    EXPECT_EQ(result.result.value("score", -1.0), 60) << result.result.dump(1);
    EXPECT_NE(result.summary.at("audit:static audit of the shared object").find("Windows library (PE)"),
              std::string::npos)
        << result.result.dump(1);
    EXPECT_EQ(result.summary.count("load:load in an unconfined worker"), 1u) << result.result.dump(1);
    expect_marked_unconfined(result);
    for (const nlohmann::json& check : result.result.at("checks"))
        if (check.at("kind") == "correctness")
            for (const nlohmann::json& run : check.at("evidence")) {
                EXPECT_NE(run.value("checked", std::string()).find("inside the worker"), std::string::npos)
                    << run.dump(1);
                EXPECT_EQ(run.at("anticheat").at("calls_verified"), 3) << run.dump(1);  // every call, fp64
            }
    EXPECT_TRUE(fs::exists(dir / "out" / "student-view" / "my_gemm.md"));
    EXPECT_FALSE(fs::exists(dir / "out" / "index.html"));  // a class page is staff's
}

// A wrong, a crashing and a hanging .dll: each self-check ends as its status, with its result written and marked.
// The hanging one runs against the published rubric with a 5 s call limit instead of its 30 s, so that its two
// correctness cases (each ends at its first timeout) cost seconds.
TEST(WindowsRunner, ASelfCheckOfAWrongACrashingAndAHangingDllEndsAsItsStatusWithTheResultWritten) {
    const fs::path dir = scratch("self_check_misbehaving");
    nlohmann::json shorter = read_json(kCpuLab);
    shorter["limits"]["call_s"] = 5;
    const fs::path short_calls = dir / "cpu-lab-5s-calls.json";
    std::ofstream(short_calls) << shorter.dump(2);
    const struct {
        std::string fixture;
        fs::path rubric;
        std::string status;
    } cases[] = {{"wrong_result", kCpuLab, "wrong_result"},
                 {"crash_in_run", kCpuLab, "crashed"},
                 {"hang_in_run", short_calls, "timeout"}};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.fixture);
        const fs::path out = dir / c.fixture;
        const RunnerRun r = self_check(fixture(c.fixture), c.rubric, out);
        EXPECT_EQ(r.status, 0) << said(r);  // graded, whatever the status
        const SelfCheckResult result = result_of(out, "fixture_" + c.fixture);
        EXPECT_EQ(result.result.value("status", std::string()), c.status) << result.result.dump(1);
        EXPECT_EQ(result.points.at("correctness:tiny and odd shapes"), 0) << result.result.dump(1);
        EXPECT_EQ(result.result.value("score", -1.0), 0) << result.result.dump(1);
        expect_marked_unconfined(result);
        if (c.status == "crashed")
            EXPECT_NE(result.result.value("summary", std::string()).find("EXCEPTION_ACCESS_VIOLATION"),
                      std::string::npos)
                << result.result.dump(1);
    }
}

// What only confined grading may do stays refused on Windows, with the reason, before anything is graded: more than
// one submission, a secret seed (an unconfined worker could read it), the staff's hidden cases.
TEST(WindowsRunner, ASelfCheckRefusesWhatOnlyConfinedGradingMayDo) {
    const fs::path dir = scratch("self_check_refusals");
    const std::string naive = (plugin_dir() / "cpu_naive.dll").string();
    const std::string rubric = kCpuLab.string();
    const RunnerRun two = run({"grade", "--rubric", rubric, "--submission", naive, "--submission",
                               fixture("good").string(), "--out", (dir / "two").string()});
    EXPECT_EQ(two.status, 3) << said(two);
    EXPECT_NE(two.err.find("grading others' submissions"), std::string::npos) << said(two);
    EXPECT_NE(two.err.find("confinement of untrusted code is Linux's"), std::string::npos) << said(two);
    const RunnerRun seeded = run({"grade", "--rubric", rubric, "--submission", naive, "--secret-seed", "12345", "--out",
                                  (dir / "seeded").string()});
    EXPECT_EQ(seeded.status, 3) << said(seeded);
    EXPECT_NE(seeded.err.find("a secret seed"), std::string::npos) << said(seeded);
    const RunnerRun hidden =
        run({"grade", "--rubric", rubric, "--rubric", KREG_SOURCE_DIR "/configs/grading/lab3-hidden.example.json",
             "--submission", naive, "--out", (dir / "hidden").string()});
    EXPECT_EQ(hidden.status, 3) << said(hidden);
    EXPECT_NE(hidden.err.find("hidden cases"), std::string::npos) << said(hidden);
    for (const char* out : {"two", "seeded", "hidden"}) EXPECT_FALSE(fs::exists(dir / out / "students")) << out;
}

TEST(WindowsRunner, GradingOthersIsRefusedWithTheReason) {
    const fs::path dir = scratch("grade");
    fs::copy_file(plugin_dir() / "cpu_naive.dll", dir / "alice.dll");
    const RunnerRun r = run({"grade", "--rubric", KREG_SOURCE_DIR "/configs/grading/cpu-lab.json", "--submissions",
                             dir.string(), "--out", (dir / "out").string()});
    EXPECT_EQ(r.status, 3) << said(r);
    EXPECT_NE(r.err.find("confinement of untrusted code is Linux's"), std::string::npos) << said(r);
    EXPECT_FALSE(fs::exists(dir / "out" / "gradebook.json"));
}

}  // namespace
