// SweepRun's phases one by one, in this process (--isolation none: no worker, no child process), on the CPU
// reference plugins: what each phase returns, and which RunError kind (the exit status) each refusal is.
#include "run/sweep_run.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const test::ScratchRoot kScratch("kreg_sweep_run_test");
const fs::path kPlugins = KREG_PLUGIN_DIR;

SweepRequest cpu_request(const fs::path& dir) {
    SweepRequest r;
    r.isolation = Isolation::none;
    r.default_plugins = false;
    r.plugin_files = {(kPlugins / "cpu_naive.so").string(), (kPlugins / "cpu_blocked.so").string()};
    r.overrides.kernels = std::vector<std::string>{"cpu_naive", "cpu_blocked"};
    r.overrides.sizes = std::vector<int64_t>{16, 24};
    r.overrides.repeats = 1;
    r.overrides.warmup = 0;
    r.overrides.json = (dir / "r.json").string();
    r.argv = {"runner", "--kernels", "cpu_naive,cpu_blocked", "--sizes", "16,24"};
    return r;
}

SweepEnvironment environment() {
    SweepEnvironment env;
    env.runner_exe = KREG_RUNNER;
    env.configs_dir = fs::path(KREG_SOURCE_DIR) / "configs";
    env.parse_recorded = [](const std::vector<std::string>&) -> SweepRequest {
        throw std::runtime_error("not in this test");
    };
    return env;
}

RunError::Kind kind_of(const std::function<void()>& phase, std::string& message) {
    try {
        phase();
    } catch (const RunError& e) {
        message = e.what();
        return e.kind();
    }
    ADD_FAILURE() << "the phase did not throw a RunError";
    return RunError::Kind::cannot_run;
}

TEST(SweepRun, ThePlanCrossesKernelsWithShapesAndAShardKeepsTheWholePlansIds) {
    SweepRequest request = cpu_request(kScratch.fresh_dir("plan"));
    request.shard = Shard{2, 2};
    std::ostringstream log, out;
    SweepRun run(request, environment(), log, out);
    const Registry registry = run.load_plugins();
    EXPECT_EQ(registry.names(), (std::vector<std::string>{"cpu_naive", "cpu_blocked"}));
    const SweepParts parts = run.configure(registry);
    ASSERT_EQ(parts.configs.size(), 1u);
    EXPECT_EQ(parts.kernels.front(), (std::vector<std::string>{"cpu_naive", "cpu_blocked"}));
    const SweepPlan plan = run.plan(parts, registry);
    EXPECT_EQ(plan.whole_plan_size, 4u);
    EXPECT_EQ(plan.whole_plan_sha256.size(), 64u);
    ASSERT_EQ(plan.jobs.size(), 2u);
    EXPECT_EQ(plan.jobs[0].job.id, 1u);
    EXPECT_EQ(plan.jobs[1].job.id, 3u);
    EXPECT_FALSE(plan.runs_cuda);
    EXPECT_FALSE(plan.nothing_measured);
    EXPECT_NE(log.str().find("shard 2/2: 2 of 4 job(s)"), std::string::npos) << log.str();
}

TEST(SweepRun, AnUnknownKernelIsBadInputNamingTheOption) {
    SweepRequest request = cpu_request(kScratch.fresh_dir("unknown"));
    request.overrides.kernels = std::vector<std::string>{"cpu_naiev"};
    std::ostringstream log, out;
    SweepRun run(request, environment(), log, out);
    const Registry registry = run.load_plugins();
    std::string message;
    EXPECT_EQ(kind_of([&] { run.configure(registry); }, message), RunError::Kind::bad_input);
    EXPECT_NE(message.find("config error: "), std::string::npos) << message;
    EXPECT_NE(message.find("--kernels"), std::string::npos) << message;
    EXPECT_NE(message.find("cpu_naive"), std::string::npos) << message;  // the did-you-mean
}

TEST(SweepRun, StressingMoreThanOneJobIsBadInput) {
    SweepRequest request = cpu_request(kScratch.fresh_dir("stress"));
    request.stress_s = 1.0;
    std::ostringstream log, out;
    SweepRun run(request, environment(), log, out);
    const Registry registry = run.load_plugins();
    const SweepParts parts = run.configure(registry);
    EXPECT_EQ(parts.configs.front().settings.time_budget_s, 1.0);  // the lab convenience reshaped the job
    std::string message;
    EXPECT_EQ(kind_of([&] { run.plan(parts, registry); }, message), RunError::Kind::bad_input);
    EXPECT_NE(message.find("the selection gives 4 jobs"), std::string::npos) << message;
}

TEST(SweepRun, ADryRunPrintsThePlanAndWritesNothing) {
    const fs::path dir = kScratch.fresh_dir("dry");
    SweepRequest request = cpu_request(dir);
    request.dry_run = true;
    std::ostringstream log, out;
    EXPECT_EQ(SweepRun(request, environment(), log, out).execute(), 0);
    EXPECT_NE(out.str().find("4 job(s)"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("3  cpu_blocked  fp32  24x24x24  run"), std::string::npos) << out.str();
    EXPECT_FALSE(fs::exists(dir / "r.json"));
}

TEST(SweepRun, ASweepWritesItsRowsAndASecondOneRefusesToOverwriteThem) {
    const fs::path dir = kScratch.fresh_dir("reports");
    const SweepRequest request = cpu_request(dir);
    std::ostringstream log, out;
    EXPECT_EQ(SweepRun(request, environment(), log, out).execute(), 0) << log.str();
    EXPECT_TRUE(fs::exists(dir / "r.json"));
    EXPECT_TRUE(fs::exists(dir / "r.csv"));
    EXPECT_NE(out.str().find("reports: " + (dir / "r.json").string()), std::string::npos) << out.str();

    std::ostringstream log2, out2;
    SweepRun again(request, environment(), log2, out2);
    const Registry registry = again.load_plugins();
    const SweepParts parts = again.configure(registry);
    const SweepPlan plan = again.plan(parts, registry);
    std::string message;
    EXPECT_EQ(kind_of([&] { again.open_reports(parts, plan, SweepDevices{}, registry); }, message),
              RunError::Kind::cannot_run);
    EXPECT_NE(message.find("refusing to overwrite: "), std::string::npos) << message;
    EXPECT_NE(message.find("--force"), std::string::npos) << message;

    // Resuming the finished sweep: nothing to do (3), said before any plugin is loaded.
    SweepRequest resume;
    resume.resume = (dir / "r.json").string();
    std::ostringstream log3, out3;
    EXPECT_EQ(kind_of([&] { SweepRun(resume, environment(), log3, out3).resume(); }, message),
              RunError::Kind::nothing_to_run);
    EXPECT_NE(message.find("is complete (4 of 4 rows); nothing to resume"), std::string::npos) << message;
}

}  // namespace
}  // namespace kreg
