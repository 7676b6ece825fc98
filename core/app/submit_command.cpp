#include "submit_command.hpp"

#include "config/sweep_config.hpp"
#include "grade/rubric.hpp"
#include "grade/submission.hpp"
#include "paths.hpp"
#include "slurm/client.hpp"
#include "slurm/job_state.hpp"
#include "slurm/sbatch_script.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace kreg::app {
namespace fs = std::filesystem;

namespace {

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

struct SubmitOptions {
    bool slurm = false, exclusive = false, dry_run = false, wait = false, help = false;
    std::optional<std::string> partition, time_limit, slurm_dir;
    std::optional<int> gpus_per_task, shards;
};

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

// Takes submit's own options out of args (--name VALUE and --name=VALUE); the rest keeps its order.
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

// The value of --NAME VALUE / --NAME=VALUE in args (every one), and whether it occurs as a flag.
std::vector<std::string> values_of(const std::vector<std::string>& args, const std::string& name) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == name && i + 1 < args.size())
            out.push_back(args[++i]);
        else if (args[i].rfind(name + "=", 0) == 0)
            out.push_back(args[i].substr(name.size() + 1));
    }
    return out;
}
bool has_option(const std::vector<std::string>& args, const std::string& name) {
    return std::any_of(args.begin(), args.end(),
                       [&](const std::string& a) { return a == name || a.rfind(name + "=", 0) == 0; });
}
// args without every --NAME VALUE / --NAME=VALUE (or the flag --NAME when takes_value is false).
std::vector<std::string> without(const std::vector<std::string>& args, const std::string& name, bool takes_value) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == name) {
            if (takes_value) ++i;
            continue;
        }
        if (args[i].rfind(name + "=", 0) == 0) continue;
        out.push_back(args[i]);
    }
    return out;
}

std::string utc_now_compact() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}

// DIR: --slurm-dir as given, or kreg-slurm/<name>-<UTC time> (-2, -3, ... when taken); absolute.
fs::path choose_slurm_dir(const SubmitOptions& o, const std::string& name) {
    if (o.slurm_dir) return fs::absolute(*o.slurm_dir).lexically_normal();
    const fs::path stem = fs::absolute("kreg-slurm") / (name + "-" + utc_now_compact());
    fs::path dir = stem;
    for (int n = 2; fs::exists(dir); ++n) dir = stem.string() + "-" + std::to_string(n);
    return dir;
}

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
std::optional<std::string> sbatch(const std::vector<std::string>& command) {
    slurm::ProgramResult r;
    try {
        r = slurm::run_program(command);
    } catch (const std::exception& e) {
        std::cerr << "runner submit: " << e.what() << "\n";
        return std::nullopt;
    }
    if (r.exit_status != 0) {
        std::cerr << "runner submit: sbatch failed (exit " << r.exit_status
                  << "): " << trimmed(r.err.empty() ? r.out : r.err) << "\n  command: " << slurm::command_line(command)
                  << "\n";
        return std::nullopt;
    }
    try {
        return slurm::parse_sbatch_job_id(r.out);
    } catch (const std::exception& e) {
        std::cerr << "runner submit: " << e.what() << "\n";
        return std::nullopt;
    }
}

// `scontrol show job -o ID` read into lines; nullopt (after saying why) when scontrol cannot tell.
std::optional<std::vector<slurm::JobLine>> job_lines(const std::string& id) {
    slurm::ProgramResult r;
    try {
        r = slurm::run_program({"scontrol", "show", "job", "-o", id});
    } catch (const std::exception& e) {
        std::cerr << "runner submit: " << e.what() << "\n";
        return std::nullopt;
    }
    if (r.exit_status != 0) {
        std::cerr << "runner submit: scontrol show job " << id << " failed (exit " << r.exit_status
                  << "): " << trimmed(r.err) << "\n";
        return std::nullopt;
    }
    return slurm::parse_scontrol_jobs(r.out);
}

std::string describe_tasks(const std::vector<slurm::JobLine>& tasks) {
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
int wait_for(const slurm::ShardedJob& job, const std::string& array_id, const std::string& merge_id) {
    std::string last_said;
    std::optional<std::vector<slurm::JobLine>> merge, tasks;
    // A busy controller may time out a query now and then; only a job it keeps not knowing ends the wait.
    int failures = 0;
    for (;;) {
        tasks = job_lines(array_id);
        merge = job_lines(merge_id);
        if (!tasks || !merge || merge->empty()) {
            if (++failures < 10) {
                std::this_thread::sleep_for(std::chrono::seconds(3));
                continue;
            }
            std::cerr << "runner submit: cannot follow the jobs any more; the merge's log is "
                      << slurm::merge_log(job).string() << "\n";
            return 1;
        }
        failures = 0;
        const std::string said = "shards: " + describe_tasks(*tasks) + "; merge: " + merge->front().state;
        if (said != last_said) std::cerr << "runner submit: " << said << "\n";
        last_said = said;
        if (slurm::all_final(*merge)) break;
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    std::vector<slurm::JobLine> sorted = *tasks;
    std::sort(sorted.begin(), sorted.end(), [](const slurm::JobLine& a, const slurm::JobLine& b) {
        return std::atoi(a.array_task_id.c_str()) < std::atoi(b.array_task_id.c_str());
    });
    for (const auto& t : sorted)
        std::cout << "shard " << t.array_task_id << "/" << job.tasks << ": job " << array_id << "_" << t.array_task_id
                  << " " << t.state << ", exit " << slurm::exit_status_of(t) << " (log "
                  << slurm::task_log(job, t.array_task_id).string() << ")\n";
    const slurm::JobLine& m = merge->front();
    const int status = slurm::exit_status_of(m);
    std::cout << "merge: job " << merge_id << " " << m.state << ", exit " << status << "\n";
    std::cout << "---- " << slurm::merge_log(job).string() << "\n" << read_file(slurm::merge_log(job));
    return status;
}

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
int submit(const slurm::ShardedJob& job, const fs::path& dir, const SubmitOptions& o, const std::string& what) {
    // Every value an #SBATCH line carries passes its field's check, or nothing is written or submitted.
    try {
        slurm::check_script_values(job);
    } catch (const slurm::ScriptValueError& e) {
        std::cerr << "runner submit: " << e.what() << "\nTry 'runner submit --help'.\n";
        return 2;
    }
    const fs::path array_path = dir / "array.sbatch", merge_path = dir / "merge.sbatch";
    const std::string array_text = slurm::array_script(job), merge_text = slurm::merge_script(job);
    const auto array_command = slurm::sbatch_array_command(array_path);
    const auto merge_command = slurm::sbatch_merge_command(merge_path, "<array job id>");
    if (o.dry_run) {
        std::cout << "# " << array_path.string() << "\n"
                  << array_text << "\n# " << merge_path.string() << "\n"
                  << merge_text << "\n# submitted with (nothing was written or submitted: --dry-run)\n"
                  << slurm::command_line(array_command) << "\n"
                  << slurm::command_line(merge_command) << "\n";
        return 0;
    }
    try {
        if (fs::exists(dir) && !fs::is_empty(dir)) {
            std::cerr << "runner submit: " << dir.string() << " exists and is not empty; give another --slurm-dir\n";
            return 3;
        }
        fs::create_directories(job.log_dir);
        write_file(array_path, array_text);
        write_file(merge_path, merge_text);
    } catch (const std::exception& e) {
        std::cerr << "runner submit: " << e.what() << "\n";
        return 3;
    }
    const auto array_id = sbatch(array_command);
    if (!array_id) return 3;
    const auto merge_id = sbatch(slurm::sbatch_merge_command(merge_path, *array_id));
    if (!merge_id) {
        std::cerr << "runner submit: the array job " << *array_id
                  << " runs without its merge; once it has ended, merge by hand:\n  "
                  << slurm::command_line(job.merge_command) << "\n";
        return 3;
    }
    std::cout << "array job: " << *array_id << " (" << job.tasks << " shards of " << what << ")\n"
              << "merge job: " << *merge_id << " (starts when every shard has ended)\n"
              << "scripts: " << array_path.string() << " " << merge_path.string() << "\n"
              << "logs: " << job.log_dir.string() << "\n"
              << "follow: squeue -j " << *array_id << "," << *merge_id << "\n"
              << "merge command: " << slurm::command_line(job.merge_command) << "\n";
    std::cout.flush();
    if (!o.wait) return 0;
    return wait_for(job, *array_id, *merge_id);
}

slurm::ShardedJob base_job(const SubmitOptions& o, const std::string& name, const fs::path& dir, int gpus) {
    slurm::ShardedJob job;
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

std::vector<std::string> args_of(int argc, char** argv) { return std::vector<std::string>(argv + 1, argv + argc); }

// The sweep's plan as `runner ARGS --dry-run` prints it ("ID  KERNEL  DTYPE  SHAPE  run|skip: ..."),
// and the backend of every kernel the same plugins give (`runner ARGS --list --format json`).
struct SweepCheck {
    size_t jobs = 0;
    bool has_cuda = false;
};
std::optional<SweepCheck> check_sweep(const std::string& exe, const std::vector<std::string>& args, int& exit_status) {
    std::vector<std::string> plan_command{exe};
    plan_command.insert(plan_command.end(), args.begin(), args.end());
    plan_command.push_back("--dry-run");
    const slurm::ProgramResult plan = slurm::run_program(plan_command);
    if (plan.exit_status != 0) {
        std::cerr << plan.err << "runner submit: the sweep does not plan (" << slurm::command_line(plan_command)
                  << " exited with " << plan.exit_status << "); nothing was submitted\n";
        exit_status = plan.exit_status == 2 ? 2 : 3;
        return std::nullopt;
    }
    SweepCheck check;
    std::set<std::string> kernels;
    std::istringstream lines(plan.out);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string id, kernel;
        if (words >> id >> kernel && kernel != "job(s)") {
            kernels.insert(kernel);
            ++check.jobs;
        }
    }
    // Every kernel the plugins give: --list narrows to --kernels, and the plan may hold more (a baseline).
    std::vector<std::string> list_command{exe};
    for (const auto& word : without(without(args, "--kernels", true), "-k", true)) list_command.push_back(word);
    list_command.insert(list_command.end(), {"--list", "--format", "json"});
    const slurm::ProgramResult list = slurm::run_program(list_command);
    try {
        for (const auto& k : nlohmann::json::parse(list.out).at("kernels"))
            if (kernels.count(k.at("name").get<std::string>()) && k.at("backend").get<std::string>() == "cuda")
                check.has_cuda = true;
    } catch (const std::exception& e) {
        std::cerr << "runner submit: cannot read the kernel list (" << slurm::command_line(list_command)
                  << "): " << e.what() << "; assuming CUDA kernels\n";
        check.has_cuda = true;
    }
    return check;
}

}  // namespace

bool grade_wants_slurm(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--slurm") return true;
    return false;
}

int run_submit_command(int argc, char** argv) {
    std::vector<std::string> rest;
    SubmitOptions o;
    try {
        o = take_submit_options(args_of(argc, argv), rest);
        if (o.help) {
            std::cout << kSubmitHelp;
            return 0;
        }
        for (const char* refused : {"--shard", "--resume", "--list", "--stress", "--profile", "--version", "--format"})
            if (has_option(rest, refused))
                throw std::invalid_argument(std::string(refused) +
                                            " cannot be submitted (each array task runs its own --shard I/K)");
    } catch (const std::exception& e) {
        std::cerr << "runner submit: " << e.what() << "\nTry 'runner submit --help'.\n";
        return 2;
    }
    const std::string exe = runner_executable().string();
    // The sweep's --json/--csv/--force belong to the merged report; each shard writes its own in DIR.
    const auto json = values_of(rest, "--json"), csv = values_of(rest, "--csv");
    const bool force = has_option(rest, "--force");
    std::vector<std::string> sweep = without(without(without(rest, "--json", true), "--csv", true), "--force", false);

    int status = 0;
    std::optional<SweepCheck> check;
    try {
        check = check_sweep(exe, sweep, status);
    } catch (const std::exception& e) {
        std::cerr << "runner submit: " << e.what() << "\n";
        return 3;
    }
    if (!check) return status;
    const int shards = *o.shards;
    if (size_t(shards) > check->jobs) {
        std::cerr << "runner submit: --shards " << shards << ": the sweep has " << check->jobs
                  << " job(s), so some shards would have nothing to run; use at most --shards " << check->jobs << "\n";
        return 2;
    }
    const int gpus = o.gpus_per_task.value_or(check->has_cuda ? 1 : 0);
    if (gpus == 0 && check->has_cuda)
        std::cerr << "runner submit: note: the sweep has CUDA kernels and asks for no GPU (--gpus-per-task 0)\n";

    const auto configs = values_of(sweep, "--config");
    const auto short_configs = values_of(sweep, "-c");
    std::string name = "cli";
    if (!configs.empty())
        name = job_name_of(fs::path(configs.back()).stem().string());
    else if (!short_configs.empty())
        name = job_name_of(fs::path(short_configs.back()).stem().string());
    const fs::path dir = choose_slurm_dir(o, name);

    slurm::ShardedJob job = base_job(o, name, dir, gpus);
    const std::string of_k = "-of-" + std::to_string(shards);
    job.task_command = {exe};
    job.task_command.insert(job.task_command.end(), sweep.begin(), sweep.end());
    // The runner writes "{shard}" as shard-I-of-K: every task's command line is then the same but for
    // --shard, as `runner merge` checks (and prints it, with another --shard, to re-run a missing shard).
    const std::string shard_stem = (dir / "{shard}").string();
    job.task_command.insert(job.task_command.end(),
                            {"--shard", std::string(slurm::kTaskIndex) + "/" + std::to_string(shards), "--json",
                             shard_stem + ".json", "--csv", shard_stem + ".csv"});
    const std::string merged_json = json.empty() ? (dir / (name + ".json")).string() : json.back();
    job.merge_command = {exe, "merge", "--expect", std::to_string(shards)};
    if (force) job.merge_command.push_back("--force");
    if (!csv.empty()) job.merge_command.insert(job.merge_command.end(), {"--csv", csv.back()});
    job.merge_command.push_back(merged_json);
    for (int i = 1; i <= shards; ++i)
        job.merge_command.push_back((dir / ("shard-" + std::to_string(i) + of_k + ".json")).string());
    return submit(job, dir, o, configs.empty() ? "the sweep" : configs.back());
}

int run_grade_slurm_command(int argc, char** argv) {
    std::vector<std::string> rest;
    SubmitOptions o;
    try {
        o = take_submit_options(args_of(argc, argv), rest);
        if (o.help) {
            std::cout << kSubmitHelp;
            return 0;
        }
        if (has_option(rest, "--shard"))
            throw std::invalid_argument("--shard cannot be submitted (each array task runs its own)");
        // A script file is read by whoever can read the folder; the seed travels in the environment.
        if (has_option(rest, "--secret-seed"))
            throw std::invalid_argument(
                "--secret-seed would be written into the job script; export KREG_SECRET_SEED instead "
                "(sbatch passes the environment to the jobs)");
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\nTry 'runner submit --help'.\n";
        return 2;
    }
    const fs::path exe = runner_executable();
    // The rubric and the submissions are read here, so that a typo fails now and not in K jobs.
    size_t students = 0;
    std::optional<Backend> backend;
    try {
        std::vector<Rubric> rubrics;
        for (const auto& path : values_of(rest, "--rubric"))
            rubrics.push_back(load_rubric(resolve_config_path(path, configs_dir(exe), "rubric")));
        if (rubrics.empty())
            throw std::invalid_argument("needs --rubric and at least one --submission or --submissions");
        backend = merge_rubrics(rubrics).backend;
        std::vector<fs::path> files;
        for (const auto& s : values_of(rest, "--submission")) files.emplace_back(s);
        std::optional<fs::path> folder;
        if (const auto d = values_of(rest, "--submissions"); !d.empty()) folder = d.back();
        std::vector<std::string> ignored;
        students = find_submissions(files, folder, ignored).size();
    } catch (const ConfigError& e) {
        std::cerr << "runner grade: rubric error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "runner grade: " << e.what() << "\n";
        return 2;
    }
    const int shards = *o.shards;
    if (students == 0) {
        std::cerr << "runner grade: no submissions found\n";
        return 3;
    }
    if (size_t(shards) > students) {
        std::cerr << "runner grade: --shards " << shards << ": there are " << students
                  << " submission(s); use at most --shards " << students << "\n";
        return 2;
    }
    const auto outs = values_of(rest, "--out");
    const std::string out = outs.empty() ? "grades" : outs.back();
    const int gpus = o.gpus_per_task.value_or(backend == Backend::cpu ? 0 : 1);
    const fs::path dir = choose_slurm_dir(o, "grade");

    slurm::ShardedJob job = base_job(o, "grade", dir, gpus);
    job.task_command = {exe.string(), "grade"};
    job.task_command.insert(job.task_command.end(), rest.begin(), rest.end());
    job.task_command.insert(job.task_command.end(),
                            {"--shard", std::string(slurm::kTaskIndex) + "/" + std::to_string(shards)});
    job.merge_command = {exe.string(), "merge", "--expect", std::to_string(shards), out};
    for (int i = 1; i <= shards; ++i)
        job.merge_command.push_back(
            (fs::path(out) / ("shard-" + std::to_string(i) + "-of-" + std::to_string(shards))).string());
    return submit(job, dir, o, "the grading run");
}

}  // namespace kreg::app
