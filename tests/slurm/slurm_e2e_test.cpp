// Sweeps and grading runs on a real single-node Slurm (tests/slurm/local_slurm.sh, started by the ctest
// fixture `slurm`): submitted as job arrays of shards, merged by the merge job, and compared row for row
// with the same run made locally; and a shard whose runner is killed mid-way, re-run from the command
// the merge prints, after which the merge succeeds.
#include "../e2e/run_command.hpp"
#include "grade/gradebook.hpp"

#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const fs::path kSlurmDir = KREG_SLURM_DIR;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Skips the test, with the fixture's reason, where the cluster could not start.
#define REQUIRE_SLURM()                                                                                    \
    do {                                                                                                   \
        if (fs::exists(kSlurmDir / "skip_reason")) GTEST_SKIP() << test::slurp(kSlurmDir / "skip_reason"); \
        ASSERT_TRUE(fs::exists(kSlurmDir / "slurm.conf")) << "the slurm fixture did not start a cluster";  \
    } while (0)

// The rest of the line after "LABEL: " in out.
std::string line_after(const std::string& out, const std::string& label) {
    const size_t at = out.find(label + ": ");
    if (at == std::string::npos) return "";
    const size_t start = at + label.size() + 2;
    return out.substr(start, out.find('\n', start) - start);
}
std::string first_word(const std::string& s) { return s.substr(0, s.find(' ')); }

// Rows by job id, each id once.
std::map<uint64_t, Record> rows_by_job(const fs::path& json) {
    std::map<uint64_t, Record> out;
    for (const auto& r : read_records_json(json))
        EXPECT_TRUE(out.emplace(r.job_id, r).second) << "job " << r.job_id << " twice in " << json;
    return out;
}

void expect_same_rows(const fs::path& merged, const fs::path& local) {
    const auto a = rows_by_job(merged), b = rows_by_job(local);
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [id, row] : b) {
        ASSERT_TRUE(a.count(id)) << "job " << id << " (" << row.kernel << ") missing from the merged report";
        const Record& m = a.at(id);
        EXPECT_EQ(m.kernel, row.kernel) << id;
        EXPECT_EQ(to_string(m.shape), to_string(row.shape)) << id;
        EXPECT_EQ(to_string(m.dtype), to_string(row.dtype)) << id;
        EXPECT_EQ(m.status, row.status) << id;
    }
}

// scontrol's JobState of a job (the first line), "" when it does not know it.
std::string job_state(const std::string& id, const fs::path& dir) {
    const auto r = test::run_command("scontrol show job -o " + id, dir, dir / "scontrol");
    const size_t at = r.out.find("JobState=");
    return at == std::string::npos ? "" : first_word(r.out.substr(at + 9));
}

bool ended(const std::string& state) {
    return !state.empty() && state != "PENDING" && state != "RUNNING" && state != "COMPLETING" &&
           state != "CONFIGURING";
}

const std::string kSweep = "--config sweeps/cpu.json --sizes 32,48,64,80 --repeat 2";

TEST(SlurmSweep, AFourShardArrayMergesIntoTheReportOfTheSameSweepRunLocally) {
    REQUIRE_SLURM();
    const auto dir = test::fresh_dir("slurm-sweep");
    const auto r =
        test::run_command(kRunner + " submit --slurm --shards 4 --slurm-dir jobs --wait --json merged.json " + kSweep,
                          dir, dir / "submit");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    for (int i = 1; i <= 4; ++i) {
        EXPECT_TRUE(contains(r.out, "shard " + std::to_string(i) + "/4: job ")) << r.out;
        // Each task ran its own slice: the jobs whose plan index is I - 1 modulo 4.
        for (const auto& [id, row] : rows_by_job(dir / "jobs" / ("shard-" + std::to_string(i) + "-of-4.json")))
            EXPECT_EQ(id % 4, uint64_t(i - 1)) << row.kernel;
    }
    EXPECT_TRUE(contains(r.out, "merge: job ")) << r.out;
    const auto local =
        test::run_command(kRunner + " " + kSweep + " --json local.json --csv local.csv", dir, dir / "local");
    ASSERT_EQ(local.exit_code, 0) << local.err;
    expect_same_rows(dir / "merged.json", dir / "local.json");
}

TEST(SlurmGrade, AShardedGradingRunMergesIntoTheGradebookOfTheSameRunLocally) {
    REQUIRE_SLURM();
    const auto dir = test::fresh_dir("slurm-grade");
    fs::create_directories(dir / "subs");
    fs::copy_file(fs::path(KREG_PLUGIN_DIR) / "cpu_naive.so", dir / "subs" / "alice.so");
    fs::copy_file(fs::path(KREG_PLUGIN_DIR) / "cpu_blocked.so", dir / "subs" / "bob.so");
    fs::copy_file(test::fixture("fixture_wrong_result"), dir / "subs" / "wrong.so");
    fs::copy_file(test::fixture("fixture_crash_in_run"), dir / "subs" / "crasher.so");
    const std::string grade =
        kRunner + " grade --rubric " + KREG_TEST_DATA_DIR + "/grading/corpus-rubric.json --submissions subs";
    const auto r =
        test::run_command(grade + " --out grades --slurm --shards 2 --slurm-dir jobs --wait", dir, dir / "submit");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto local = test::run_command(grade + " --out local", dir, dir / "local");
    ASSERT_EQ(local.exit_code, 0) << local.err;
    std::map<std::string, std::string> merged, alone;
    for (const auto& s : Gradebook(dir / "grades").all()) merged[s.student] = s.status;
    for (const auto& s : Gradebook(dir / "local").all()) alone[s.student] = s.status;
    EXPECT_EQ(merged, alone);
    EXPECT_EQ(merged.size(), 4u);
    EXPECT_EQ(merged["wrong"], "wrong_result");
    EXPECT_EQ(merged["crasher"], "crashed");
    EXPECT_TRUE(fs::exists(dir / "grades" / "gradebook.csv"));
}

// The runner of one shard on this node: among the processes of the cluster's jobs (scontrol listpids,
// which takes no array-task ids), the one whose command line runs that shard in this test's folder.
pid_t runner_of_shard(const std::string& shard, const fs::path& dir) {
    const auto r = test::run_command("scontrol listpids", dir, dir / "listpids");
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
        const std::string pid = first_word(line);
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmdline = test::slurp("/proc/" + pid + "/cmdline");
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        if (contains(cmdline, "--shard " + shard + " ") && contains(cmdline, dir.string()) &&
            !contains(cmdline, "__worker"))
            return pid_t(std::stol(pid));
    }
    return -1;
}

size_t journal_rows(const fs::path& journal) {
    const std::string text = test::slurp(journal);
    const size_t lines = size_t(std::count(text.begin(), text.end(), '\n'));
    return lines > 0 ? lines - 1 : 0;  // the first line is the header
}

TEST(SlurmSweep, AShardKilledMidwayIsReRunFromTheCommandTheMergePrintsThenTheMergeSucceeds) {
    REQUIRE_SLURM();
    const auto dir = test::fresh_dir("slurm-killed");
    // Rows slow enough (many timed calls each) that shard 2 is still running when its first row is in.
    const std::string sweep = "--kernels cpu_naive --sizes 96,112,128,144,160,176,192,208 --repeat 100";
    const auto r = test::run_command(
        kRunner + " submit --slurm --shards 2 --slurm-dir jobs --json merged.json " + sweep, dir, dir / "submit");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::string array_id = first_word(line_after(r.out, "array job"));
    const std::string merge_id = first_word(line_after(r.out, "merge job"));
    const std::string merge_command = line_after(r.out, "merge command");
    ASSERT_FALSE(array_id.empty() || merge_id.empty() || merge_command.empty()) << r.out;

    const fs::path journal = dir / "jobs" / "shard-2-of-2.journal.jsonl";
    pid_t runner = -1;
    for (int i = 0; i < 1200 && runner < 0; ++i) {
        if (journal_rows(journal) >= 1) runner = runner_of_shard("2/2", dir);
        if (runner < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_GT(runner, 0) << "shard 2 never had a row while running";
    ASSERT_EQ(::kill(runner, SIGKILL), 0);  // as a node failure would: no clean stop, no last render

    std::string state;
    for (int i = 0; i < 600 && !ended(state = job_state(merge_id, dir)); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(ended(state)) << state;
    const std::string merge_log = test::slurp(dir / "jobs" / "logs" / "merge.log");
    EXPECT_EQ(state, "FAILED") << merge_log;
    EXPECT_TRUE(contains(merge_log, "shard-2-of-2")) << merge_log;
    // The merge names the incomplete shard with the command that completes it.
    std::string rerun;
    std::istringstream lines(merge_log);
    for (std::string line; std::getline(lines, line);)
        if (contains(line, "--resume") && contains(line, "shard-2-of-2")) rerun = line.substr(line.find("cd "));
    ASSERT_FALSE(rerun.empty()) << merge_log;
    const auto resumed = test::run_command(rerun, dir, dir / "rerun");
    ASSERT_EQ(resumed.exit_code, 0) << rerun << "\n" << resumed.err;
    const auto merged = test::run_command(merge_command, dir, dir / "merge");
    ASSERT_EQ(merged.exit_code, 0) << merge_command << "\n" << merged.err;
    const auto rows = rows_by_job(dir / "merged.json");
    ASSERT_EQ(rows.size(), 8u);
    for (const auto& [id, row] : rows) {
        EXPECT_LT(id, 8u);
        EXPECT_EQ(row.status, RowStatus::ok) << row.kernel << " " << to_string(row.shape);
    }
}

}  // namespace
}  // namespace kreg
