// `runner --profile`: runs each selected kernel once under Nsight Compute (ncu) and shows its shared-memory
// bank conflicts in a table.
//
// The parent never loads a plugin or touches CUDA (as for sweeps): it lists the registry with
// `runner --list --format json`, and for every kernel (and every block of a block transpose) starts
//     ncu --clock-control none --metrics <shared-memory metrics> --csv --log-file F runner __profile_driver ...
// where the driver (profile_driver.cpp) loads the one plugin, fills the inputs with cudaMemcpy (no kernel
// of the harness runs, so everything ncu reports is the plugin's), calls the kernel once and exits. The
// CSV is read back and summed over the kernel's launches.
#include "profile_command.hpp"

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <fnmatch.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace kreg::app {
namespace fs = std::filesystem;

namespace {

// What ncu collects, in the table's order. Requests are warp-level shared load/store instructions;
// wavefronts are the passes the shared-memory pipeline needed for them (1 per request when there is no
// conflict, for 4-byte accesses); conflicts are the extra wavefronts.
const char* const kLdConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
const char* const kStConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
const char* const kLdWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
const char* const kStWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
const char* const kLdRequests = "smsp__sass_inst_executed_op_shared_ld.sum";
const char* const kStRequests = "smsp__sass_inst_executed_op_shared_st.sum";
const char* const kDuration = "gpu__time_duration.sum";

const char* const kHelpTail =
    "\nEach selected CUDA kernel runs once in `runner __profile_driver` under ncu (Nsight Compute, from the\n"
    "PATH or /usr/local/cuda/bin; --ncu names another). Transposes run at each MxN --shape, GEMMs at each\n"
    "MxNxK one, block transposes once per block of --blocks (at each MxN shape the block divides, else at\n"
    "the largest square multiple of the block not above --block-target). Options of sweeps are ignored.\n"
    "`runner --profile --isolation none ...` is the other mode: a sweep that runs each kernel once inside an\n"
    "NVTX range named after it, for running under ncu or nsys yourself.\n"
    "The table shows, per variant, shared-memory load and store requests\n"
    "(warp instructions), wavefronts, bank conflicts (extra wavefronts) and wavefronts per request (1.0:\n"
    "conflict-free; n: an n-way conflict on average), and the kernel's duration (clocks not locked).\n"
    "\nExit status: 0 every variant profiled; 1 some variant failed (its ncu log is named); 2 bad command\n"
    "line; 3 ncu not found, no kernel selected, or every selected variant skipped (e.g. no GPU).\n";

struct Variant {
    std::string kernel, plugin_path, operation;
    int64_t m = 0, n = 0, k = 0, block = 0;
    std::string skip_reason;
};

struct Metrics {
    std::map<std::string, double> sum;
    int launches = 0;
};

std::optional<fs::path> find_ncu(const std::string& given) {
    std::error_code ec;
    if (!given.empty()) return fs::exists(given, ec) ? std::optional<fs::path>(given) : std::nullopt;
    if (const char* path = std::getenv("PATH")) {
        std::stringstream dirs(path);
        for (std::string dir; std::getline(dirs, dir, ':');)
            if (!dir.empty() && ::access((fs::path(dir) / "ncu").c_str(), X_OK) == 0) return fs::path(dir) / "ncu";
    }
    if (::access("/usr/local/cuda/bin/ncu", X_OK) == 0) return fs::path("/usr/local/cuda/bin/ncu");
    return std::nullopt;
}

// Runs argv with stdout and stderr to log; returns the exit status (128 + signal when killed, -1 when it
// could not start).
int run_to_file(const std::vector<std::string>& argv, const fs::path& log) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string tail_lines(const std::string& text, int lines) {
    size_t pos = text.size();
    for (int i = 0; i <= lines && pos > 0; ++i) pos = text.rfind('\n', pos - 1);
    return pos == std::string::npos ? text : text.substr(pos + 1);
}

// One CSV line with quoted fields ("a","1,024") into its fields.
std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> out;
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
                field += '"', ++i;
            else if (c == '"')
                quoted = false;
            else
                field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(field), field.clear();
        } else if (c != '\r') {
            field += c;
        }
    }
    out.push_back(field);
    return out;
}

// ncu's CSV (one row per launch and metric, after its own ==PROF== lines): sums each metric over launches.
Metrics parse_ncu_csv(const std::string& text) {
    Metrics m;
    std::stringstream lines(text);
    std::vector<std::string> header;
    int id_col = -1, name_col = -1, value_col = -1;
    std::map<std::string, bool> ids;
    for (std::string line; std::getline(lines, line);) {
        if (header.empty()) {
            if (line.rfind("\"ID\"", 0) != 0) continue;
            header = split_csv(line);
            for (int i = 0; i < static_cast<int>(header.size()); ++i) {
                if (header[i] == "ID") id_col = i;
                if (header[i] == "Metric Name") name_col = i;
                if (header[i] == "Metric Value") value_col = i;
            }
            if (id_col < 0 || name_col < 0 || value_col < 0) header.clear();
            continue;
        }
        const std::vector<std::string> f = split_csv(line);
        if (f.size() != header.size()) continue;
        std::string value;
        for (char c : f[value_col])
            if (c != ',') value += c;  // thousands separators
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || end == value.c_str()) continue;
        m.sum[f[name_col]] += v;
        ids[f[id_col]] = true;
    }
    m.launches = static_cast<int>(ids.size());
    return m;
}

// "1-20", "16", "4,8,16", "1-4,16".
std::vector<int64_t> parse_blocks(const std::string& text) {
    std::vector<int64_t> out;
    std::stringstream parts(text);
    for (std::string part; std::getline(parts, part, ',');) {
        const size_t dash = part.find('-');
        try {
            size_t used = 0;
            const int64_t lo = std::stoll(part.substr(0, dash), &used);
            const int64_t hi = dash == std::string::npos ? lo : std::stoll(part.substr(dash + 1));
            if (lo < 1 || hi < lo || hi > 1024) throw std::invalid_argument("range");
            for (int64_t b = lo; b <= hi; ++b) out.push_back(b);
        } catch (const std::exception&) {
            throw std::invalid_argument("--blocks: expected blocks from 1 to 1024 such as 1-20 or 4,8,16, got '" +
                                        text + "'");
        }
    }
    return out;
}

// "MxN" (want 2) or "MxNxK" (want 3), each >= 1.
std::vector<int64_t> parse_dims(const std::string& text, size_t want, const char* option) {
    std::vector<int64_t> out;
    std::stringstream parts(text);
    for (std::string part; std::getline(parts, part, 'x');) {
        size_t used = 0;
        int64_t v = 0;
        try {
            v = std::stoll(part, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != part.size() || v < 1)
            throw std::invalid_argument(std::string(option) + ": '" + text + "' is not " +
                                        (want == 2 ? "MxN" : "MxNxK") + " with sizes >= 1");
        out.push_back(v);
    }
    if (out.size() != want)
        throw std::invalid_argument(std::string(option) + ": '" + text + "' is not " + (want == 2 ? "MxN" : "MxNxK"));
    return out;
}

bool matches_any(const std::string& name, const std::vector<std::string>& globs) {
    for (const std::string& g : globs)
        if (fnmatch(g.c_str(), name.c_str(), 0) == 0) return true;
    return false;
}

std::string fmt(double v, int precision = 0) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << v;
    return s.str();
}

}  // namespace

int run_profile_command(int argc, char** argv) {
    cxxopts::Options options("runner --profile", "Shared-memory bank conflicts per kernel variant, measured by ncu.");
    options.set_width(100);
    options.allow_unrecognised_options();
    // clang-format off
    options.add_options()
        ("kernels", "Kernel names or globs, comma-separated", cxxopts::value<std::string>()->default_value("cuda_t*,cuda_copy,cuda_block_transpose*"))
        ("shape", "MxN for transposes (default 8192x8192) and block transposes, MxNxK for GEMMs (default 2048^3); repeatable", cxxopts::value<std::vector<std::string>>())
        ("blocks", "Blocks of a block transpose: 1-20, 16, 4,8,16", cxxopts::value<std::string>()->default_value("1-20"))
        ("block-target", "Without an MxN --shape, block transposes run at the largest multiple of the block <= this, square", cxxopts::value<int64_t>()->default_value("4096"))
        ("plugin-dir", "Also load every *.so in this folder; repeatable", cxxopts::value<std::vector<std::string>>())
        ("plugin", "Also load this plugin file; repeatable", cxxopts::value<std::vector<std::string>>())
        ("no-default-plugins", "Do not load the runner's own plugin folder or KREG_PLUGIN_PATH")
        ("ncu", "Nsight Compute's ncu (default: from the PATH, else /usr/local/cuda/bin/ncu)", cxxopts::value<std::string>()->default_value(""))
        ("logs", "Keep ncu's logs in this folder (default: a temporary folder, removed unless a variant failed)", cxxopts::value<std::string>()->default_value(""))
        ("h,help", "Print this help");
    // clang-format on
    std::vector<std::string> globs, plugin_args;
    std::vector<int64_t> blocks;
    std::vector<std::vector<int64_t>> shapes2, shapes3;  // MxN, MxNxK
    int64_t block_target = 0;
    std::string ncu_option, logs_option;
    try {
        const auto r = options.parse(argc, argv);
        if (r.count("help")) {
            std::cout << options.help() << kHelpTail;
            return 0;
        }
        if (!r.unmatched().empty()) {
            // A sweep's options (--no-calibrate, --json, ...) mean nothing here: say so, do not fail.
            std::cerr << "runner --profile: ignoring options that only sweeps use:";
            for (const std::string& u : r.unmatched()) std::cerr << " " << u;
            std::cerr << "\n";
        }
        std::stringstream g(r["kernels"].as<std::string>());
        for (std::string glob; std::getline(g, glob, ',');)
            if (!glob.empty()) globs.push_back(glob);
        if (globs.empty()) throw std::invalid_argument("--kernels: no names given");
        if (r.count("shape"))
            for (const std::string& text : r["shape"].as<std::vector<std::string>>()) {
                const bool gemm = std::count(text.begin(), text.end(), 'x') == 2;
                (gemm ? shapes3 : shapes2).push_back(parse_dims(text, gemm ? 3 : 2, "--shape"));
            }
        if (shapes3.empty()) shapes3.push_back({2048, 2048, 2048});
        blocks = parse_blocks(r["blocks"].as<std::string>());
        block_target = r["block-target"].as<int64_t>();
        if (block_target < 1) throw std::invalid_argument("--block-target must be >= 1");
        if (r.count("plugin-dir"))
            for (const std::string& d : r["plugin-dir"].as<std::vector<std::string>>())
                plugin_args.insert(plugin_args.end(), {"--plugin-dir", d});
        if (r.count("plugin"))
            for (const std::string& p : r["plugin"].as<std::vector<std::string>>())
                plugin_args.insert(plugin_args.end(), {"--plugin", p});
        if (r.count("no-default-plugins")) plugin_args.push_back("--no-default-plugins");
        ncu_option = r["ncu"].as<std::string>();
        logs_option = r["logs"].as<std::string>();
    } catch (const std::exception& e) {
        std::cerr << "runner --profile: " << e.what() << "\nTry 'runner --profile --help'.\n";
        return 2;
    }

    const std::optional<fs::path> ncu = find_ncu(ncu_option);
    if (!ncu) {
        std::cerr << "runner --profile: Nsight Compute not found: "
                  << (ncu_option.empty() ? "no 'ncu' on the PATH or in /usr/local/cuda/bin"
                                         : "--ncu " + ncu_option + " does not exist")
                  << ". Bank conflicts are read from ncu's counters; install Nsight Compute (it ships with the CUDA "
                     "toolkit) or pass --ncu PATH.\n";
        return 3;
    }

    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
        std::cerr << "runner --profile: cannot find this runner's executable: " << ec.message() << "\n";
        return 3;
    }
    const bool keep_logs = !logs_option.empty();
    const fs::path logs =
        keep_logs ? fs::path(logs_option) : fs::temp_directory_path() / ("kreg-profile-" + std::to_string(::getpid()));
    fs::create_directories(logs, ec);
    if (ec) {
        std::cerr << "runner --profile: cannot create " << logs << ": " << ec.message() << "\n";
        return 3;
    }

    // The registry, as the runner lists it (the parent loads no plugin).
    std::vector<std::string> list_argv = {self.string(), "--list", "--format", "json"};
    list_argv.insert(list_argv.end(), plugin_args.begin(), plugin_args.end());
    const fs::path list_file = logs / "list.json";
    if (run_to_file(list_argv, list_file) != 0) {
        std::cerr << "runner --profile: runner --list failed:\n" << tail_lines(read_file(list_file), 10);
        return 3;
    }
    std::vector<Variant> variants;
    try {
        const nlohmann::json list = nlohmann::json::parse(read_file(list_file));
        for (const auto& k : list.at("kernels")) {
            const std::string name = k.at("name").get<std::string>();
            if (k.at("backend").get<std::string>() != "cuda" || !matches_any(name, globs)) continue;
            Variant v;
            v.kernel = name;
            v.plugin_path = k.at("plugin_path").get<std::string>();
            v.operation = k.value("operation", std::string("gemm"));
            // A kernel that cannot run here (no device, too old a GPU) is skipped with the reason. "does not
            // measure ... yet" is the sweep pipeline's own limit; the driver calls the kernel directly.
            if (k.contains("unavailable_reason") && k["unavailable_reason"].is_string()) {
                const std::string why = k["unavailable_reason"].get<std::string>();
                if (why.find("does not measure") == std::string::npos) v.skip_reason = why;
            }
            if (v.operation == "gemm") {
                for (const auto& d : shapes3) {
                    v.m = d[0], v.n = d[1], v.k = d[2];
                    variants.push_back(v);
                }
            } else if (v.operation == "transpose") {
                for (const auto& d : shapes2.empty() ? std::vector<std::vector<int64_t>>{{8192, 8192}} : shapes2) {
                    v.m = d[0], v.n = d[1];
                    variants.push_back(v);
                }
            } else if (v.operation == "block_transpose") {
                const int64_t max_block = k.value("max_block", int64_t{0});
                for (int64_t b : blocks) {
                    Variant bv = v;
                    bv.block = b;
                    // Without an MxN shape: the largest square multiple of the block up to --block-target.
                    std::vector<std::vector<int64_t>> dims = shapes2;
                    if (dims.empty()) dims.push_back({std::max<int64_t>(b, block_target / b * b), 0});
                    for (const auto& d : dims) {
                        Variant sv = bv;
                        sv.m = d[0], sv.n = d[1] ? d[1] : d[0];
                        if (sv.skip_reason.empty() && max_block > 0 && b > max_block)
                            sv.skip_reason = "block " + std::to_string(b) + " above the kernel's max_block " +
                                             std::to_string(max_block);
                        if (sv.skip_reason.empty() && (sv.m % b != 0 || sv.n % b != 0))
                            sv.skip_reason = "M and N are not multiples of block " + std::to_string(b);
                        variants.push_back(sv);
                    }
                }
            }
        }
    } catch (const std::exception& e) {
        std::cerr << "runner --profile: cannot read runner --list's JSON (" << list_file.string() << "): " << e.what()
                  << "\n";
        return 3;
    }
    if (variants.empty()) {
        std::cerr << "runner --profile: no CUDA kernel matches --kernels\n";
        return 3;
    }

    const std::string metrics = std::string(kLdRequests) + "," + kLdWavefronts + "," + kLdConflicts + "," +
                                kStRequests + "," + kStWavefronts + "," + kStConflicts + "," + kDuration;
    std::cout << "ncu: " << ncu->string() << "\n";
    std::cout << std::left << std::setw(30) << "kernel" << std::right << std::setw(7) << "block" << std::setw(17)
              << "shape" << std::setw(10) << "time_us" << std::setw(12) << "ld_req" << std::setw(13) << "ld_wavefr"
              << std::setw(13) << "ld_confl" << std::setw(8) << "ld_way" << std::setw(12) << "st_req" << std::setw(13)
              << "st_wavefr" << std::setw(13) << "st_confl" << std::setw(8) << "st_way"
              << "\n";
    int failed = 0, profiled = 0;
    for (size_t i = 0; i < variants.size(); ++i) {
        const Variant& v = variants[i];
        const std::string shape_text =
            std::to_string(v.m) + "x" + std::to_string(v.n) + (v.operation == "gemm" ? "x" + std::to_string(v.k) : "");
        std::cout << std::left << std::setw(30) << v.kernel << std::right << std::setw(7)
                  << (v.block ? std::to_string(v.block) : "-") << std::setw(17) << shape_text;
        if (!v.skip_reason.empty()) {
            std::cout << "  skipped: " << v.skip_reason << "\n";
            continue;
        }
        const fs::path log = logs / (v.kernel + (v.block ? "-b" + std::to_string(v.block) : "") + ".csv");
        const std::vector<std::string> cmd = {ncu->string(),   "--clock-control",
                                              "none",          "--target-processes",
                                              "all",           "--metrics",
                                              metrics,         "--csv",
                                              "--print-units", "base",
                                              self.string(),   "__profile_driver",
                                              "--plugin",      v.plugin_path,
                                              "--kernel",      v.kernel,
                                              "--operation",   v.operation,
                                              "--m",           std::to_string(v.m),
                                              "--n",           std::to_string(v.n),
                                              "--k",           std::to_string(v.k),
                                              "--block",       std::to_string(v.block)};
        const int rc = run_to_file(cmd, log);
        const std::string text = read_file(log);
        const Metrics m = parse_ncu_csv(text);
        if (rc != 0 || m.launches == 0) {
            ++failed;
            std::cout << "  FAILED (ncu exit " << rc << (m.launches == 0 ? ", no kernel profiled" : "") << "; log "
                      << log.string() << "):\n"
                      << tail_lines(text, 6);
            continue;
        }
        ++profiled;
        auto get = [&](const char* name) { return m.sum.count(name) ? m.sum.at(name) : 0.0; };
        auto ways = [](double wavefronts, double requests) {
            return requests > 0 ? fmt(wavefronts / requests, 2) : std::string("-");
        };
        std::cout << std::setw(10) << fmt(get(kDuration) / 1000.0, 1) << std::setw(12) << fmt(get(kLdRequests))
                  << std::setw(13) << fmt(get(kLdWavefronts)) << std::setw(13) << fmt(get(kLdConflicts)) << std::setw(8)
                  << ways(get(kLdWavefronts), get(kLdRequests)) << std::setw(12) << fmt(get(kStRequests))
                  << std::setw(13) << fmt(get(kStWavefronts)) << std::setw(13) << fmt(get(kStConflicts)) << std::setw(8)
                  << ways(get(kStWavefronts), get(kStRequests))
                  << (m.launches > 1 ? "  (" + std::to_string(m.launches) + " launches summed)" : "") << "\n";
    }
    std::cout << "way = wavefronts per request: 1.00 is conflict-free for 4-byte accesses; n is an n-way conflict "
                 "on average.\n";
    if (failed == 0 && !keep_logs)
        fs::remove_all(logs, ec);
    else
        std::cout << "ncu logs: " << logs.string() << "\n";
    if (failed == 0 && profiled == 0) {
        std::cerr << "runner --profile: nothing profiled: every selected variant was skipped\n";
        return 3;
    }
    return failed == 0 ? 0 : 1;
}

}  // namespace kreg::app
