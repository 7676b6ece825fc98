#include "run/profile_run.hpp"

#include "common/operation_table.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

extern char** environ;

namespace kreg {
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

std::optional<fs::path> ncu_at(const std::string& given) {
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

NcuMetrics parse_ncu_csv(const std::string& text) {
    NcuMetrics m;
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

std::vector<int64_t> profile_default_sizes(size_t size_keys) {
    if (size_keys == 1) return {int64_t{1} << 24};
    if (size_keys == 2) return {8192, 8192};
    return std::vector<int64_t>(size_keys, 2048);
}

std::string profile_shape_help() {
    std::map<size_t, std::vector<Operation>> by_arity;
    for (Operation op : all_operations()) by_arity[operation_row(op).size_keys().size()].push_back(op);
    std::string out;
    for (const auto& [arity, ops] : by_arity) {
        std::string names, defaults;
        for (Operation op : ops) names += (names.empty() ? "" : ", ") + std::string(to_string(op));
        for (int64_t size : profile_default_sizes(arity))
            defaults += (defaults.empty() ? "" : "x") + std::to_string(size);
        out += (out.empty() ? "" : "; ") + size_syntax(ops.front()) + " for " + names + " (default " + defaults + ")";
    }
    return out;
}

std::string variant_text(const ProfileVariant& v) {
    const OperationRow& row = operation_row(v.operation);
    const ShapeKeyDef* param = row.param();
    return size_text(v.operation, v.shape) +
           (param != nullptr ? "/b" + std::to_string(dim_value(v.shape, param->dim)) : std::string());
}

std::vector<std::string> profile_driver_args(const ProfileVariant& v) {
    std::vector<std::string> args = {"__profile_driver",
                                     "--plugin",
                                     v.plugin_path,
                                     "--kernel",
                                     v.kernel,
                                     "--operation",
                                     std::string(to_string(v.operation))};
    for (const ShapeKeyDef& key : operation_row(v.operation).shape_keys())
        args.insert(args.end(), {std::string("--") + key.name, std::to_string(dim_value(v.shape, key.dim))});
    return args;
}

namespace {

// The kernel's variants at every shape of its operation's arity, and for an operation with a per-call
// parameter (a block transpose's block) at every block of --blocks, skipped where the block cannot run.
void add_shapes(const ProfileVariant& kernel, int64_t max_block, const ProfileRequest& request,
                std::vector<ProfileVariant>& variants) {
    const OperationRow& row = operation_row(kernel.operation);
    const std::vector<ShapeKeyDef> sizes = row.size_keys();
    const auto given = request.shapes.find(sizes.size());
    const ShapeKeyDef* param = row.param();
    auto variant_at = [&](std::vector<int64_t> values, int64_t block) {
        ProfileVariant v = kernel;
        if (param != nullptr) values.push_back(block);
        v.shape = shape_of(kernel.operation, values);
        return v;
    };
    if (param == nullptr) {
        for (const auto& d : given != request.shapes.end()
                                 ? given->second
                                 : std::vector<std::vector<int64_t>>{profile_default_sizes(sizes.size())})
            variants.push_back(variant_at(d, 0));
        return;
    }
    for (int64_t b : request.blocks) {
        // Without a shape of its arity: the largest square multiple of the block up to --block-target.
        std::vector<std::vector<int64_t>> dims;
        if (given != request.shapes.end())
            dims = given->second;
        else
            dims.push_back(std::vector<int64_t>(sizes.size(), std::max<int64_t>(b, request.block_target / b * b)));
        for (const auto& d : dims) {
            ProfileVariant v = variant_at(d, b);
            if (v.skip_reason.empty() && max_block > 0 && b > max_block)
                v.skip_reason =
                    "block " + std::to_string(b) + " above the kernel's max_block " + std::to_string(max_block);
            for (Dim divided : param->divides)
                if (v.skip_reason.empty() && divided != Dim::none && dim_value(v.shape, divided) % b != 0)
                    v.skip_reason = "the sizes " + size_text(kernel.operation, v.shape) +
                                    " are not multiples of block " + std::to_string(b);
            variants.push_back(v);
        }
    }
}

}  // namespace

std::vector<ProfileVariant> profile_variants(const nlohmann::json& list, const ProfileRequest& request) {
    std::vector<ProfileVariant> variants;
    for (const auto& k : list.at("kernels")) {
        const std::string name = k.at("name").get<std::string>();
        if (k.at("backend").get<std::string>() != "cuda" || !matches_any(name, request.globs)) continue;
        const std::optional<Operation> op = parse_operation(k.value("operation", std::string("gemm")));
        if (!op) continue;  // an operation this runner does not know
        ProfileVariant v;
        v.kernel = name;
        v.plugin_path = k.at("plugin_path").get<std::string>();
        v.operation = *op;
        // A kernel that cannot run here (no device, too old a GPU) is skipped with the reason. "does not
        // measure ... yet" is the sweep pipeline's own limit; the driver calls the kernel directly.
        if (k.contains("unavailable_reason") && k["unavailable_reason"].is_string()) {
            const std::string why = k["unavailable_reason"].get<std::string>();
            if (why.find("does not measure") == std::string::npos) v.skip_reason = why;
        }
        add_shapes(v, k.value("max_block", int64_t{0}), request, variants);
    }
    return variants;
}

ProfileRun::ProfileRun(ProfileRequest request, fs::path runner_exe, std::ostream& log, std::ostream& out)
    : request_(std::move(request)), runner_exe_(std::move(runner_exe)), log_(log), out_(out) {}

int ProfileRun::execute() {
    const fs::path ncu = find_ncu();
    const fs::path logs = logs_dir();
    const std::vector<ProfileVariant> all = variants(logs);
    if (all.empty()) throw RunError(RunError::Kind::nothing_to_run, "no CUDA kernel matches --kernels");
    out_ << "ncu: " << ncu.string() << "\n";
    out_ << std::left << std::setw(30) << "kernel" << std::right << std::setw(7) << "block" << std::setw(17) << "shape"
         << std::setw(10) << "time_us" << std::setw(12) << "ld_req" << std::setw(13) << "ld_wavefr" << std::setw(13)
         << "ld_confl" << std::setw(8) << "ld_way" << std::setw(12) << "st_req" << std::setw(13) << "st_wavefr"
         << std::setw(13) << "st_confl" << std::setw(8) << "st_way"
         << "\n";
    int failed = 0, profiled = 0;
    for (const ProfileVariant& v : all) {
        const ShapeKeyDef* param = operation_row(v.operation).param();
        out_ << std::left << std::setw(30) << v.kernel << std::right << std::setw(7)
             << (param != nullptr ? std::to_string(dim_value(v.shape, param->dim)) : "-") << std::setw(17)
             << size_text(v.operation, v.shape);
        if (!v.skip_reason.empty()) {
            out_ << "  skipped: " << v.skip_reason << "\n";
            continue;
        }
        if (profile(v, ncu, logs))
            ++profiled;
        else
            ++failed;
    }
    out_ << "way = wavefronts per request: 1.00 is conflict-free for 4-byte accesses; n is an n-way conflict "
            "on average.\n";
    std::error_code ec;
    if (failed == 0 && request_.logs.empty())
        fs::remove_all(logs, ec);
    else
        out_ << "ncu logs: " << logs.string() << "\n";
    if (failed == 0 && profiled == 0) {
        log_ << "runner --profile: nothing profiled: every selected variant was skipped\n";
        return 3;
    }
    return failed == 0 ? 0 : 1;
}

fs::path ProfileRun::find_ncu() const {
    const std::optional<fs::path> ncu = ncu_at(request_.ncu);
    if (!ncu)
        throw RunError(RunError::Kind::cannot_run,
                       "Nsight Compute not found: " +
                           (request_.ncu.empty() ? std::string("no 'ncu' on the PATH or in /usr/local/cuda/bin")
                                                 : "--ncu " + request_.ncu + " does not exist") +
                           ". Bank conflicts are read from ncu's counters; install Nsight Compute (it ships with the "
                           "CUDA toolkit) or pass --ncu PATH.");
    return *ncu;
}

fs::path ProfileRun::logs_dir() {
    const fs::path logs = !request_.logs.empty()
                              ? fs::path(request_.logs)
                              : fs::temp_directory_path() / ("kreg-profile-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::create_directories(logs, ec);
    if (ec) {
        std::ostringstream quoted;
        quoted << logs;
        throw RunError(RunError::Kind::cannot_run, "cannot create " + quoted.str() + ": " + ec.message());
    }
    return logs;
}

// The registry, as the runner lists it (the parent loads no plugin), expanded into the variants.
std::vector<ProfileVariant> ProfileRun::variants(const fs::path& logs) const {
    std::vector<std::string> list_argv = {runner_exe_.string(), "--list", "--format", "json"};
    list_argv.insert(list_argv.end(), request_.plugin_args.begin(), request_.plugin_args.end());
    const fs::path list_file = logs / "list.json";
    if (run_to_file(list_argv, list_file) != 0)
        throw RunError(RunError::Kind::cannot_run, "runner --list failed:\n" + tail_lines(read_file(list_file), 10));
    try {
        return profile_variants(nlohmann::json::parse(read_file(list_file)), request_);
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::cannot_run,
                       "cannot read runner --list's JSON (" + list_file.string() + "): " + e.what());
    }
}

bool ProfileRun::profile(const ProfileVariant& v, const fs::path& ncu, const fs::path& logs) const {
    std::string file = v.kernel + "-" + variant_text(v);  // one log per variant: "k-64x64/b8" -> "k-64x64-b8"
    std::replace(file.begin(), file.end(), '/', '-');
    const fs::path log = logs / (file + ".csv");
    const std::string metrics = std::string(kLdRequests) + "," + kLdWavefronts + "," + kLdConflicts + "," +
                                kStRequests + "," + kStWavefronts + "," + kStConflicts + "," + kDuration;
    std::vector<std::string> cmd = {ncu.string(),        "--clock-control", "none",  "--target-processes", "all",
                                    "--metrics",         metrics,           "--csv", "--print-units",      "base",
                                    runner_exe_.string()};
    const std::vector<std::string> driver = profile_driver_args(v);
    cmd.insert(cmd.end(), driver.begin(), driver.end());
    const int rc = run_to_file(cmd, log);
    const std::string text = read_file(log);
    const NcuMetrics m = parse_ncu_csv(text);
    if (rc != 0 || m.launches == 0) {
        out_ << "  FAILED (ncu exit " << rc << (m.launches == 0 ? ", no kernel profiled" : "") << "; log "
             << log.string() << "):\n"
             << tail_lines(text, 6);
        return false;
    }
    auto get = [&](const char* name) { return m.sum.count(name) ? m.sum.at(name) : 0.0; };
    auto ways = [](double wavefronts, double requests) {
        return requests > 0 ? fmt(wavefronts / requests, 2) : std::string("-");
    };
    out_ << std::setw(10) << fmt(get(kDuration) / 1000.0, 1) << std::setw(12) << fmt(get(kLdRequests)) << std::setw(13)
         << fmt(get(kLdWavefronts)) << std::setw(13) << fmt(get(kLdConflicts)) << std::setw(8)
         << ways(get(kLdWavefronts), get(kLdRequests)) << std::setw(12) << fmt(get(kStRequests)) << std::setw(13)
         << fmt(get(kStWavefronts)) << std::setw(13) << fmt(get(kStConflicts)) << std::setw(8)
         << ways(get(kStWavefronts), get(kStRequests))
         << (m.launches > 1 ? "  (" + std::to_string(m.launches) + " launches summed)" : "") << "\n";
    return true;
}

}  // namespace kreg
