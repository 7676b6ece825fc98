#include "cli.hpp"

#include "common/operation_table.hpp"

#include <algorithm>
#include <cstdlib>
#include <cxxopts.hpp>

#include <stdexcept>

namespace kreg::app {
namespace {

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty()) out.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

}  // namespace

namespace {

int shard_number(const std::string& text, const std::string& what) {
    size_t used = 0;
    long value = 0;
    try {
        value = std::stol(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || value < 0 || value > 1000000)
        throw std::invalid_argument("--shard: " + what + " must be a whole number, got '" + text + "'");
    return int(value);
}

}  // namespace

Shard parse_shard(const std::string& text, const std::function<const char*(const char*)>& env) {
    Shard s;
    if (text == "auto") {
        const char* id = env("SLURM_ARRAY_TASK_ID");
        const char* count = env("SLURM_ARRAY_TASK_COUNT");
        const char* min = env("SLURM_ARRAY_TASK_MIN");
        if (!id || !count)
            throw std::invalid_argument(
                "--shard auto: not a Slurm array task (SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT are not set)");
        s.index = shard_number(id, "SLURM_ARRAY_TASK_ID") - (min ? shard_number(min, "SLURM_ARRAY_TASK_MIN") : 0) + 1;
        s.count = shard_number(count, "SLURM_ARRAY_TASK_COUNT");
    } else {
        const size_t slash = text.find('/');
        if (slash == std::string::npos)
            throw std::invalid_argument("--shard takes I/K (e.g. 2/4) or auto, got '" + text + "'");
        s.index = shard_number(text.substr(0, slash), "I");
        s.count = shard_number(text.substr(slash + 1), "K");
    }
    if (s.count < 1 || s.index < 1 || s.index > s.count)
        throw std::invalid_argument("--shard: needs 1 <= I <= K, got " + std::to_string(s.index) + "/" +
                                    std::to_string(s.count));
    return s;
}

DevicesSpec parse_devices(const std::string& text) {
    DevicesSpec d;
    if (text == "all") {
        d.all = true;
        return d;
    }
    for (const auto& item : split_list(text)) {
        size_t used = 0;
        int ordinal = -1;
        try {
            ordinal = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || ordinal < 0)
            throw std::invalid_argument("--devices takes 'all' or device ordinals (0,1), got '" + item + "'");
        if (std::find(d.ordinals.begin(), d.ordinals.end(), ordinal) != d.ordinals.end())
            throw std::invalid_argument("--devices: device " + item + " is named twice");
        d.ordinals.push_back(ordinal);
    }
    if (d.ordinals.empty())
        throw std::invalid_argument("--devices takes 'all' or device ordinals (0,1), got '" + text + "'");
    return d;
}

namespace {

// Every option of the sweep command line, in the groups --help shows.
cxxopts::Options sweep_options() {
    cxxopts::Options options("runner", "kreg: load kernel plugins (" + kreg::operation_names(", ") +
                                           "), verify them against a reference, time them, report.");
    options.set_width(100);
    // clang-format off
    options.add_options("General")
        ("h,help", "Show this help")
        ("version", "Print the kreg version and plugin ABI")
        ("l,list", "List every kernel of every plugin found, with why it cannot run here if so")
        ("format", "Output format of --list: table or json", cxxopts::value<std::string>()->default_value("table"))
        ("wide", "--list: print every cell whole (by default lines fit 120 columns)")
        ("c,config", "Sweep config (JSON); relative paths are tried against the working directory, then the configs folder", cxxopts::value<std::string>())
        ("dry-run", "Print the planned jobs and exit")
        ("v,verbose", "Show what workers print on stderr");
    options.add_options("Quick run (override a config's values)")
        ("k,kernels", "Kernel names or globs, comma-separated", cxxopts::value<std::string>())
        ("operation", "What the kernels compute: " + kreg::operation_names() + " (default gemm)", cxxopts::value<std::string>())
        ("sizes", "Square sizes, comma-separated (512,1024)", cxxopts::value<std::string>())
        ("shape", "One shape, the operation's sizes joined by x: MxNxK (gemm), MxN (transposes); repeatable", cxxopts::value<std::vector<std::string>>())
        ("block", "Tile edges of an operation with a per-call block, comma-separated (1,2,16); every shape runs with each", cxxopts::value<std::string>())
        ("dtype", "Element types, comma-separated (fp32,tf32,bf16,fp16)", cxxopts::value<std::string>())
        ("warmup", "Untimed calls before timing", cxxopts::value<int>())
        ("repeat", "Timed calls per row", cxxopts::value<int>())
        ("time-budget", "Seconds of timed calls per row (stops early)", cxxopts::value<double>())
        ("verify", "Verify results against the reference (default)")
        ("no-verify", "Do not verify results")
        ("tolerance", "Normalised error tolerance (default per dtype)", cxxopts::value<double>())
        ("timeout", "Seconds one row may take before its worker is killed", cxxopts::value<double>())
        ("call-timeout", "Seconds a single kernel call may take, CUDA launches until they finish (the worker ends; the row is timeout)", cxxopts::value<double>())
        ("seed", "Seed of the random inputs", cxxopts::value<uint64_t>())
        ("baseline", "Kernel that speed-ups are relative to: NAME for every dtype, or DTYPE=NAME,... (e.g. fp32=cublas_sgemm,bf16=cublas_bf16)", cxxopts::value<std::string>())
        ("device", "CUDA device ordinal", cxxopts::value<int>())
        ("devices", "Run the CUDA jobs on these GPUs at once, one worker per GPU: 'all' or ordinals (0,1)", cxxopts::value<std::string>())
        ("warm-cache", "CUDA: do not flush L2 between timed launches")
        ("timer", "CUDA: auto (CUPTI's kernel records where CUPTI works, else events, default), cupti or events", cxxopts::value<std::string>())
        ("json", "Write the JSON report here", cxxopts::value<std::string>())
        ("csv", "Write the CSV report here", cxxopts::value<std::string>())
        ("output-dir", "Folder for reports when --json/--csv and the config name none", cxxopts::value<std::string>()->default_value("kreg-reports"))
        ("force", "Overwrite reports that exist (otherwise the runner refuses to start)")
        ("shard", "Run only slice I of K of the plan (I/K; K runs cover it once), or 'auto' for this Slurm array task", cxxopts::value<std::string>())
        ("resume", "Continue the interrupted sweep of REPORT (its .json or .journal.jsonl): only the missing rows run", cxxopts::value<std::string>())
        ("no-calibrate", "Skip measuring the GPU's copy bandwidth and cuBLAS ceilings")
        ("strict", "Grading's measurement: fresh inputs in fresh buffers and a verified output for every call, inputs checked, device-wide sync");
    options.add_options("Lab conveniences")
        ("stress", "Keep one kernel at one shape running back to back for SECONDS (watch nvidia-smi -l 1)", cxxopts::value<double>())
        ("profile", "With --isolation none: run each selected kernel once, inside an NVTX range named after it (for ncu/nsys); without: the shared-memory bank-conflict table under ncu (runner --profile --help)");
    options.add_options("Plugins and isolation")
        ("plugin-dir", "Also load every *.so in this folder; repeatable", cxxopts::value<std::vector<std::string>>())
        ("plugin", "Also load this plugin file; repeatable", cxxopts::value<std::vector<std::string>>())
        ("no-default-plugins", "Do not load the runner's own plugin folder or KREG_PLUGIN_PATH")
        ("isolation", "process: every plugin runs in a worker process (default); none: in this process, for debugging", cxxopts::value<std::string>()->default_value("process"))
        ("load-timeout", "Seconds a worker may take to start and load its plugin", cxxopts::value<double>()->default_value("60"));
    // clang-format on
    return options;
}

std::string help_text(const cxxopts::Options& options) {
    return options.help() +
           "\nSubcommands:\n"
           "  runner grade --rubric RUBRIC.json --submission PATH | --submissions DIR [OPTION...]\n"
           "        Grade untrusted student plugins against a rubric, confined (see 'runner grade --help')\n"
           "  runner submit --slurm --shards K [--partition P] [--exclusive] [--wait] --config X [OPTION...]\n"
           "        Run a sweep on Slurm as K shards (a job array) and merge them (see 'runner submit --help')\n"
           "  runner compare A.json B.json [--control KERNEL,..] [--threshold PCT] [--json FILE] [--csv FILE]\n"
           "        Compare two reports row by row from their raw samples; exit 1 on a regression\n"
           "  runner merge --expect K OUT REPORT...\n"
           "        Put the K shards of a sweep (--shard) or of a grading run back together (see 'runner merge "
           "--help')\n";
}

// --help, --version, the listing, the lab conveniences and --config.
void read_general(const cxxopts::ParseResult& r, CommandLine& cl) {
    cl.help = r.count("help") > 0;
    cl.version = r.count("version") > 0;
    cl.list = r.count("list") > 0;
    cl.wide = r.count("wide") > 0;
    cl.dry_run = r.count("dry-run") > 0;
    cl.verbose = r.count("verbose") > 0;
    cl.calibrate = r.count("no-calibrate") == 0;
    cl.profile = r.count("profile") > 0;
    cl.strict = r.count("strict") > 0;
    if (r.count("stress")) {
        cl.stress_s = r["stress"].as<double>();
        if (!(*cl.stress_s > 0)) throw std::invalid_argument("--stress must be a number of seconds > 0");
        if (cl.profile) throw std::invalid_argument("--stress and --profile cannot be combined");
    }
    cl.format = r["format"].as<std::string>();
    if (cl.format != "table" && cl.format != "json")
        throw std::invalid_argument("--format must be table or json, got '" + cl.format + "'");
    if (r.count("config")) cl.config = r["config"].as<std::string>();
}

// What the kernels, operation, shapes, blocks and dtypes of a config become.
void read_selection_overrides(const cxxopts::ParseResult& r, CommandLine& cl) {
    auto& o = cl.overrides;
    if (r.count("kernels")) {
        o.kernels = split_list(r["kernels"].as<std::string>());
        if (o.kernels->empty()) throw std::invalid_argument("--kernels: no kernel names given");
    }
    if (r.count("operation")) {
        const std::string name = r["operation"].as<std::string>();
        o.operation = parse_operation(name);
        if (!o.operation)
            throw std::invalid_argument("--operation: unknown operation '" + name +
                                        "' (known: " + kreg::operation_names(", ") + ")");
    }
    // What --sizes and --shape mean depends on the operation, which a config may name: apply_overrides
    // reads them. Their syntax is checked here.
    if (r.count("sizes")) {
        std::vector<int64_t> sizes;
        for (const Shape& s : parse_sizes_option(r["sizes"].as<std::string>())) sizes.push_back(s.m);
        o.sizes = sizes;
    }
    const auto named = [](const char* option, const auto& parse) {
        try {
            return parse();
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string(option) + ": " + e.what());
        }
    };
    if (r.count("shape")) {
        o.shape_texts = r["shape"].as<std::vector<std::string>>();
        for (const auto& s : *o.shape_texts) named("--shape", [&] { return parse_dims_option(s); });
    }
    if (r.count("block"))
        o.blocks = named("--block", [&] { return parse_blocks_option(r["block"].as<std::string>()); });
    if (r.count("dtype")) {
        std::vector<DType> dtypes;
        for (const auto& name : split_list(r["dtype"].as<std::string>())) {
            const auto d = parse_dtype(name);
            if (!d)
                throw std::invalid_argument("--dtype: unknown dtype '" + name + "' (known: fp32, tf32, bf16, fp16)");
            dtypes.push_back(*d);
        }
        if (dtypes.empty()) throw std::invalid_argument("--dtype: no dtype given");
        o.dtypes = dtypes;
    }
}

// How each row is measured, where the reports go, the shard and the resumed report.
void read_run_overrides(const cxxopts::ParseResult& r, CommandLine& cl) {
    auto& o = cl.overrides;
    if (r.count("warmup")) o.warmup = r["warmup"].as<int>();
    if (r.count("repeat")) o.repeats = r["repeat"].as<int>();
    if (r.count("time-budget")) o.time_budget_s = r["time-budget"].as<double>();
    if (r.count("verify") && r.count("no-verify"))
        throw std::invalid_argument("--verify and --no-verify contradict each other");
    if (r.count("verify")) o.verify = true;
    if (r.count("no-verify")) o.verify = false;
    if (r.count("tolerance")) o.tolerance = r["tolerance"].as<double>();
    if (r.count("timeout")) o.timeout_s = r["timeout"].as<double>();
    if (r.count("call-timeout")) {
        cl.call_timeout_s = r["call-timeout"].as<double>();
        if (!(*cl.call_timeout_s > 0)) throw std::invalid_argument("--call-timeout must be a number of seconds > 0");
    }
    if (r.count("seed")) o.seed = r["seed"].as<uint64_t>();
    if (r.count("baseline")) o.baseline = parse_baseline_option(r["baseline"].as<std::string>());
    if (r.count("device")) o.device = r["device"].as<int>();
    if (r.count("devices")) {
        cl.devices = parse_devices(r["devices"].as<std::string>());
        if (r.count("device"))
            throw std::invalid_argument(
                "--device and --devices cannot be combined (--devices 1 runs on device 1 alone)");
        if (cl.stress_s || cl.profile)
            throw std::invalid_argument(
                "--devices cannot be combined with --stress or --profile, which run one kernel on one device");
    }
    if (r.count("warm-cache")) o.warm_cache = true;
    if (r.count("timer")) {
        const std::string name = r["timer"].as<std::string>();
        o.timer = parse_timer_choice(name);
        if (!o.timer) throw std::invalid_argument("--timer: unknown timer '" + name + "' (known: auto, cupti, events)");
    }
    if (r.count("json")) o.json = r["json"].as<std::string>();
    if (r.count("csv")) o.csv = r["csv"].as<std::string>();
    cl.output_dir = r["output-dir"].as<std::string>();
    cl.force = r.count("force") > 0;
    if (r.count("shard"))
        cl.shard = parse_shard(r["shard"].as<std::string>(), [](const char* name) { return std::getenv(name); });
    if (r.count("resume")) {
        cl.resume = r["resume"].as<std::string>();
        // The plan comes from the report's own command line; anything else here would silently be ignored
        // or make a report whose rows were measured two ways.
        for (const auto& kv : r.arguments())
            if (kv.key() != "resume" && kv.key() != "verbose" && kv.key() != "v")
                throw std::invalid_argument("--resume takes no other option but --verbose (got --" + kv.key() +
                                            "): the sweep continues with the options recorded in the report");
    }
}

void read_plugins_and_isolation(const cxxopts::ParseResult& r, CommandLine& cl) {
    if (r.count("plugin-dir")) cl.plugin_dirs = r["plugin-dir"].as<std::vector<std::string>>();
    if (r.count("plugin")) cl.plugin_files = r["plugin"].as<std::vector<std::string>>();
    cl.default_plugins = r.count("no-default-plugins") == 0;
    const std::string isolation = r["isolation"].as<std::string>();
    if (isolation == "process")
        cl.isolation = Isolation::process;
    else if (isolation == "none")
        cl.isolation = Isolation::none;
    else
        throw std::invalid_argument("--isolation must be process or none, got '" + isolation + "'");
    cl.load_timeout_s = r["load-timeout"].as<double>();
    if (!(cl.load_timeout_s > 0)) throw std::invalid_argument("--load-timeout must be > 0");
    if (cl.devices && cl.isolation == Isolation::none)
        throw std::invalid_argument("--devices needs --isolation process: each GPU gets its own worker");
}

}  // namespace

CommandLine parse_command_line(int argc, char** argv) {
    CommandLine cl;
    for (int i = 0; i < argc; ++i) cl.argv.emplace_back(argv[i]);
    cxxopts::Options options = sweep_options();
    cl.help_text = help_text(options);
    cxxopts::ParseResult r;
    try {
        r = options.parse(argc, argv);
    } catch (const cxxopts::exceptions::exception& e) {
        throw std::invalid_argument(e.what());
    }
    if (!r.unmatched().empty()) throw std::invalid_argument("unexpected argument '" + r.unmatched().front() + "'");
    read_general(r, cl);
    read_selection_overrides(r, cl);
    read_run_overrides(r, cl);
    read_plugins_and_isolation(r, cl);
    return cl;
}

}  // namespace kreg::app
