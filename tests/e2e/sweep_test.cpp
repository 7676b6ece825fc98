// End to end: the real runner binary, real plugins and deliberately broken ones, real reports.
#include "common/job.hpp"
#include "report/journal.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <fstream>
#include <map>
#include <set>

namespace kreg {
namespace {

using test::fresh_dir;
using test::run_command;

const std::string kRunner = KREG_RUNNER;
using test::fixture;

using test::rows_by_kernel;

TEST(EndToEnd, ListShowsTheCpuKernels) {
    const auto dir = fresh_dir("list");
    const auto r = run_command(kRunner + " --list", dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("cpu_naive"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cpu_blocked"), std::string::npos) << r.out;
    const auto j = run_command(kRunner + " --list --format json", dir, dir);
    ASSERT_EQ(j.exit_code, 0) << j.err;
    const auto doc = nlohmann::json::parse(j.out);
    std::vector<std::string> names;
    for (const auto& k : doc["kernels"]) names.push_back(k["name"]);
    EXPECT_NE(std::find(names.begin(), names.end(), "cpu_naive"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "cpu_blocked"), names.end());
}

TEST(EndToEnd, BrokenPluginsAreListedWithTheirReasonAndDoNotStopOthers) {
    const auto dir = fresh_dir("list-broken");
    std::string cmd = kRunner + " --list --format json --no-default-plugins";
    for (const char* f : {"fixture_good", "not_elf", "fixture_no_entry", "fixture_wrong_abi", "fixture_crash_at_load",
                          "fixture_exit_at_load", "fixture_duplicate"})
        cmd += " --plugin " + fixture(f);
    cmd += " --plugin " + std::string(KREG_PLUGIN_DIR) + "/cpu_naive.so";
    const auto r = run_command(cmd, dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["kernels"].size(), 2u) << doc.dump(2);  // fixture_good and the first cpu_naive
    const std::string problems = doc["problems"].dump();
    EXPECT_NE(problems.find(fixture("not_elf") + ": not a shared library"), std::string::npos) << problems;
    EXPECT_NE(problems.find(fixture("fixture_no_entry") + ": no entry point"), std::string::npos) << problems;
    EXPECT_NE(problems.find(fixture("fixture_wrong_abi") + ": ABI major 99 but runner expects 1"), std::string::npos)
        << problems;
    EXPECT_NE(problems.find(fixture("fixture_crash_at_load") + ": worker killed by SIGSEGV"), std::string::npos)
        << problems;
    EXPECT_NE(problems.find(fixture("fixture_exit_at_load") + ": worker exited with code 0"), std::string::npos)
        << problems;
    EXPECT_NE(problems.find("duplicate kernel name 'cpu_naive' (first from " + fixture("fixture_duplicate") + ")"),
              std::string::npos)
        << problems;
}

TEST(EndToEnd, CrashesAndHangsBecomeRowsAndTheSweepGoesOn) {
    const auto dir = fresh_dir("crash");
    std::string cmd =
        kRunner + " --no-default-plugins --kernels 'fixture_*' --shape 9x7x5 --repeat 2 --warmup 0 --timeout 3";
    for (const char* f : {"fixture_crash_in_run", "fixture_abort_in_run", "fixture_hang_in_run", "fixture_exit_in_run",
                          "fixture_good", "fixture_create_throws", "fixture_wrong_result"})
        cmd += " --plugin " + fixture(f);
    cmd += " --json out.json --csv out.csv";
    const auto r = run_command(cmd, dir, dir);
    EXPECT_EQ(r.exit_code, 1) << r.err;  // some rows are bad
    auto rows = rows_by_kernel(dir / "out.json");
    ASSERT_EQ(rows.size(), 7u) << r.err;
    EXPECT_EQ(rows["fixture_good"].status, RowStatus::ok) << rows["fixture_good"].reason;
    EXPECT_EQ(rows["fixture_crash_in_run"].status, RowStatus::crashed);
    EXPECT_EQ(rows["fixture_crash_in_run"].signal.value_or(""), "SIGSEGV");
    EXPECT_EQ(rows["fixture_abort_in_run"].status, RowStatus::crashed);
    EXPECT_EQ(rows["fixture_abort_in_run"].signal.value_or(""), "SIGABRT");
    EXPECT_EQ(rows["fixture_exit_in_run"].status, RowStatus::crashed);
    EXPECT_EQ(rows["fixture_exit_in_run"].exit_code.value_or(-1), 0);
    EXPECT_EQ(rows["fixture_hang_in_run"].status, RowStatus::timeout);
    EXPECT_NE(rows["fixture_hang_in_run"].reason.find("time limit of 3"), std::string::npos)
        << rows["fixture_hang_in_run"].reason;
    EXPECT_EQ(rows["fixture_create_throws"].status, RowStatus::failed);
    EXPECT_EQ(rows["fixture_wrong_result"].status, RowStatus::wrong_result);
    // The CSV has the same rows.
    const std::string csv = test::slurp(dir / "out.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 8) << csv;
}

TEST(EndToEnd, APerCallLimitEndsAHungCallLongBeforeTheRowLimit) {
    const auto dir = fresh_dir("call-timeout");
    const std::string cmd = kRunner + " --no-default-plugins --plugin " + fixture("fixture_hang_in_run") +
                            " --plugin " + fixture("fixture_good") +
                            " --kernels fixture_hang_in_run,fixture_good --shape 9x7x5" +
                            " --repeat 2 --warmup 0 --timeout 120 --call-timeout 1 --json out.json --csv out.csv";
    const auto r = run_command(cmd, dir, dir);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    auto rows = rows_by_kernel(dir / "out.json");
    EXPECT_EQ(rows["fixture_hang_in_run"].status, RowStatus::timeout) << rows["fixture_hang_in_run"].reason;
    EXPECT_NE(rows["fixture_hang_in_run"].reason.find("per-call time limit of 1"), std::string::npos)
        << rows["fixture_hang_in_run"].reason;
    EXPECT_EQ(rows["fixture_good"].status, RowStatus::ok) << rows["fixture_good"].reason;
}

TEST(EndToEnd, InProcessIsolationRunsTheSameKernels) {
    const auto dir = fresh_dir("inproc");
    const auto r = run_command(
        kRunner + " --isolation none --kernels cpu_naive,cpu_blocked --sizes 33 --json o.json --csv o.csv", dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto rows = rows_by_kernel(dir / "o.json");
    EXPECT_EQ(rows["cpu_naive"].status, RowStatus::ok);
    EXPECT_EQ(rows["cpu_blocked"].status, RowStatus::ok);
}

TEST(EndToEnd, CpuSweepConfigAsTypedFromTheRepositoryRoot) {
    const auto dir = fresh_dir("cpu-sweep");
    const auto r = run_command(kRunner + " --config sweeps/cpu.json --json " + (dir / "cpu.json").string() + " --csv " +
                                   (dir / "cpu.csv").string(),
                               KREG_SOURCE_DIR, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto records = read_records_json(dir / "cpu.json");
    ASSERT_FALSE(records.empty());
    for (const auto& rec : records) {
        EXPECT_EQ(rec.status, RowStatus::ok) << rec.kernel << " " << to_string(rec.shape) << ": " << rec.reason;
        EXPECT_TRUE(rec.stats.has_value());
        EXPECT_TRUE(rec.max_rel_err.has_value());
    }
    const auto doc = nlohmann::json::parse(test::slurp(dir / "cpu.json"));
    // Every plugin found is described in the meta, with its hash; the CPU ones at least.
    int cpu_plugins = 0;
    for (const auto& p : doc["meta"]["plugins"]) {
        EXPECT_EQ(p["sha256"].get<std::string>().size(), 64u) << p.dump();
        if (p["name"] == "cpu_naive" || p["name"] == "cpu_blocked") ++cpu_plugins;
    }
    EXPECT_EQ(cpu_plugins, 2);
    EXPECT_EQ(doc["meta"]["config"]["name"], "cpu");
    EXPECT_NE(r.out.find("cpu_blocked"), std::string::npos);  // the final table
}

TEST(EndToEnd, DefaultSweepRunsWithNoArguments) {
    const auto dir = fresh_dir("default");
    const auto r = run_command(kRunner, dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("built-in default"), std::string::npos) << r.err;
    std::vector<std::filesystem::path> reports;
    for (const auto& e : std::filesystem::directory_iterator(dir / "kreg-reports")) reports.push_back(e.path());
    ASSERT_EQ(reports.size(), 3u);  // one JSON, one CSV, and the journal they were rendered from
    for (const auto& p : reports)
        if (p.extension() == ".json")
            for (const auto& rec : read_records_json(p))
                EXPECT_TRUE(rec.status == RowStatus::ok || rec.status == RowStatus::skipped) << rec.reason;
}

TEST(EndToEnd, ConfigErrorsNameTheFileAndPathAndExitWithTwo) {
    const auto dir = fresh_dir("bad-config");
    std::ofstream(dir / "bad.json")
        << R"({"kernels": ["cpu_naive"], "shapes": [{"square": [64]}, {"m": 1, "n": 2, "k": 0}]})";
    const auto r = run_command(kRunner + " --config bad.json", dir, dir);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("/shapes/1/k"), std::string::npos) << r.err;
    const auto unknown = run_command(kRunner + " --kernels cpu_naiv --sizes 8", dir, dir);
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("did you mean 'cpu_naive'"), std::string::npos) << unknown.err;
    const auto missing = run_command(kRunner + " --config nowhere.json", dir, dir);
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("nowhere.json"), std::string::npos) << missing.err;
    const auto badopt = run_command(kRunner + " --repeat banana", dir, dir);
    EXPECT_EQ(badopt.exit_code, 2);
}

TEST(EndToEnd, AKilledSweepKeepsEveryFinishedRowInItsJournal) {
    const auto dir = fresh_dir("interrupted");
    // Good rows first, then a kernel that hangs far longer than we wait; the runner is then killed.
    const std::string cmd =
        kRunner + " --no-default-plugins --plugin " + fixture("fixture_good") + " --plugin " +
        fixture("fixture_hang_in_run") +
        " --kernels fixture_good,fixture_hang_in_run --sizes 4,5,6 --repeat 1 --warmup 0 --timeout 600"
        " --json part.json --csv part.csv & pid=$!; "
        "for i in $(seq 1 100); do sleep 0.1; "
        "  if [ -f part.journal.jsonl ] && [ $(wc -l < part.journal.jsonl) -ge 4 ]; then break; fi; done; "
        "sleep 0.5; kill -9 $pid; wait $pid; true";
    run_command(cmd, dir, dir);
    const auto journal = read_journal(dir / "part.journal.jsonl");
    ASSERT_EQ(journal.records.size(), 3u);
    for (const auto& rec : journal.records) EXPECT_EQ(rec.status, RowStatus::ok);
    // The rendered report is valid, whatever rows its last render had, and does not claim to be complete.
    const auto doc = nlohmann::json::parse(test::slurp(dir / "part.json"));
    EXPECT_EQ(doc["meta"]["progress"]["complete"], false);
    EXPECT_LE(doc["records"].size(), 3u);
}

// Nothing measured is an error (issue 10, item 5): said in one line before any row, exit status 3.
TEST(EndToEnd, ASweepThatCanMeasureNothingSaysSoFirstAndExitsWithThree) {
    const auto dir = fresh_dir("nothing-measured");
    // Runs the same everywhere: cpu_naive declares fp32 only, so every bf16 row is skipped by the plan.
    const auto r =
        run_command(kRunner + " --kernels cpu_naive --dtype bf16 --sizes 8,9 --json o.json --csv o.csv", dir, dir);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    const auto first = r.err.find("the 2 CPU rows of this sweep cannot run here");
    ASSERT_NE(first, std::string::npos) << r.err;
    EXPECT_LT(first, r.err.find("[1/2]")) << "the line must come before the first row: " << r.err;
    EXPECT_NE(r.err.find("nothing was measured"), std::string::npos) << r.err;
    ASSERT_EQ(read_records_json(dir / "o.json").size(), 2u);  // the skipped rows are still reported, with reasons
}

// Issue 12: each row's speed-up is against the baseline of its own dtype.
TEST(EndToEnd, PerDtypeBaselineOnTheCommandLine) {
    const auto dir = fresh_dir("per-dtype-baseline");
    const auto r = run_command(kRunner +
                                   " --kernels cpu_blocked --dtype fp32,bf16 --baseline fp32=cpu_naive --sizes 16 "
                                   "--repeat 3 --json o.json --csv o.csv",
                               dir, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(test::slurp(dir / "o.json"));
    EXPECT_EQ(doc["baseline"], nlohmann::json({{"fp32", "cpu_naive"}}));  // bf16 has none, so not a plain name
    size_t with_speedup = 0;
    for (const auto& row : doc["records"]) {
        SCOPED_TRACE(row.dump());
        if (row["dtype"] == "bf16") EXPECT_TRUE(row["speedup_vs_baseline"].is_null());
        if (row["dtype"] == "fp32" && row["status"] == "ok") {
            EXPECT_TRUE(row["speedup_vs_baseline"].is_number());
            ++with_speedup;
        }
    }
    EXPECT_EQ(with_speedup, 2u);  // cpu_blocked and the baseline cpu_naive itself, added to the sweep
}

TEST(EndToEnd, UnknownPerDtypeBaselineKernelSuggestsTheClosest) {
    const auto dir = fresh_dir("per-dtype-baseline-typo");
    const auto r =
        run_command(kRunner + " --kernels cpu_blocked --baseline fp32=cpu_naiv --sizes 16 --dry-run", dir, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("<command line>: --baseline: unknown baseline kernel 'cpu_naiv' (did you mean 'cpu_naive'?)"),
              std::string::npos)
        << r.err;
}

// A quick run with --dtype and no --baseline compares each dtype with its cuBLAS kernel where it is
// selected; the rows of the cuBLAS kernels need not run here (no GPU: skipped), the report says the baseline.
TEST(EndToEnd, QuickRunWithDtypesDefaultsToEachDtypesCublasKernel) {
    const auto dir = fresh_dir("default-per-dtype-baseline");
    const auto listing = nlohmann::json::parse(run_command(kRunner + " --list --format json", dir, dir).out);
    std::set<std::string> names;
    for (const auto& k : listing["kernels"]) names.insert(k.value("name", ""));
    if (!names.count("cublas_sgemm") || !names.count("cublas_bf16")) GTEST_SKIP() << "no cuBLAS plugin in this build";
    const auto r = run_command(kRunner +
                                   " --kernels cpu_naive,cublas_sgemm,cublas_bf16 --dtype fp32,bf16 --sizes 16 "
                                   "--repeat 3 --json o.json --csv o.csv",
                               dir, dir);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const auto doc = nlohmann::json::parse(test::slurp(dir / "o.json"));
    EXPECT_EQ(doc["baseline"], nlohmann::json({{"bf16", "cublas_bf16"}, {"fp32", "cublas_sgemm"}}));
    // Without --dtype a quick run keeps having no baseline.
    const auto plain = run_command(
        kRunner + " --kernels cpu_naive,cublas_sgemm --sizes 16 --repeat 3 --json p.json --csv p.csv", dir, dir);
    EXPECT_TRUE(nlohmann::json::parse(test::slurp(dir / "p.json"))["baseline"].is_null()) << plain.err;
}

bool cuda_kernels_ready(const std::filesystem::path& dir, bool& any_cuda) {
    const auto r = run_command(kRunner + " --list --format json", dir, dir);
    any_cuda = false;
    bool ready = false;
    const auto listing = nlohmann::json::parse(r.out);  // named: the loop refers into it
    for (const auto& k : listing["kernels"]) {
        if (k.value("backend", "") != "cuda") continue;
        any_cuda = true;
        if (k.value("unavailable_reason", "x").empty()) ready = true;
    }
    return ready;
}

TEST(EndToEnd, ACudaSweepWithoutAGpuExitsNonZeroAndAMixedOneDoesNot) {
    const auto dir = fresh_dir("cuda-no-gpu");
    bool any_cuda = false;
    if (cuda_kernels_ready(dir, any_cuda)) GTEST_SKIP() << "a CUDA device is present, so CUDA rows do run here";
    if (!any_cuda) GTEST_SKIP() << "built without CUDA: no CUDA kernels to skip";
    const auto cuda_only =
        run_command(kRunner + " --kernels cuda_01_naive --sizes 64,128 --json c.json --csv c.csv", dir, dir);
    EXPECT_EQ(cuda_only.exit_code, 3) << cuda_only.err;
    const auto line = cuda_only.err.find("runner: no CUDA device");
    EXPECT_NE(line, std::string::npos) << cuda_only.err;
    EXPECT_NE(cuda_only.err.find(": the 2 CUDA rows of this sweep cannot run here"), std::string::npos)
        << cuda_only.err;
    EXPECT_LT(line, cuda_only.err.find("[1/2]")) << "the line must come before the first row: " << cuda_only.err;
    const auto mixed = run_command(
        kRunner + " --kernels cpu_naive,cuda_01_naive --sizes 16 --repeat 1 --json m.json --csv m.csv", dir, dir);
    EXPECT_EQ(mixed.exit_code, 0) << mixed.err;
    EXPECT_EQ(mixed.err.find("cannot run here"), std::string::npos) << mixed.err;
}

// --shard I/K: K runs cover the plan once, each row with the job id of the whole plan, so the shards'
// reports never hold the same job twice; the Slurm form reads the array task; bad values exit with 2.
TEST(EndToEnd, ShardsCoverThePlanOnceWithTheWholePlansIds) {
    const auto dir = fresh_dir("shards");
    const std::string sweep = kRunner + " --kernels cpu_naive,cpu_blocked --sizes 8,9,10,11,12 --repeat 1 --warmup 0";
    const auto whole = run_command(sweep + " --json whole.json --csv whole.csv", dir, dir);
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    std::set<uint64_t> all;
    for (const auto& r : read_records_json(dir / "whole.json")) all.insert(r.job_id);
    ASSERT_EQ(all.size(), 10u);
    std::multiset<uint64_t> covered;
    for (int i = 1; i <= 3; ++i) {
        const std::string name = "shard" + std::to_string(i);
        const auto r = run_command(
            sweep + " --shard " + std::to_string(i) + "/3 --json " + name + ".json --csv " + name + ".csv", dir, dir);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find("shard " + std::to_string(i) + "/3: "), std::string::npos) << r.err;
        for (const auto& row : read_records_json(dir / (name + ".json"))) {
            EXPECT_EQ(row.job_id % 3, uint64_t(i - 1)) << row.kernel;
            covered.insert(row.job_id);
        }
    }
    EXPECT_EQ(std::set<uint64_t>(covered.begin(), covered.end()), all);
    EXPECT_EQ(covered.size(), all.size()) << "a job ran in two shards";

    // A Slurm array --array=4-6 (task 5 of 3 tasks) is shard 2/3.
    const auto slurm = run_command("SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=3 " + sweep +
                                       " --shard auto --json slurm.json --csv slurm.csv",
                                   dir, dir);
    ASSERT_EQ(slurm.exit_code, 0) << slurm.err;
    EXPECT_NE(slurm.err.find("shard 2/3: "), std::string::npos) << slurm.err;

    for (const char* bad : {"0/3", "4/3", "1/0", "x/3", "3", "auto"}) {
        const auto r = run_command("env -u SLURM_ARRAY_TASK_ID " + sweep + " --shard " + bad + " --dry-run", dir, dir);
        EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
        EXPECT_NE(r.err.find("--shard"), std::string::npos) << bad << ": " << r.err;
    }
}

TEST(EndToEnd, DevicesOptionIsCheckedAndLeavesASweepWithoutCudaJobsAsItWas) {
    const auto dir = fresh_dir("devices-cli");
    const std::string sweep = kRunner + " --kernels cpu_naive --sizes 8,9 --repeat 1 --warmup 0";
    // No CUDA job to run: --devices names no GPU and changes nothing (on a GPU machine as on this one).
    const auto cpu = run_command(sweep + " --devices all --json cpu.json --csv cpu.csv", dir, dir);
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    const auto rows = read_records_json(dir / "cpu.json");
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& r : rows) EXPECT_EQ(r.status, RowStatus::ok) << r.reason;
    const auto meta = nlohmann::json::parse(std::ifstream(dir / "cpu.json"))["meta"];
    EXPECT_FALSE(meta.contains("devices")) << meta.dump();

    const std::vector<std::pair<std::string, std::string>> bad = {
        {"--devices 0 --device 1", "--device and --devices"},
        {"--devices x", "--devices"},
        {"--devices 0,-1", "--devices"},
        {"--devices 1,1", "named twice"},
        {"--devices ,", "--devices"},
        {"--devices all --isolation none", "--isolation process"},
        {"--devices all --stress 1", "--stress"},
    };
    for (const auto& [args, says] : bad) {
        const auto r = run_command(sweep + " " + args + " --dry-run", dir, dir);
        EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
    }
}

}  // namespace
}  // namespace kreg
