#include "slurm/sharded_submit.hpp"

#include "slurm/client.hpp"
#include "platform/host.hpp"
#include "slurm/job_state.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kreg::slurm {
namespace fs = std::filesystem;

const char* const kSubmitHelp =
    "usage: runner submit --slurm --shards K [SLURM OPTION...] [--config X] [SWEEP OPTION...]\n"
    "       runner grade --rubric R --submissions DIR [GRADE OPTION...] --slurm --shards K [SLURM OPTION...]\n"
    "\n"
    "Hands a sweep (or a grading run) to Slurm: a job array of K tasks, task I running shard I/K of it\n"
    "(runner --shard I/K), and a merge job that starts once every task has ended (--dependency=afterany)\n"
    "and runs `runner merge --expect K`. Prints the array's and the merge's job ids and the merge command.\n"
    "\n"
    "Slurm options:\n"
    "  --slurm               Submit to Slurm (sbatch must be on the PATH)\n"
    "  --shards K            Number of shards, one array task each (also: --array-size K)\n"
    "  --partition P         Partition to run in (one whose GPUs the sweep's config is written for)\n"
    "  --gpus-per-task N     GPUs per shard, asked as --gres=gpu:N (default: 1 when the sweep has a CUDA\n"
    "                        kernel or the rubric is not for CPU kernels, else 0: no --gres)\n"
    "  --exclusive           A shard's node runs nothing else meanwhile (clean timing)\n"
    "  --time T              Time limit of each task (sbatch --time: minutes, HH:MM:SS, D-HH, ...)\n"
    "  --slurm-dir DIR       Folder for the scripts, the logs and (sweeps) the shards' reports\n"
    "                        (default: kreg-slurm/<name>-<UTC time>)\n"
    "  --dry-run             Print the scripts and the sbatch commands; submit nothing, write nothing\n"
    "  --wait                Wait until the array and the merge have ended, print the merge's output, and\n"
    "                        exit with the merge's status\n"
    "\n"
    "Every other option is the sweep's (runner --help) or the grader's (runner grade --help). A sweep's\n"
    "--json/--csv name the merged report (default: DIR/<name>.json and .csv); grading's --out is the merged\n"
    "gradebook's folder, the shards' results going to OUT/shard-I-of-K/. Jobs get the submitting shell's\n"
    "environment (sbatch's default), so KREG_SECRET_SEED reaches the graders without being written down.\n"
    "\n"
    "Exit status: 0 submitted (with --wait: the merge's exit status); 2 bad command line, config or rubric;\n"
    "3 sbatch is missing or refused the job.\n";

namespace {

int whole_number(const std::string& option, const std::string& text, int min) {
    size_t used = 0;
    long value = -1;
    try {
        value = std::stol(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || value < min || value > 100000)
        throw std::invalid_argument(option + " takes a whole number >= " + std::to_string(min) + ", got '" + text +
                                    "'");
    return int(value);
}

}  // namespace

SubmitOptions take_submit_options(const std::vector<std::string>& args, std::vector<std::string>& rest) {
    static const std::map<std::string, bool> kTakesValue = {
        {"--slurm", false},        {"--exclusive", false}, {"--dry-run", false},   {"--wait", false},
        {"--help", false},         {"-h", false},          {"--partition", true},  {"--time", true},
        {"--gpus-per-task", true}, {"--shards", true},     {"--array-size", true}, {"--slurm-dir", true}};
    SubmitOptions o;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& word = args[i];
        const size_t eq = word.find('=');
        const std::string name = word.rfind("--", 0) == 0 && eq != std::string::npos ? word.substr(0, eq) : word;
        const auto known = kTakesValue.find(name);
        if (known == kTakesValue.end()) {
            rest.push_back(word);
            continue;
        }
        std::string value;
        if (known->second) {
            if (eq != std::string::npos)
                value = word.substr(eq + 1);
            else if (i + 1 < args.size())
                value = args[++i];
            else
                throw std::invalid_argument(name + " needs a value");
            if (value.empty()) throw std::invalid_argument(name + " needs a value");
        } else if (eq != std::string::npos) {
            throw std::invalid_argument(name + " takes no value");
        }
        if (name == "--slurm")
            o.slurm = true;
        else if (name == "--exclusive")
            o.exclusive = true;
        else if (name == "--dry-run")
            o.dry_run = true;
        else if (name == "--wait")
            o.wait = true;
        else if (name == "--help" || name == "-h")
            o.help = true;
        else if (name == "--partition")
            o.partition = value;
        else if (name == "--time")
            o.time_limit = value;
        else if (name == "--slurm-dir")
            o.slurm_dir = value;
        else if (name == "--gpus-per-task")
            o.gpus_per_task = whole_number(name, value, 0);
        else if (o.shards)
            throw std::invalid_argument("--shards and --array-size say the same; give one");
        else
            o.shards = whole_number(name, value, 1);
    }
    if (o.help) return o;
    if (!o.slurm) throw std::invalid_argument("--slurm is required (Slurm is the scheduler kreg submits to)");
    if (!o.shards) throw std::invalid_argument("say how many shards: --shards K (or --array-size K)");
    if (o.dry_run && o.wait) throw std::invalid_argument("--dry-run submits nothing to --wait for");
    return o;
}

namespace {

std::string utc_now_compact() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    tm = platform::utc_calendar(now);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}

}  // namespace

// DIR: --slurm-dir as given, or kreg-slurm/<name>-<UTC time> (-2, -3, ... when taken); absolute.
fs::path choose_slurm_dir(const SubmitOptions& o, const std::string& name) {
    if (o.slurm_dir) return fs::absolute(*o.slurm_dir).lexically_normal();
    const fs::path stem = fs::absolute("kreg-slurm") / (name + "-" + utc_now_compact());
    fs::path dir = stem;
    for (int n = 2; fs::exists(dir); ++n) dir = stem.string() + "-" + std::to_string(n);
    return dir;
}

namespace {

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// sbatch, or the reason it failed as the user should read it; nullopt after printing the error.
std::optional<std::string> sbatch(const std::vector<std::string>& command, std::ostream& err) {
    ProgramResult r;
    try {
        r = run_program(command);
    } catch (const std::exception& e) {
        err << "runner submit: " << e.what() << "\n";
        return std::nullopt;
    }
    if (r.exit_status != 0) {
        err << "runner submit: sbatch failed (exit " << r.exit_status << "): " << trimmed(r.err.empty() ? r.out : r.err)
            << "\n  command: " << command_line(command) << "\n";
        return std::nullopt;
    }
    try {
        return parse_sbatch_job_id(r.out);
    } catch (const std::exception& e) {
        err << "runner submit: " << e.what() << "\n";
        return std::nullopt;
    }
}

// `scontrol show job -o ID` read into lines; nullopt (after saying why) when scontrol cannot tell.
std::optional<std::vector<JobLine>> job_lines(const std::string& id, std::ostream& err) {
    ProgramResult r;
    try {
        r = run_program({"scontrol", "show", "job", "-o", id});
    } catch (const std::exception& e) {
        err << "runner submit: " << e.what() << "\n";
        return std::nullopt;
    }
    if (r.exit_status != 0) {
        err << "runner submit: scontrol show job " << id << " failed (exit " << r.exit_status << "): " << trimmed(r.err)
            << "\n";
        return std::nullopt;
    }
    return parse_scontrol_jobs(r.out);
}

std::string describe_tasks(const std::vector<JobLine>& tasks) {
    std::map<std::string, int> by_state;
    for (const auto& t : tasks) {
        // A pending range ("2-4") is several tasks.
        int count = 1;
        const size_t dash = t.array_task_id.find('-');
        if (dash != std::string::npos) {
            try {
                count = std::stoi(t.array_task_id.substr(dash + 1)) - std::stoi(t.array_task_id) + 1;
            } catch (const std::exception&) {
            }
        }
        by_state[t.state] += count;
    }
    std::string out;
    for (const auto& [state, n] : by_state) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + state;
    return out;
}

// Polls scontrol until the merge job (and with it, by its dependency, every array task) has ended.
int wait_for(const ShardedJob& job, const std::string& array_id, const std::string& merge_id, std::ostream& out,
             std::ostream& err) {
    std::string last_said;
    std::optional<std::vector<JobLine>> merge, tasks;
    // A busy controller may time out a query now and then; only a job it keeps not knowing ends the wait.
    int failures = 0;
    for (;;) {
        tasks = job_lines(array_id, err);
        merge = job_lines(merge_id, err);
        if (!tasks || !merge || merge->empty()) {
            if (++failures < 10) {
                std::this_thread::sleep_for(std::chrono::seconds(3));
                continue;
            }
            err << "runner submit: cannot follow the jobs any more; the merge's log is " << merge_log(job).string()
                << "\n";
            return 1;
        }
        failures = 0;
        const std::string said = "shards: " + describe_tasks(*tasks) + "; merge: " + merge->front().state;
        if (said != last_said) err << "runner submit: " << said << "\n";
        last_said = said;
        if (all_final(*merge)) break;
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    std::vector<JobLine> sorted = *tasks;
    std::sort(sorted.begin(), sorted.end(), [](const JobLine& a, const JobLine& b) {
        return std::atoi(a.array_task_id.c_str()) < std::atoi(b.array_task_id.c_str());
    });
    for (const auto& t : sorted)
        out << "shard " << t.array_task_id << "/" << job.tasks << ": job " << array_id << "_" << t.array_task_id << " "
            << t.state << ", exit " << exit_status_of(t) << " (log " << task_log(job, t.array_task_id).string()
            << ")\n";
    const JobLine& m = merge->front();
    const int status = exit_status_of(m);
    out << "merge: job " << merge_id << " " << m.state << ", exit " << status << "\n";
    out << "---- " << merge_log(job).string() << "\n" << read_file(merge_log(job));
    return status;
}

}  // namespace

// The config's file name as a job name and a folder name: what is not a letter, a digit, '_', '-', '.' or
// '+' becomes '_' ("my sweep%1.json" -> my_sweep_1), so that no character of it reaches a script unchecked.
std::string job_name_of(const std::string& stem) {
    std::string name;
    for (char c : stem) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                           c == '-' || c == '.' || c == '+';
        name += plain ? c : '_';
    }
    return name.empty() || name.front() == '.' ? "cli" + name : name;
}

// Writes the scripts, submits the array and the merge after it, says how to follow and merge by hand.
int submit_sharded_job(const ShardedJob& job, const fs::path& dir, const SubmitOptions& o, const std::string& what,
                       std::ostream& out, std::ostream& err) {
    // Every value an #SBATCH line carries passes its field's check, or nothing is written or submitted.
    try {
        check_script_values(job);
    } catch (const ScriptValueError& e) {
        err << "runner submit: " << e.what() << "\nTry 'runner submit --help'.\n";
        return 2;
    }
    const fs::path array_path = dir / "array.sbatch", merge_path = dir / "merge.sbatch";
    const std::string array_text = array_script(job), merge_text = merge_script(job);
    const auto array_command = sbatch_array_command(array_path);
    const auto merge_command = sbatch_merge_command(merge_path, "<array job id>");
    if (o.dry_run) {
        out << "# " << array_path.string() << "\n"
            << array_text << "\n# " << merge_path.string() << "\n"
            << merge_text << "\n# submitted with (nothing was written or submitted: --dry-run)\n"
            << command_line(array_command) << "\n"
            << command_line(merge_command) << "\n";
        return 0;
    }
    try {
        if (fs::exists(dir) && !fs::is_empty(dir)) {
            err << "runner submit: " << dir.string() << " exists and is not empty; give another --slurm-dir\n";
            return 3;
        }
        fs::create_directories(job.log_dir);
        write_file(array_path, array_text);
        write_file(merge_path, merge_text);
    } catch (const std::exception& e) {
        err << "runner submit: " << e.what() << "\n";
        return 3;
    }
    const auto array_id = sbatch(array_command, err);
    if (!array_id) return 3;
    const auto merge_id = sbatch(sbatch_merge_command(merge_path, *array_id), err);
    if (!merge_id) {
        err << "runner submit: the array job " << *array_id
            << " runs without its merge; once it has ended, merge by hand:\n  " << command_line(job.merge_command)
            << "\n";
        return 3;
    }
    out << "array job: " << *array_id << " (" << job.tasks << " shards of " << what << ")\n"
        << "merge job: " << *merge_id << " (starts when every shard has ended)\n"
        << "scripts: " << array_path.string() << " " << merge_path.string() << "\n"
        << "logs: " << job.log_dir.string() << "\n"
        << "follow: squeue -j " << *array_id << "," << *merge_id << "\n"
        << "merge command: " << command_line(job.merge_command) << "\n";
    out.flush();
    if (!o.wait) return 0;
    return wait_for(job, *array_id, *merge_id, out, err);
}

ShardedJob base_job(const SubmitOptions& o, const std::string& name, const fs::path& dir, int gpus) {
    ShardedJob job;
    job.name = "kreg-" + name;
    job.tasks = *o.shards;
    job.partition = o.partition;
    job.gpus_per_task = gpus;
    job.exclusive = o.exclusive;
    job.time_limit = o.time_limit;
    job.workdir = fs::current_path();
    job.log_dir = dir / "logs";
    return job;
}

void add_sweep_commands(ShardedJob& job, const std::string& exe, const std::vector<std::string>& sweep,
                        const fs::path& dir, const std::string& name, const std::vector<std::string>& json,
                        const std::vector<std::string>& csv, bool force) {
    const int shards = job.tasks;
    const std::string of_k = "-of-" + std::to_string(shards);
    job.task_command = {exe};
    job.task_command.insert(job.task_command.end(), sweep.begin(), sweep.end());
    // The runner writes "{shard}" as shard-I-of-K: every task's command line is then the same but for
    // --shard, as `runner merge` checks (and prints it, with another --shard, to re-run a missing shard).
    const std::string shard_stem = (dir / "{shard}").string();
    job.task_command.insert(job.task_command.end(), {"--shard", std::string(kTaskIndex) + "/" + std::to_string(shards),
                                                     "--json", shard_stem + ".json", "--csv", shard_stem + ".csv"});
    const std::string merged_json = json.empty() ? (dir / (name + ".json")).string() : json.back();
    job.merge_command = {exe, "merge", "--expect", std::to_string(shards)};
    if (force) job.merge_command.push_back("--force");
    if (!csv.empty()) job.merge_command.insert(job.merge_command.end(), {"--csv", csv.back()});
    job.merge_command.push_back(merged_json);
    for (int i = 1; i <= shards; ++i)
        job.merge_command.push_back((dir / ("shard-" + std::to_string(i) + of_k + ".json")).string());
}

void add_grade_commands(ShardedJob& job, const std::string& exe, const std::vector<std::string>& args,
                        const std::string& out) {
    const int shards = job.tasks;
    job.task_command = {exe, "grade"};
    job.task_command.insert(job.task_command.end(), args.begin(), args.end());
    job.task_command.insert(job.task_command.end(),
                            {"--shard", std::string(kTaskIndex) + "/" + std::to_string(shards)});
    job.merge_command = {exe, "merge", "--expect", std::to_string(shards), out};
    for (int i = 1; i <= shards; ++i)
        job.merge_command.push_back(
            (fs::path(out) / ("shard-" + std::to_string(i) + "-of-" + std::to_string(shards))).string());
}

}  // namespace kreg::slurm
