// kreg_slurm: the sbatch scripts as text (and run by bash, so the shard index reaches the command as
// one word), what sbatch and scontrol print, and running a client program.
#include "scratch_dir.hpp"
#include "slurm/client.hpp"
#include "slurm/job_state.hpp"
#include "slurm/sbatch_script.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace kreg::slurm {
namespace {

const test::ScratchRoot kScratch("kreg_slurm_test");

ShardedJob sample_job() {
    ShardedJob job;
    job.name = "kreg-cpu";
    job.tasks = 4;
    job.workdir = "/home/me/work dir";
    job.log_dir = "/home/me/out/logs";
    job.task_command = {"/opt/kreg/bin/runner", "--config", "sweeps/cpu.json", "--shard", "{task}/4"};
    job.merge_command = {"/opt/kreg/bin/runner", "merge", "--expect", "4", "out.json"};
    return job;
}

bool has_line(const std::string& text, const std::string& line) { return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos; }

TEST(SbatchScript, AsksForOneArrayTaskPerShardAndTheGpusEachNeeds) {
    ShardedJob job = sample_job();
    job.gpus_per_task = 2;
    job.exclusive = true;
    job.partition = "h200";
    job.time_limit = "00:30:00";
    const std::string s = array_script(job);
    EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
    EXPECT_TRUE(has_line(s, "#SBATCH --array=1-4")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --gres=gpu:2")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --exclusive")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --partition=h200")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --time=00:30:00")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --job-name=kreg-cpu")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --chdir='/home/me/work dir'")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --output=/home/me/out/logs/shard-%a-of-4.log")) << s;
    EXPECT_TRUE(has_line(s, "exec /opt/kreg/bin/runner --config sweeps/cpu.json --shard \"${SLURM_ARRAY_TASK_ID}\"/4")) << s;
}

TEST(SbatchScript, ACpuOnlyRunAsksForNoGpuAndNothingItWasNotGiven) {
    ShardedJob job = sample_job();
    job.gpus_per_task = 0;
    const std::string s = array_script(job);
    EXPECT_EQ(s.find("--gres"), std::string::npos) << s;
    EXPECT_EQ(s.find("--exclusive"), std::string::npos) << s;
    EXPECT_EQ(s.find("--partition"), std::string::npos) << s;
    EXPECT_EQ(s.find("--time"), std::string::npos) << s;
}

TEST(SbatchScript, TheMergeJobAsksForNoGpuAndRunsTheMergeCommand) {
    ShardedJob job = sample_job();
    job.gpus_per_task = 1;
    job.exclusive = true;
    job.partition = "a100";
    const std::string s = merge_script(job);
    EXPECT_EQ(s.find("--gres"), std::string::npos) << s;
    EXPECT_EQ(s.find("--exclusive"), std::string::npos) << s;
    EXPECT_EQ(s.find("--array"), std::string::npos) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --partition=a100")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --job-name=kreg-cpu-merge")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --output=/home/me/out/logs/merge.log")) << s;
    EXPECT_TRUE(has_line(s, "exec /opt/kreg/bin/runner merge --expect 4 out.json")) << s;
}

// What a task runs, word by word: the script run by bash as Slurm would, for task 3.
TEST(SbatchScript, EachTaskRunsItsShardWithEveryWordIntact) {
    ShardedJob job = sample_job();
    job.task_command = {"printf", "[%s]\\n", "two words", "it's", "$HOME", "x{task}y{task}", "--shard", "{task}/4", ""};
    const auto dir = kScratch.fresh_dir("words");
    const auto script = dir / "array.sbatch";
    std::ofstream(script) << array_script(job);
    const auto out = dir / "out.txt";
    const std::string command = "SLURM_ARRAY_TASK_ID=3 bash '" + script.string() + "' > '" + out.string() + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
    std::ifstream in(out);
    std::stringstream got;
    got << in.rdbuf();
    EXPECT_EQ(got.str(), "[two words]\n[it's]\n[$HOME]\n[x3y3]\n[--shard]\n[3/4]\n[]\n");
}

TEST(SbatchScript, ShellQuoteLeavesPlainWordsAndQuotesTheRest) {
    EXPECT_EQ(shell_quote("sweeps/cpu.json"), "sweeps/cpu.json");
    EXPECT_EQ(shell_quote("--dependency=afterany:12"), "--dependency=afterany:12");
    EXPECT_EQ(shell_quote("a b"), "'a b'");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_quote("cpu_*"), "'cpu_*'");
    EXPECT_EQ(shell_quote(""), "''");
}

TEST(SbatchCommand, TheMergeWaitsForEveryTaskOfTheArrayToEnd) {
    EXPECT_EQ(sbatch_array_command("/d/array.sbatch"), (std::vector<std::string>{"sbatch", "--parsable", "/d/array.sbatch"}));
    EXPECT_EQ(sbatch_merge_command("/d/merge.sbatch", "77"),
              (std::vector<std::string>{"sbatch", "--parsable", "--dependency=afterany:77", "/d/merge.sbatch"}));
}

TEST(SbatchOutput, TheJobIdIsReadWithOrWithoutACluster) {
    EXPECT_EQ(parse_sbatch_job_id("123\n"), "123");
    EXPECT_EQ(parse_sbatch_job_id("4567;gpu-cluster\n"), "4567");
    EXPECT_THROW(parse_sbatch_job_id("sbatch: error: Batch job submission failed\n"), std::runtime_error);
    EXPECT_THROW(parse_sbatch_job_id(""), std::runtime_error);
}

// Lines as Slurm 22.05's `scontrol show job -o` prints them (cut after the fields read).
TEST(ScontrolOutput, EveryTaskOfAnArrayWithItsStateAndExit) {
    const std::string text =
        "JobId=9 ArrayJobId=6 ArrayTaskId=4 JobName=kreg-cpu UserId=root(0) JobState=COMPLETED Reason=None Dependency=(null) "
        "ExitCode=0:0 RunTime=00:00:01\n"
        "JobId=8 ArrayJobId=6 ArrayTaskId=3 JobName=kreg-cpu JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0\n"
        "JobId=7 ArrayJobId=6 ArrayTaskId=2 JobName=kreg-cpu JobState=CANCELLED Reason=None ExitCode=0:15\n"
        "JobId=6 ArrayJobId=6 ArrayTaskId=1 JobName=kreg-cpu JobState=RUNNING Reason=None ExitCode=0:0\n"
        "JobId=10 ArrayJobId=10 ArrayTaskId=2-4 JobName=x JobState=PENDING Reason=Resources ExitCode=0:0\n";
    const auto jobs = parse_scontrol_jobs(text);
    ASSERT_EQ(jobs.size(), 5u);
    EXPECT_EQ(jobs[0].job_id, "9");
    EXPECT_EQ(jobs[0].array_task_id, "4");
    EXPECT_EQ(jobs[0].state, "COMPLETED");
    EXPECT_EQ(exit_status_of(jobs[0]), 0);
    EXPECT_EQ(jobs[1].reason, "NonZeroExitCode");
    EXPECT_EQ(exit_status_of(jobs[1]), 1);
    EXPECT_EQ(jobs[2].signal, 15);
    EXPECT_EQ(exit_status_of(jobs[2]), 128 + 15);
    EXPECT_EQ(jobs[4].array_task_id, "2-4");
    EXPECT_FALSE(all_final(jobs));
    EXPECT_TRUE(all_final({jobs[0], jobs[1], jobs[2]}));
    EXPECT_FALSE(all_final({}));
}

TEST(ScontrolOutput, FinalStatesAndAJobThatNeverRan) {
    for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "CANCELLED+"})
        EXPECT_TRUE(is_final_state(s)) << s;
    for (const char* s : {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", ""})
        EXPECT_FALSE(is_final_state(s)) << s;
    JobLine cancelled_pending;
    cancelled_pending.state = "CANCELLED";
    EXPECT_EQ(exit_status_of(cancelled_pending), 1);  // never ran: not a success
}

TEST(RunProgram, KeepsStdoutStderrAndTheExitStatus) {
    const ProgramResult r = run_program({"sh", "-c", "echo out; echo err >&2; exit 7"});
    EXPECT_EQ(r.exit_status, 7);
    EXPECT_EQ(r.out, "out\n");
    EXPECT_EQ(r.err, "err\n");
    EXPECT_EQ(run_program({"sh", "-c", "kill -TERM $$"}).exit_status, 128 + 15);
}

TEST(RunProgram, AMissingProgramIsNamed) {
    try {
        run_program({"kreg-no-such-sbatch"});
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("kreg-no-such-sbatch: not found on PATH"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace kreg::slurm
