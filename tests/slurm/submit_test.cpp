// `runner submit --slurm` and `runner grade --slurm` without a cluster: the scripts --dry-run prints,
// refusals of bad command lines, a missing or failing sbatch, and the submission itself against a
// stand-in sbatch that records what it was asked.
#include "../e2e/run_command.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const std::string kCorpusRubric = std::string(KREG_TEST_DATA_DIR) + "/grading/corpus-rubric.json";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool has_line(const std::string& text, const std::string& line) {
    return contains("\n" + text + "\n", "\n" + line + "\n");
}

// An executable shell script.
void write_script(const fs::path& path, const std::string& body) {
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
}

TEST(Submit, DryRunOfACpuSweepPrintsAnArrayAndAMergeAskingForNoGpu) {
    const auto dir = test::fresh_dir("submit-dry");
    const auto r = test::run_command(
        kRunner + " submit --slurm --shards 3 --config sweeps/cpu.json --repeat 2 --dry-run", dir, dir / "run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --array=1-3")) << r.out;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --job-name=kreg-cpu")) << r.out;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --chdir=" + dir.string())) << r.out;
    EXPECT_FALSE(contains(r.out, "--gres")) << r.out;  // cpu_* kernels only
    EXPECT_FALSE(contains(r.out, "--exclusive")) << r.out;
    EXPECT_TRUE(contains(r.out, "--config sweeps/cpu.json --repeat 2 --shard \"${SLURM_ARRAY_TASK_ID}\"/3 --json "))
        << r.out;
    EXPECT_TRUE(contains(r.out, " merge --expect 3 ")) << r.out;
    EXPECT_TRUE(contains(r.out, "sbatch --parsable '--dependency=afterany:<array job id>' ")) << r.out;
    EXPECT_FALSE(fs::exists(dir / "kreg-slurm"));  // --dry-run writes nothing
}

TEST(Submit, SlurmOptionsReachTheArrayScript) {
    const auto dir = test::fresh_dir("submit-options");
    const auto r =
        test::run_command(kRunner +
                              " submit --slurm --array-size 2 --gpus-per-task 2 --exclusive --partition h200 "
                              "--time 00:20:00 --slurm-dir out --kernels 'cpu_*' --sizes 64,128 --dry-run",
                          dir, dir / "run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --array=1-2")) << r.out;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --gres=gpu:2")) << r.out;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --exclusive")) << r.out;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --partition=h200")) << r.out;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --time=00:20:00")) << r.out;
    EXPECT_TRUE(has_line(r.out, "# " + (dir / "out" / "array.sbatch").string())) << r.out;
    EXPECT_TRUE(contains(r.out, "--kernels 'cpu_*' --sizes 64,128 --shard")) << r.out;
}

TEST(Submit, BadCommandLinesAreRefusedBeforeAnythingIsSubmitted) {
    const auto dir = test::fresh_dir("submit-refusals");
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"submit --shards 2 --config sweeps/cpu.json", "--slurm is required"},
        {"submit --slurm --config sweeps/cpu.json", "--shards K"},
        {"submit --slurm --shards 0 --config sweeps/cpu.json", "--shards takes a whole number >= 1, got '0'"},
        {"submit --slurm --shards 2 --gpus-per-task x --config sweeps/cpu.json",
         "--gpus-per-task takes a whole number"},
        {"submit --slurm --shards 2 --array-size 2 --config sweeps/cpu.json", "give one"},
        {"submit --slurm --shards 2 --shard 1/2 --config sweeps/cpu.json", "--shard cannot be submitted"},
        {"submit --slurm --shards 2 --resume x.json", "--resume cannot be submitted"},
        {"submit --slurm --shards 99 --config sweeps/cpu.json", "use at most --shards 12"},
        {"submit --slurm --shards 2 --config sweeps/cpux.json", "did you mean 'sweeps/cpu.json'"},
        {"submit --slurm --shards 2 --kernels cpu_naiv", "did you mean 'cpu_naive'"},
        {"grade --rubric " + kCorpusRubric + " --submission x.so --slurm --shards 1 --secret-seed 5",
         "export KREG_SECRET_SEED"},
        {"grade --rubric nope.json --submission x.so --slurm --shards 1", "nope.json"},
    };
    for (const auto& [args, message] : cases) {
        const auto r = test::run_command(kRunner + " " + args, dir, dir / "run");
        EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
        EXPECT_TRUE(contains(r.err, message)) << args << "\n" << r.err;
    }
    EXPECT_FALSE(fs::exists(dir / "kreg-slurm"));
}

TEST(Submit, AMissingSbatchIsNamed) {
    const auto dir = test::fresh_dir("submit-no-sbatch");
    fs::create_directories(dir / "empty-bin");
    const auto r = test::run_command("PATH='" + (dir / "empty-bin").string() + "' " + kRunner +
                                         " submit --slurm --shards 2 --config sweeps/cpu.json",
                                     dir, dir / "run");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "sbatch: not found on PATH")) << r.err;
}

TEST(Submit, ARefusingSbatchIsQuoted) {
    const auto dir = test::fresh_dir("submit-sbatch-fails");
    fs::create_directories(dir / "bin");
    write_script(dir / "bin" / "sbatch", "echo 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n");
    const auto r = test::run_command("PATH='" + (dir / "bin").string() + ":/usr/bin:/bin' " + kRunner +
                                         " submit --slurm --shards 2 --partition nope --config sweeps/cpu.json",
                                     dir, dir / "run");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "sbatch failed (exit 1): sbatch: error: invalid partition specified: nope")) << r.err;
}

// A stand-in sbatch records its arguments and answers job ids 41, 42, ...: the merge must be submitted
// after the array, held by a dependency on the array's id, and both ids printed with the merge command.
TEST(Submit, TheMergeIsSubmittedAfterTheArrayHeldByItsJobId) {
    const auto dir = test::fresh_dir("submit-fake-sbatch");
    fs::create_directories(dir / "bin");
    write_script(dir / "bin" / "sbatch",
                 "n=$(cat \"$0.count\" 2>/dev/null || echo 41)\necho $((n + 1)) > \"$0.count\"\n"
                 "echo \"$*\" >> \"$0.calls\"\necho \"$n;testcluster\"\n");
    const auto r =
        test::run_command("PATH='" + (dir / "bin").string() + ":/usr/bin:/bin' " + kRunner +
                              " submit --slurm --shards 2 --slurm-dir jobs --config sweeps/cpu.json --json merged.json",
                          dir, dir / "run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "array job: 41 (2 shards of sweeps/cpu.json)")) << r.out;
    EXPECT_TRUE(contains(r.out, "merge job: 42")) << r.out;
    EXPECT_TRUE(contains(r.out, "merge command: " + kRunner + " merge --expect 2 merged.json " +
                                    (dir / "jobs" / "shard-1-of-2.json").string() + " " +
                                    (dir / "jobs" / "shard-2-of-2.json").string() + "\n"))
        << r.out;
    EXPECT_EQ(test::slurp(dir / "bin" / "sbatch.calls"), "--parsable " + (dir / "jobs" / "array.sbatch").string() +
                                                             "\n--parsable --dependency=afterany:41 " +
                                                             (dir / "jobs" / "merge.sbatch").string() + "\n");
    const std::string array = test::slurp(dir / "jobs" / "array.sbatch");
    EXPECT_TRUE(has_line(array, "#SBATCH --array=1-2")) << array;
    EXPECT_TRUE(
        contains(array, "--shard \"${SLURM_ARRAY_TASK_ID}\"/2 --json '" + (dir / "jobs").string() + "/{shard}.json'"))
        << array;
    EXPECT_FALSE(contains(array, "merged.json")) << array;  // the sweep's --json names the merged report only
    EXPECT_TRUE(fs::is_directory(dir / "jobs" / "logs"));
}

TEST(Submit, AGradingRunIsShardedByStudentAndMergedIntoItsOutFolder) {
    const auto dir = test::fresh_dir("submit-grade-dry");
    const std::string subs = std::string(KREG_PLUGIN_DIR);
    const auto r = test::run_command(kRunner + " grade --rubric " + kCorpusRubric + " --submission " + subs +
                                         "/cpu_naive.so --submission " + subs +
                                         "/cpu_blocked.so --out g --slurm --shards 2 --dry-run",
                                     dir, dir / "run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --array=1-2")) << r.out;
    EXPECT_FALSE(contains(r.out, "--gres")) << r.out;  // a CPU rubric
    EXPECT_TRUE(contains(r.out, " grade --rubric " + kCorpusRubric)) << r.out;
    EXPECT_TRUE(contains(r.out, "--out g --shard \"${SLURM_ARRAY_TASK_ID}\"/2\n")) << r.out;
    EXPECT_TRUE(contains(r.out, " merge --expect 2 g g/shard-1-of-2 g/shard-2-of-2\n")) << r.out;
    const auto three = test::run_command(kRunner + " grade --rubric " + kCorpusRubric + " --submission " + subs +
                                             "/cpu_naive.so --slurm --shards 3 --dry-run",
                                         dir, dir / "run");
    EXPECT_EQ(three.exit_code, 2);
    EXPECT_TRUE(contains(three.err, "there are 1 submission(s); use at most --shards 1")) << three.err;
}

// ---- Hostile text (issue 22): a newline in --partition, --time or a config's file name once wrote extra
// #SBATCH lines (#SBATCH --uid=0) into both scripts, and a '%' in a name landed in --output unescaped ----

// A bash script that runs the runner with exactly these words (bash's $'...' carries the newlines).
fs::path runner_with(const fs::path& dir, const std::string& name, const std::string& bash_words) {
    const fs::path script = dir / name;
    std::ofstream(script) << "#!/bin/bash\nexec " << kRunner << " " << bash_words << "\n";
    ::chmod(script.c_str(), 0755);
    return script;
}

// The lines sbatch takes options from: every line starting with #SBATCH, in both scripts of a dry run.
std::vector<std::string> sbatch_lines(const std::string& dry_run) {
    std::vector<std::string> lines;
    std::istringstream in(dry_run);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("#SBATCH", 0) == 0) lines.push_back(line);
    return lines;
}

TEST(SubmitHostileText, StrictOptionsAreRefusedNamingThemAndNothingIsWritten) {
    const auto dir = test::fresh_dir("submit-hostile-options");
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--partition $'h200\\n#SBATCH --uid=0'", "--partition"},
        {"--partition \"it's\"", "--partition"},
        {"--partition '$(touch PWNED)'", "--partition"},
        {"--partition 'h200%x'", "--partition"},
        {"--time $'00:10:00\\n#SBATCH --uid=0'", "--time"},
        {"--time \"10'\"", "--time"},
        {"--time '$(touch PWNED)'", "--time"},
        {"--time '10%'", "--time"},
        {"--slurm-dir $'out\\n#SBATCH --uid=0'", "--slurm-dir"},
    };
    for (const auto& [words, option] : cases) {
        SCOPED_TRACE(words);
        const auto script = runner_with(dir, "run.sh", "submit --slurm --shards 2 --config sweeps/cpu.json " + words);
        const auto r = test::run_command(script.string(), dir, dir / "run");
        EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
        EXPECT_TRUE(contains(r.err, "runner submit: " + option + ": ")) << r.err;
        EXPECT_FALSE(contains(r.out, "#SBATCH")) << r.out;
    }
    EXPECT_FALSE(fs::exists(dir / "PWNED"));
    EXPECT_FALSE(fs::exists(dir / "kreg-slurm"));
}

TEST(SubmitHostileText, AConfigNameAndAFolderWithNewlineQuoteSubstitutionAndPercentAddNoLine) {
    const auto dir = test::fresh_dir("submit-hostile-names");
    const std::string config = "x\n#SBATCH --uid=0 %x '$(touch PWNED)'.json";
    std::ofstream(dir / config) << R"({"kernels": ["cpu_naive"], "shapes": [{"square": [8, 16]}], "repeats": 1})";
    const auto script =
        runner_with(dir, "run.sh",
                    "submit --slurm --shards 2 --config $'x\\n#SBATCH --uid=0 %x \\'$(touch PWNED)\\'.json' "
                    "--slurm-dir \"d%j it's \\$(touch PWNED)\" --dry-run");
    const auto r = test::run_command(script.string(), dir, dir / "run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = sbatch_lines(r.out);
    // The array's nine lines and the merge's five: no --uid, nothing else added.
    for (const auto& line : lines) EXPECT_NE(line.rfind("#SBATCH --uid", 0), 0u) << line;
    EXPECT_EQ(lines.size(), 5u + 4u) << r.out;
    // The job name is the config's name made plain; the log folder's '%' doubled for --output, quoted.
    EXPECT_TRUE(has_line(r.out, "#SBATCH --job-name=kreg-x__SBATCH_--uid_0__x____touch_PWNED__")) << r.out;
    EXPECT_TRUE(
        has_line(r.out, "#SBATCH --output=\"" + dir.string() + "/d%%j it\\'s $(touch PWNED)/logs/shard-%a-of-2.log\""))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "#SBATCH --output=\"" + dir.string() + "/d%%j it\\'s $(touch PWNED)/logs/merge.log\""))
        << r.out;
    // The config's name reaches the task's command as one bash word on its line.
    EXPECT_TRUE(contains(r.out, "--config $'x\\x0a#SBATCH --uid=0 %x \\'$(touch PWNED)\\'.json' --shard")) << r.out;
    EXPECT_FALSE(fs::exists(dir / "PWNED"));
}

}  // namespace
}  // namespace kreg
