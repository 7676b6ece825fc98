// The command values of `runner submit --slurm` and `runner grade --slurm`, without Slurm or a child runner:
// submit's own options taken out of a command line (common/argv_words.hpp for the rest), the job name, the
// task and merge commands of a sharded sweep and grading run (slurm/sharded_submit.hpp), what a sweep's
// dry run and kernel list say and what a grade command line's rubric and submissions are (run/shard_probe.hpp),
// and a --dry-run submission, which writes nothing.
#include "common/argv_words.hpp"
#include "run/shard_probe.hpp"
#include "scratch_dir.hpp"
#include "slurm/sharded_submit.hpp"

#include <gtest/gtest.h>

#include "config/sweep_config.hpp"

#include <fstream>
#include <sstream>

namespace kreg {
namespace {

using Words = std::vector<std::string>;
const test::ScratchRoot kScratch("kreg_submit_values_test");

TEST(SubmitArgvWords, ValuesFlagsAndRemoval) {
    const Words args{"--json", "a.json", "--csv=b.csv", "--force", "--json=c.json", "-k", "x", "--jsonl", "d"};
    EXPECT_EQ(option_values(args, "--json"), (Words{"a.json", "c.json"}));
    EXPECT_EQ(option_values(args, "--csv"), (Words{"b.csv"}));
    EXPECT_TRUE(has_option(args, "--force"));
    EXPECT_TRUE(has_option(args, "--csv"));
    EXPECT_FALSE(has_option(args, "--cs"));  // a prefix of an option is not the option
    EXPECT_EQ(without_option(args, "--json", true), (Words{"--csv=b.csv", "--force", "-k", "x", "--jsonl", "d"}));
    EXPECT_EQ(without_option(args, "--force", false),
              (Words{"--json", "a.json", "--csv=b.csv", "--json=c.json", "-k", "x", "--jsonl", "d"}));
    EXPECT_EQ(option_values(Words{"--json"}, "--json"), Words{});  // no value after it
}

TEST(SubmitOptionsCommand, TakesItsOwnAndKeepsTheRestInOrder) {
    Words rest;
    const slurm::SubmitOptions o = slurm::take_submit_options(
        {"--config", "cpu.json", "--slurm", "--shards=3", "--partition", "h200", "--exclusive", "--time", "10",
         "--gpus-per-task", "0", "--slurm-dir", "out", "--sizes", "64", "--wait"},
        rest);
    EXPECT_EQ(rest, (Words{"--config", "cpu.json", "--sizes", "64"}));
    EXPECT_TRUE(o.slurm && o.exclusive && o.wait && !o.dry_run && !o.help);
    EXPECT_EQ(o.shards, 3);
    EXPECT_EQ(o.gpus_per_task, 0);
    EXPECT_EQ(o.partition, "h200");
    EXPECT_EQ(o.time_limit, "10");
    EXPECT_EQ(o.slurm_dir, "out");
    Words more;
    EXPECT_EQ(slurm::take_submit_options({"--slurm", "--array-size", "2"}, more).shards, 2);
}

TEST(SubmitOptionsCommand, RefusesWhatItCannotSubmit) {
    const auto message = [](const Words& args) {
        Words rest;
        try {
            slurm::take_submit_options(args, rest);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(message({"--shards", "2"}), "--slurm is required (Slurm is the scheduler kreg submits to)");
    EXPECT_EQ(message({"--slurm"}), "say how many shards: --shards K (or --array-size K)");
    EXPECT_EQ(message({"--slurm", "--shards", "0"}), "--shards takes a whole number >= 1, got '0'");
    EXPECT_EQ(message({"--slurm", "--shards", "2x"}), "--shards takes a whole number >= 1, got '2x'");
    EXPECT_EQ(message({"--slurm", "--shards", "2", "--array-size", "2"}),
              "--shards and --array-size say the same; give one");
    EXPECT_EQ(message({"--slurm", "--shards", "2", "--partition"}), "--partition needs a value");
    EXPECT_EQ(message({"--slurm", "--shards", "2", "--partition="}), "--partition needs a value");
    EXPECT_EQ(message({"--slurm=yes", "--shards", "2"}), "--slurm takes no value");
    EXPECT_EQ(message({"--slurm", "--shards", "2", "--dry-run", "--wait"}), "--dry-run submits nothing to --wait for");
    EXPECT_EQ(message({"--help"}), "accepted");  // help asks for nothing else
}

TEST(SubmitJobName, EveryOtherCharacterBecomesAnUnderscore) {
    EXPECT_EQ(slurm::job_name_of("h200-tensor"), "h200-tensor");
    EXPECT_EQ(slurm::job_name_of("my sweep%1"), "my_sweep_1");
    EXPECT_EQ(slurm::job_name_of(".hidden"), "cli.hidden");
    EXPECT_EQ(slurm::job_name_of(""), "cli");
}

TEST(SubmitCommands, ASweepsTasksAndMerge) {
    slurm::SubmitOptions o;
    o.shards = 2;
    o.partition = "h200";
    o.exclusive = true;
    slurm::ShardedJob job = slurm::base_job(o, "cpu", "/w/dir", 0);
    EXPECT_EQ(job.name, "kreg-cpu");
    EXPECT_EQ(job.tasks, 2);
    EXPECT_EQ(job.log_dir, "/w/dir/logs");
    EXPECT_TRUE(job.exclusive);
    slurm::add_sweep_commands(job, "/bin/runner", {"--config", "cpu.json"}, "/w/dir", "cpu", {}, {"m.csv"}, true);
    EXPECT_EQ(job.task_command, (Words{"/bin/runner", "--config", "cpu.json", "--shard", "{task}/2", "--json",
                                       "/w/dir/{shard}.json", "--csv", "/w/dir/{shard}.csv"}));
    EXPECT_EQ(job.merge_command, (Words{"/bin/runner", "merge", "--expect", "2", "--force", "--csv", "m.csv",
                                        "/w/dir/cpu.json", "/w/dir/shard-1-of-2.json", "/w/dir/shard-2-of-2.json"}));
    slurm::add_sweep_commands(job, "/bin/runner", {}, "/w/dir", "cpu", {"a.json", "b.json"}, {}, false);
    EXPECT_EQ(job.merge_command, (Words{"/bin/runner", "merge", "--expect", "2", "b.json", "/w/dir/shard-1-of-2.json",
                                        "/w/dir/shard-2-of-2.json"}));
}

TEST(SubmitCommands, AGradingRunsTasksAndMerge) {
    slurm::SubmitOptions o;
    o.shards = 3;
    slurm::ShardedJob job = slurm::base_job(o, "grade", "/w/g", 1);
    slurm::add_grade_commands(job, "/bin/runner", {"--rubric", "r.json", "--submissions", "subs"}, "out");
    EXPECT_EQ(job.task_command,
              (Words{"/bin/runner", "grade", "--rubric", "r.json", "--submissions", "subs", "--shard", "{task}/3"}));
    EXPECT_EQ(job.merge_command, (Words{"/bin/runner", "merge", "--expect", "3", "out", "out/shard-1-of-3",
                                        "out/shard-2-of-3", "out/shard-3-of-3"}));
}

TEST(SubmitProbe, PlannedKernelsAndTheirBackends) {
    size_t jobs = 0;
    const auto kernels = planned_kernels(
        "0  cpu_naive  fp32  64x64x64  run\n1  cuda_01  fp32  64x64x64  skip: no GPU\n2  cpu_naive  fp32  "
        "128x128x128  run\n3 job(s)\n",
        jobs);
    EXPECT_EQ(jobs, 3u);
    EXPECT_EQ(kernels, (std::set<std::string>{"cpu_naive", "cuda_01"}));
    const std::string list =
        R"({"kernels": [{"name": "cpu_naive", "backend": "cpu"}, {"name": "cuda_01", "backend": "cuda"},
                        {"name": "cuda_02", "backend": "cuda"}]})";
    EXPECT_TRUE(lists_cuda_kernel(list, kernels));
    EXPECT_FALSE(lists_cuda_kernel(list, {"cpu_naive"}));
    EXPECT_FALSE(lists_cuda_kernel(list, {"cuda_03"}));  // only the plan's kernels count
    EXPECT_ANY_THROW(lists_cuda_kernel("not json", kernels));
}

TEST(SubmitDryRun, PrintsTheScriptsAndWritesNothing) {
    const std::filesystem::path dir = kScratch.fresh_dir("dry") / "slurm";
    slurm::SubmitOptions o;
    o.shards = 2;
    o.dry_run = true;
    slurm::ShardedJob job = slurm::base_job(o, "cpu", dir, 0);
    slurm::add_sweep_commands(job, "/bin/runner", {"--config", "cpu.json"}, dir, "cpu", {}, {}, false);
    std::ostringstream out, err;
    EXPECT_EQ(slurm::submit_sharded_job(job, dir, o, "the sweep", out, err), 0);
    EXPECT_NE(out.str().find("# " + (dir / "array.sbatch").string()), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("#SBATCH --array=1-2"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("nothing was written or submitted: --dry-run"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir));
    EXPECT_EQ(err.str(), "");
    job.partition = "h 200";  // a value no #SBATCH line can carry: exit 2, nothing printed but why
    std::ostringstream out2, err2;
    EXPECT_EQ(slurm::submit_sharded_job(job, dir, o, "the sweep", out2, err2), 2);
    EXPECT_EQ(out2.str(), "");
    EXPECT_NE(err2.str().find("--partition"), std::string::npos) << err2.str();
}

TEST(SubmitProbe, AGradingRunsRubricAndSubmissions) {
    const std::filesystem::path dir = kScratch.fresh_dir("grading");
    std::filesystem::create_directories(dir / "subs");
    for (const char* student : {"carol", "alice", "bob"}) std::ofstream(dir / "subs" / (std::string(student) + ".so"));
    const std::string rubric = std::string(KREG_TEST_DATA_DIR) + "/grading/corpus-rubric.json";
    const std::filesystem::path configs = std::filesystem::path(KREG_SOURCE_DIR) / "configs";
    const GradingProbe probe =
        probe_grading({"--rubric", rubric, "--submissions", (dir / "subs").string(), "--out", "x"}, configs);
    EXPECT_EQ(probe.students, 3u);
    EXPECT_EQ(probe.backend, Backend::cpu);
    EXPECT_EQ(
        probe_grading({"--rubric=" + rubric, "--submission", (dir / "subs" / "bob.so").string()}, configs).students,
        1u);
    EXPECT_THROW(probe_grading({"--submissions", (dir / "subs").string()}, configs), std::invalid_argument);
    std::ofstream(dir / "broken.json") << "{";
    EXPECT_THROW(probe_grading({"--rubric", (dir / "broken.json").string()}, configs), ConfigError);
}

}  // namespace
}  // namespace kreg
