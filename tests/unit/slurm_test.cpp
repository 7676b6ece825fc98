// kreg_slurm: the sbatch scripts as text (and run by bash, so the shard index reaches the command as
// one word), what sbatch and scontrol print, and running a client program.
#include "scratch_dir.hpp"
#include "slurm/client.hpp"
#include "slurm/job_state.hpp"
#include "slurm/sbatch_script.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

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

bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos;
}

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
    EXPECT_TRUE(has_line(s, "#SBATCH --chdir=\"/home/me/work dir\"")) << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --output=/home/me/out/logs/shard-%a-of-4.log")) << s;
    EXPECT_TRUE(has_line(s, "exec /opt/kreg/bin/runner --config sweeps/cpu.json --shard \"${SLURM_ARRAY_TASK_ID}\"/4"))
        << s;
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
    EXPECT_EQ(sbatch_array_command("/d/array.sbatch"),
              (std::vector<std::string>{"sbatch", "--parsable", "/d/array.sbatch"}));
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
        "JobId=9 ArrayJobId=6 ArrayTaskId=4 JobName=kreg-cpu UserId=root(0) JobState=COMPLETED Reason=None "
        "Dependency=(null) "
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

// ---- Hostile text in every field (issue 22): no value may split a line or add one ----

// The arguments of one #SBATCH line as sbatch 22.05 reads them (src/sbatch/opt.c, _get_argument): a
// backslash takes the next character as it is, '"' and '\'' quote until the same quote, whitespace ends
// an argument outside quotes, an unquoted '#' starts a comment; a line never continues.
std::vector<std::string> sbatch_arguments(const std::string& line) {
    std::vector<std::string> args;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace((unsigned char)line[i])) ++i;
        if (i >= line.size()) break;
        std::string arg;
        bool quoted = false, escaped = false, comment = false;
        char quote = 0;
        for (; i < line.size() && (quoted || !std::isspace((unsigned char)line[i])); ++i) {
            const char c = line[i];
            if (escaped)
                escaped = false;
            else if (c == '\\') {
                escaped = true;
                continue;
            } else if (quoted) {
                if (c == quote) {
                    quoted = false;
                    continue;
                }
            } else if (c == '"' || c == '\'') {
                quoted = true;
                quote = c;
                continue;
            } else if (c == '#') {
                comment = true;
                break;
            }
            arg += c;
        }
        EXPECT_FALSE(quoted) << "unmatched quote in: " << line;
        if (!arg.empty()) args.push_back(arg);
        if (comment) break;
    }
    return args;
}

// What sbatch takes from a script: the options of its #SBATCH lines, up to the first command line.
std::vector<std::string> sbatch_options(const std::string& script) {
    std::vector<std::string> options;
    std::istringstream lines(script);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("#SBATCH", 0) == 0) {
            for (auto& a : sbatch_arguments(line.substr(7))) options.push_back(a);
            continue;
        }
        const size_t text = line.find_first_not_of(" \t");
        if (text != std::string::npos && line[text] != '#') break;  // sbatch stops at the first command
    }
    return options;
}

// The value sbatch gets for --name, or "<absent>"; a second one is a failure (an added line).
std::string option_value(const std::vector<std::string>& options, const std::string& name) {
    std::string found = "<absent>";
    int seen = 0;
    for (const auto& o : options)
        if (o.rfind(name + "=", 0) == 0) {
            found = o.substr(name.size() + 1);
            ++seen;
        }
    EXPECT_LE(seen, 1) << name << " given " << seen << " times";
    return found;
}

// The text a person would try: a newline that adds an #SBATCH line, a quote, a command substitution, a
// %-pattern, a backslash and a comment sign.
const std::vector<std::string> kHostile{"x\n#SBATCH --uid=0", "it's", "$(touch PWNED)", "100%x", "a\\b", "a #b"};

enum class Field { partition, time, name, workdir, log_dir, task_word, merge_word };
struct FieldCase {
    Field field;
    const char* option;  // the option a refusal names
};
const std::vector<FieldCase> kFields{{Field::partition, "--partition"},
                                     {Field::time, "--time"},
                                     {Field::name, "--config"},
                                     {Field::workdir, "working directory"},
                                     {Field::log_dir, "--slurm-dir"},
                                     {Field::task_word, ""},
                                     {Field::merge_word, ""}};

ShardedJob job_with(Field field, const std::string& value, const std::filesystem::path& base) {
    ShardedJob job = sample_job();
    job.partition = "h200";
    job.time_limit = "1-00:30:00";
    job.workdir = base / "work";
    job.log_dir = base / "logs";
    job.task_command = {"printf", "[%s]\\n", "--shard", "{task}/4"};
    job.merge_command = {"printf", "[%s]\\n", "merge"};
    switch (field) {
        case Field::partition:
            job.partition = value;
            break;
        case Field::time:
            job.time_limit = value;
            break;
        case Field::name:
            job.name = value;
            break;
        case Field::workdir:
            job.workdir = base / ("work " + value);
            break;
        case Field::log_dir:
            job.log_dir = base / ("logs " + value);
            break;
        case Field::task_word:
            job.task_command.insert(job.task_command.begin() + 2, {"--config", value});
            break;
        case Field::merge_word:
            job.merge_command.push_back(value);
            break;
    }
    return job;
}

std::string run_script(const std::filesystem::path& dir, const std::string& text) {
    const auto script = dir / "script.sbatch";
    std::ofstream(script) << text;
    const auto out = dir / "out.txt";
    const std::string command = "cd '" + dir.string() + "' && SLURM_ARRAY_TASK_ID=3 bash script.sbatch > out.txt";
    EXPECT_EQ(std::system(command.c_str()), 0) << text;
    std::ifstream in(out);
    std::stringstream got;
    got << in.rdbuf();
    return got.str();
}

TEST(SbatchScriptHostileText, EveryFieldIsRefusedNamingItsOptionOrReadBackWhole) {
    const auto dir = kScratch.fresh_dir("hostile");
    for (const auto& [field, option] : kFields) {
        for (const auto& value : kHostile) {
            for (const bool array : {true, false}) {
                const ShardedJob job = job_with(field, value, dir);
                SCOPED_TRACE(std::string(array ? "array" : "merge") + " script, option " + option + ", value " + value);
                std::string text;
                try {
                    text = array ? array_script(job) : merge_script(job);
                } catch (const ScriptValueError& e) {
                    // Refused: only a field with a strict check may be, and the message names its option.
                    EXPECT_EQ(e.option(), option);
                    EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
                    EXPECT_TRUE(field == Field::partition || field == Field::time || field == Field::name ||
                                value.find('\n') != std::string::npos || (field == Field::log_dir && value == "a\\b"))
                        << "refused a value it can write: " << e.what();
                    continue;
                }
                // Written: every line is one the generator writes, none added or split.
                std::istringstream lines(text);
                std::string line;
                int commands = 0;
                while (std::getline(lines, line)) {
                    EXPECT_TRUE(line.empty() || line.rfind("#!/bin/bash", 0) == 0 || line.rfind("# ", 0) == 0 ||
                                line.rfind("#SBATCH --", 0) == 0 || line.rfind("exec ", 0) == 0)
                        << "a line the generator never writes: [" << line << "]\n"
                        << text;
                    commands += line.rfind("exec ", 0) == 0;
                }
                EXPECT_EQ(commands, 1) << text;
                // sbatch reads back each value whole, and only the options the generator asks for.
                const auto options = sbatch_options(text);
                for (const auto& o : options) {
                    const std::string name = o.substr(0, o.find('='));
                    static const std::set<std::string> kAsked{"--job-name", "--partition", "--time",
                                                              "--chdir",    "--array",     "--ntasks",
                                                              "--gres",     "--exclusive", "--output"};
                    EXPECT_TRUE(kAsked.count(name)) << "sbatch would read an option never asked for: " << o << "\n"
                                                    << text;
                }
                EXPECT_EQ(option_value(options, "--partition"), *job.partition);
                EXPECT_EQ(option_value(options, "--time"), *job.time_limit);
                EXPECT_EQ(option_value(options, "--job-name"), array ? job.name : job.name + "-merge");
                EXPECT_EQ(option_value(options, "--chdir"), job.workdir.string());
                // --output is a file name pattern: the folder's '%' doubled, the task's %a kept.
                std::string pattern_dir;
                for (char c : job.log_dir.string()) pattern_dir += c == '%' ? std::string("%%") : std::string(1, c);
                EXPECT_EQ(option_value(options, "--output"),
                          pattern_dir + (array ? "/shard-%a-of-4.log" : "/merge.log"));
                // bash runs the command with every word as it was given, and nothing else.
                const std::string out = run_script(dir, text);
                std::string expected;
                const auto& command = array ? job.task_command : job.merge_command;
                for (size_t w = 2; w < command.size(); ++w)
                    expected += "[" + (command[w] == "{task}/4" ? std::string("3/4") : command[w]) + "]\n";
                EXPECT_EQ(out, expected) << text;
                EXPECT_FALSE(std::filesystem::exists(dir / "PWNED")) << text;
            }
        }
    }
}

TEST(SbatchScriptHostileText, StrictFieldsTakeWhatSbatchTakes) {
    ShardedJob job = sample_job();
    for (const char* time : {"30", "30:00", "01:30:00", "2-12", "2-12:30", "2-12:30:00", "UNLIMITED", "infinite"}) {
        job.time_limit = time;
        EXPECT_NO_THROW(check_script_values(job)) << time;
    }
    for (const char* time : {"", "1:2:3:4", "1h", "-1", "1-", "30 ", "1-2-3"}) {
        job.time_limit = time;
        EXPECT_THROW(check_script_values(job), ScriptValueError) << time;
    }
    job.time_limit.reset();
    for (const char* partition : {"h200", "gpu_a100-80g", "a100,h100", "p.q"}) {
        job.partition = partition;
        EXPECT_NO_THROW(check_script_values(job)) << partition;
    }
    for (const char* partition : {"", "h 200", "h200;x", "gpu\t"}) {
        job.partition = partition;
        EXPECT_THROW(check_script_values(job), ScriptValueError) << partition;
    }
}

TEST(SbatchScriptHostileText, ScriptWordKeepsEveryByteOnOneLine) {
    EXPECT_EQ(script_word("plain"), "plain");
    EXPECT_EQ(script_word("it's"), "'it'\\''s'");
    EXPECT_EQ(script_word("a\nb"), "$'a\\x0ab'");
    EXPECT_EQ(script_word("a'\\\r"), "$'a\\'\\\\\\x0d'");
}

}  // namespace
}  // namespace kreg::slurm
