#include "run/sweep_run.hpp"

#include "common/baseline.hpp"
#include "common/elapsed.hpp"
#include "common/host_info.hpp"
#include "common/sha256.hpp"
#include "common/suggest.hpp"
#include "measure/roofline.hpp"
#include "merge/shard.hpp"
#include "plugin/discovery.hpp"
#include "report/console.hpp"
#include "report/markup_text.hpp"
#include "report/meta.hpp"
#include "run/lanes.hpp"
#include "worker/stop_request.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>

namespace kreg {
namespace {

namespace fs = std::filesystem;

Registry build_registry(const SweepRequest& cl, const fs::path& exe, Executor& executor, int device,
                        std::ostream& log) {
    PluginSearch search;
    if (cl.default_plugins) {
        search.directories.push_back(default_plugin_dir(exe));
        if (const char* env = std::getenv("KREG_PLUGIN_PATH"))
            for (const auto& d : split_search_path(env)) search.directories.push_back(d);
    }
    for (const auto& d : cl.plugin_dirs) search.directories.push_back(d);
    for (const auto& f : cl.plugin_files) search.files.push_back(f);
    std::vector<std::string> problems;
    const auto files = find_plugin_files(search, problems);
    for (const auto& p : problems) log << "runner: warning: " << p << "\n";
    Registry registry;
    for (const auto& file : files) registry.add(executor.describe(file.string(), device));
    return registry;
}

// The sweep `runner` runs with no arguments: CPU kernels at small sizes (well under 30 s on 2 cores),
// and GPU kernels at sizes that fill a GPU where one is present.
std::vector<SweepConfig> builtin_default(const Registry& registry, bool have_gpu) {
    SweepConfig cpu;
    cpu.source = std::string(kBuiltinDefaultSource);
    cpu.name = "default";
    cpu.description = "built-in default: CPU kernels at small sizes";
    cpu.kernels = {"cpu_*"};
    cpu.shapes = {{128, 128, 128}, {256, 256, 256}, {512, 512, 512}, {100, 200, 300}};
    cpu.settings.warmup = 1;
    cpu.settings.repeats = 5;
    cpu.baseline = Baseline::same_for_all("cpu_naive");
    std::vector<SweepConfig> parts{cpu};  // the GPU part's baseline is each dtype's cuBLAS kernel (select_kernels)
    const bool have_cuda_kernels =
        std::any_of(registry.entries().begin(), registry.entries().end(),
                    [](const RegistryEntry& e) { return e.kernel.backend == Backend::cuda; });
    if (have_gpu && have_cuda_kernels) {
        SweepConfig gpu = cpu;
        gpu.description = "built-in default: CUDA kernels";
        gpu.kernels = {"cuda_*", "cublas_sgemm"};
        gpu.shapes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {517, 517, 517}};
        gpu.settings.repeats = 10;
        gpu.settings.time_budget_s = 1.0;
        gpu.baseline = Baseline();
        parts.push_back(gpu);
    }
    return parts;
}

// Every kernel the baseline names must be loaded (a ConfigError naming where it was given, with a
// did-you-mean); those that serve a dtype of the sweep are added to its kernels, so their rows exist.
void check_baseline(const SweepConfig& part, const Registry& registry, bool from_command_line,
                    std::vector<std::string>& names) {
    const auto require = [&](const std::string& kernel, const std::string& json_path) {
        if (!registry.find(kernel))
            throw ConfigError(from_command_line ? std::string(kCommandLineSource) : part.source,
                              from_command_line ? "--baseline" : json_path,
                              "unknown baseline kernel '" + kernel + "'" + did_you_mean(kernel, registry.names()));
        bool serves_a_dtype = part.baseline.is_same_for_all();
        for (DType d : part.dtypes) {
            const std::string* k = part.baseline.kernel_for(d);
            if (k && *k == kernel) serves_a_dtype = true;
        }
        if (serves_a_dtype && std::find(names.begin(), names.end(), kernel) == names.end()) names.push_back(kernel);
    };
    if (part.baseline.is_same_for_all()) require(part.baseline.kernels().front(), "/baseline");
    for (const auto& [dtype, kernel] : part.baseline.per_dtype_kernels())
        require(kernel, "/baseline/" + std::string(to_string(dtype)));
}

bool any_quick_option(const CliOverrides& o) {
    return o.kernels || o.operation || o.sizes || o.shape_texts || o.blocks || o.shapes || o.dtypes || o.warmup ||
           o.repeats || o.time_budget_s || o.timeout_s || o.tolerance || o.verify || o.warm_cache || o.seed ||
           o.device || o.baseline || o.json || o.csv;
}

void print_plan(const std::vector<PlannedJob>& plan, std::ostream& out) {
    for (const auto& p : plan) {
        out << p.job.id << "  " << p.job.kernel << "  " << to_string(p.job.dtype) << "  " << to_string(p.job.shape)
            << "  " << (p.skip_reason ? "skip: " + *p.skip_reason : "run") << "\n";
    }
    out << plan.size() << " job(s)\n";
}

// The command line recorded in a journal, parsed again as it was then (in its working directory).
SweepRequest recorded_request(const ResumeState& resume, const std::string& report, const SweepEnvironment& env) {
    const nlohmann::json& h = resume.contents.header;
    std::vector<std::string> args;
    for (const auto& a : h["argv"]) {
        if (!a.is_string())
            throw RunError(RunError::Kind::bad_input, "cannot resume " + report + ": " + resume.journal_path.string() +
                                                          ":1: /argv holds a non-string");
        args.push_back(a.get<std::string>());
    }
    SweepRequest request;
    std::string cwd;
    try {
        request = env.parse_recorded(args);
        cwd = h["cwd"].get<std::string>();
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::bad_input,
                       "cannot resume " + report + ": its recorded command line no longer parses: " + e.what());
    }
    std::error_code entered;
    std::filesystem::current_path(cwd, entered);
    if (entered)
        throw RunError(RunError::Kind::bad_input, "cannot resume " + report + ": its sweep ran in " + cwd +
                                                      ", which cannot be entered now: " + entered.message());
    return request;
}

// A plugin the recorded run used whose file now differs: its rows would mix two builds in one report.
std::string changed_plugin(const nlohmann::json& recorded_plugins, const Registry& registry,
                           const std::vector<PlannedJob>& plan) {
    std::set<std::string> used;
    for (const auto& p : plan) used.insert(p.job.plugin_path);
    if (!recorded_plugins.is_array()) return "";
    for (const auto& then : recorded_plugins) {
        const std::string path = then.value("path", "");
        if (!used.count(path)) continue;
        for (const auto& now : registry.plugins())
            if (now.path == path && now.sha256 != then.value("sha256", ""))
                return path + " changed since the report was started (sha256 " +
                       then.value("sha256", "?").substr(0, 12) + "... then, " + now.sha256.substr(0, 12) + "... now)";
    }
    return "";
}

// The kernels of one part: the command line's overrides applied, its globs resolved against the registry,
// and the baseline's kernels added where they serve a dtype of the sweep.
std::vector<std::string> select_kernels(SweepConfig& part, const Registry& registry, const SweepRequest& cl,
                                        std::ostream& log) {
    apply_overrides(part, cl.overrides);
    for (const auto& note : part.notes) log << "runner: note: " << note << "\n";
    std::vector<std::string> unmatched;
    auto names =
        resolve_kernel_patterns(part.kernels, registry.names(),
                                cl.overrides.kernels ? std::string(kCommandLineSource) : part.source, &unmatched);
    for (const auto& glob : unmatched)
        log << "runner: note: no loaded kernel matches '" << glob << "' (" << part.source << ")\n";
    // The built-in default's GPU part, and quick runs that name dtypes but no baseline, compare each
    // dtype with its cuBLAS kernel where the selection has it (issue 12: bf16 rows against cublas_bf16).
    const bool wants_default_baseline =
        part.source == kBuiltinDefaultSource || (part.source == kCommandLineSource && cl.overrides.dtypes.has_value());
    if (!part.baseline && wants_default_baseline) part.baseline = default_baseline(part.dtypes, names);
    check_baseline(part, registry, cl.overrides.baseline.has_value(), names);
    return names;
}

// Lab conveniences reshape how each job is measured.
void apply_lab_conveniences(SweepConfig& part, const SweepRequest& cl) {
    part.settings.strict = cl.strict;
    if (cl.call_timeout_s) part.settings.call_timeout_s = cl.call_timeout_s;
    if (cl.profile) {
        part.settings.warmup = 0;
        part.settings.repeats = 1;
        part.settings.time_budget_s.reset();
        part.settings.profile = true;
    }
    if (cl.stress_s) {
        part.settings.repeats = 1000000000;
        part.settings.time_budget_s = *cl.stress_s;
        part.settings.timeout_s = *cl.stress_s + part.settings.timeout_s;
    }
}

// A new sweep's report paths: the config's, or the default folder's timestamped names.
ReportTargets new_report_targets(const SweepConfig& main_part, const SweepRequest& cl) {
    // {shard} in a report path is the slice ("shard-2-of-4", "all" unsharded), so that the K tasks of one
    // Slurm array, given one command line, write K reports; unnamed shard reports say it too.
    const std::string shard_tag_text = cl.shard ? shard_tag(cl.shard->index, cl.shard->count) : "all";
    const std::string stem =
        (fs::path(cl.output_dir) / (main_part.name + "-" + kTimePlaceholder + (cl.shard ? "-" + shard_tag_text : "")))
            .string();
    // A named JSON report without a named CSV gets its CSV beside it (--json r/x.json: r/x.csv).
    const std::string json_template = main_part.output.json.value_or(stem + ".json");
    const std::string csv_template =
        main_part.output.csv.value_or(main_part.output.json ? csv_beside(json_template) : stem + ".csv");
    return choose_report_targets(with_shard_tag(json_template, shard_tag_text),
                                 with_shard_tag(csv_template, shard_tag_text));
}

// --verbose: what keeping the journal and the reports cost the sweep.
void print_writing_cost(const ReportWriter& writer, double wall, std::ostream& log) {
    log << "runner: " << writer.done() << " rows in " << wall << " s; journal and reports took "
        << writer.seconds_writing() << " s of it (" << 100.0 * writer.seconds_writing() / std::max(wall, 1e-9)
        << " %): " << writer.renders() << " renders " << writer.seconds_rendering() << " s, fdatasync "
        << writer.seconds_syncing() << " s\n";
}

// The meta a resumed sweep's journal recorded, read as this kreg's: the resumed report keeps it.
ReportMeta read_resumed_meta(const nlohmann::json& recorded, const std::string& journal) {
    try {
        return recorded.get<ReportMeta>();
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::bad_input, "cannot resume " + journal + ": its meta at /meta" + e.what());
    }
}

}  // namespace

SweepRun::SweepRun(SweepRequest request, SweepEnvironment environment, std::ostream& log, std::ostream& out)
    : given_(request), request_(std::move(request)), environment_(std::move(environment)), log_(log), out_(out) {
    runner_word_ = shell_word(given_.argv.empty() ? "runner" : given_.argv.front());
}

SweepRun::~SweepRun() = default;

int SweepRun::execute() {
    if (request_.resume) resume();
    const Registry registry = load_plugins();
    if (request_.list) {
        list(registry);
        return 0;
    }
    const SweepParts parts = configure(registry);
    const SweepPlan planned = plan(parts, registry);
    if (request_.dry_run) {
        print_plan(planned.jobs, out_);
        return 0;
    }
    if (planned.jobs.empty()) throw RunError(RunError::Kind::nothing_to_run, "nothing to run");
    // Said first, before the rows scroll past: a sweep that can measure nothing here exits with 3 at the end.
    if (planned.nothing_measured) log_ << "runner: " << *planned.nothing_measured << "\n";
    const SweepDevices gpus = devices(planned);
    SweepReports reports = open_reports(parts, planned, gpus, registry);
    const SweepRows rows = run_rows(planned, gpus, reports);
    return finish(planned, reports, rows);
}

void SweepRun::resume() {
    std::string error;
    resume_ = read_resume_state(*given_.resume, error);
    if (!resume_) throw RunError(RunError::Kind::bad_input, error);
    const size_t planned = resume_->contents.header["planned"].get<size_t>();
    std::set<uint64_t> done_ids;
    for (const auto& r : resume_->contents.records) done_ids.insert(r.job_id);
    if (done_ids.size() >= planned)
        throw RunError(RunError::Kind::nothing_to_run, *given_.resume + " is complete (" + std::to_string(planned) +
                                                           " of " + std::to_string(planned) +
                                                           " rows); nothing to resume");
    if (!resume_->contents.dropped_tail.empty())
        log_ << "runner: " << resume_->journal_path.string() << ": " << resume_->contents.dropped_tail
             << " (the runner was killed while writing it; that job runs again)\n";
    request_ = recorded_request(*resume_, *given_.resume, environment_);
    request_.verbose = request_.verbose || given_.verbose;
    log_ << "runner: resuming " << *given_.resume << ": " << done_ids.size() << " of " << planned << " rows done\n";
}

Executor& SweepRun::executor() {
    if (!executor_) {
        options_.isolation = request_.isolation;
        options_.runner_exe = environment_.runner_exe.string();
        options_.load_timeout_s = request_.load_timeout_s;
        options_.echo_worker_stderr = request_.verbose;
        executor_ = std::make_unique<Executor>(options_);
        device_ = request_.overrides.device.value_or(0);
    }
    return *executor_;
}

Registry SweepRun::load_plugins() {
    Executor& workers = executor();
    const Registry registry = build_registry(request_, environment_.runner_exe, workers, device_, log_);
    for (const auto& p : registry.problems()) log_ << "runner: plugin problem: " << p << "\n";
    return registry;
}

void SweepRun::list(const Registry& registry) const {
    // --kernels narrows the list as it narrows a sweep: names or globs, a typo refused with a did-you-mean.
    ListOptions list;
    list.wide = request_.wide;
    try {
        if (request_.overrides.kernels)
            list.only =
                resolve_kernel_patterns(*request_.overrides.kernels, registry.names(), std::string(kCommandLineSource));
    } catch (const ConfigError& e) {
        throw RunError(RunError::Kind::bad_input, std::string("config error: ") + e.what());
    }
    if (request_.format == "json")
        out_ << registry.to_json(list).dump(2) << "\n";
    else
        out_ << registry.format_table(list);
}

// What to run: a config file, quick-run options, or the built-in default; then the command line's
// overrides, the kernel globs and the baselines, and the lab conveniences that reshape each job.
SweepParts SweepRun::configure(const Registry& registry) {
    SweepParts parts;
    try {
        if (request_.config) {
            const fs::path path = resolve_config_path(*request_.config, environment_.configs_dir);
            parts.configs.push_back(load_sweep_config(path));
        } else if (any_quick_option(request_.overrides)) {
            SweepConfig c;
            c.source = std::string(kCommandLineSource);
            c.name = "cli";
            c.kernels = {"*"};
            c.shapes = {{512, 512, 512}};
            parts.configs.push_back(c);
        } else {
#ifdef KREG_HAVE_CUDA
            const bool probe_gpu = true;
#else
            const bool probe_gpu = false;
#endif
            bool have_gpu = false;
            if (probe_gpu) {
                const nlohmann::json reply = executor().device_info(device_, false, 60.0);
                have_gpu = !reply.contains("error");
            }
            parts.configs = builtin_default(registry, have_gpu);
            log_ << "runner: no config given; running the built-in default sweep ("
                 << (parts.configs.size() > 1 ? "CPU and GPU kernels" : "CPU kernels") << ")\n";
        }
        for (auto& part : parts.configs) parts.kernels.push_back(select_kernels(part, registry, request_, log_));
    } catch (const ConfigError& e) {
        throw RunError(RunError::Kind::bad_input, std::string("config error: ") + e.what());
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::bad_input, e.what());
    }
    for (auto& part : parts.configs) apply_lab_conveniences(part, request_);
    return parts;
}

// Every job, with those that cannot run here already skipped; a shard keeps its slice.
SweepPlan SweepRun::plan(const SweepParts& parts, const Registry& registry) const {
    SweepPlan out;
    for (size_t i = 0; i < parts.configs.size(); ++i) {
        for (auto& p : plan_sweep(parts.configs[i], registry, parts.kernels[i])) {
            p.job.id = out.jobs.size();
            out.jobs.push_back(std::move(p));
        }
    }
    // A shard keeps every K-th job; ids stay the whole plan's, so K shards' rows never collide. What merge
    // checks shards against is the whole plan, so it is fingerprinted before the slice is taken.
    out.whole_plan_size = out.jobs.size();
    out.whole_plan_sha256 = request_.shard ? plan_fingerprint(out.jobs) : "";
    if (request_.shard && request_.shard->count > 1) {
        std::vector<PlannedJob> slice;
        for (auto& p : out.jobs)
            if (p.job.id % uint64_t(request_.shard->count) == uint64_t(request_.shard->index - 1))
                slice.push_back(std::move(p));
        log_ << "runner: shard " << request_.shard->index << "/" << request_.shard->count << ": " << slice.size()
             << " of " << out.jobs.size() << " job(s)\n";
        out.jobs = std::move(slice);
    }
    if (request_.stress_s && out.jobs.size() != 1)
        throw RunError(RunError::Kind::bad_input,
                       "--stress runs one kernel at one shape and dtype; the selection gives " +
                           std::to_string(out.jobs.size()) + " jobs (use --kernels NAME --shape MxNxK)");
    if (request_.stress_s)
        log_ << "runner: stressing " << out.jobs.front().job.kernel << " for " << *request_.stress_s
             << " s; watch clocks and power with: nvidia-smi -l 1\n";
    out.nothing_measured = nothing_measurable(out.jobs);
    out.runs_cuda = std::any_of(out.jobs.begin(), out.jobs.end(),
                                [](const PlannedJob& p) { return p.backend == Backend::cuda && !p.skip_reason; });
    return out;
}

std::optional<GpuInfo> SweepRun::query_gpu(bool calibrate) {
    std::optional<GpuInfo> gpu;
    log_ << "runner: reading GPU facts" << (calibrate ? " and measuring ceilings" : "") << "...\n";
    const nlohmann::json reply = executor().device_info(device_, calibrate, 300.0);
    try {
        if (reply.contains("error"))
            log_ << "runner: no GPU measurements: " << reply["error"].get<std::string>() << "\n";
        else
            gpu = gpu_of_device_reply(reply);
    } catch (const std::exception& e) {
        log_ << "runner: no GPU measurements: the worker's device reply is malformed: " << e.what() << "\n";
    }
    if (gpu && gpu->ceilings_unavailable)
        log_ << "runner: no measured ceilings: " << *gpu->ceilings_unavailable << "\n";
    return gpu;
}

// --devices: the CUDA jobs run on several GPUs at once, one lane (its own worker) per GPU, each lane's
// workers seeing only their GPU. A sweep with no CUDA job to run needs no GPU named.
SweepDevices SweepRun::devices(const SweepPlan& plan) {
    SweepDevices out;
    if (request_.devices && plan.runs_cuda) {
        std::string why;
        out.lanes = resolve_device_lanes(*request_.devices, executor(), why);
        if (why.empty()) {
            log_ << "runner: reading the facts of " << out.lanes.size() << " GPU(s)"
                 << (request_.calibrate ? " and measuring their ceilings" : "") << "...\n";
            describe_lanes(out.lanes, options_, request_.calibrate, why);
        }
        if (!why.empty()) throw RunError(RunError::Kind::bad_input, why);
        out.gpu = out.lanes.front().gpu;
        for (const auto& lane : out.lanes)
            log_ << "runner: device " << lane.ordinal << ": " << (lane.gpu ? lane.gpu->name() : std::string("?")) << " "
                 << lane.uuid << "\n";
    } else if (plan.runs_cuda) {
        out.gpu = query_gpu(request_.calibrate);
    }
    return out;
}

// A resumed sweep may add rows only to the plan it recorded, made by the same plugin files.
void SweepRun::check_resumable(const SweepPlan& plan, const Registry& registry) const {
    const nlohmann::json& h = resume_->contents.header;
    if (std::string changed = changed_plugin(h["meta"].value("plugins", nlohmann::json()), registry, plan.jobs);
        !changed.empty())
        throw RunError(RunError::Kind::bad_input, "cannot resume " + *given_.resume + ": " + changed +
                                                      "; its rows would mix two builds (start a new report instead)");
    if (plan.jobs.size() != h["planned"].get<size_t>() || plan_fingerprint(plan.jobs) != h["plan_sha256"])
        throw RunError(RunError::Kind::bad_input,
                       "cannot resume " + *given_.resume + ": the plan made again from its recorded command line (" +
                           std::to_string(plan.jobs.size()) + " jobs) is not the recorded one (" +
                           std::to_string(h["planned"].get<size_t>()) +
                           " jobs): the config file, a plugin's kernels or this machine changed since it was started");
}

// The report's meta: what ran, with which plugins, on which GPU(s), and a shard's place in the whole plan.
ReportMeta SweepRun::report_meta(const SweepParts& parts, const SweepPlan& plan, const SweepDevices& devices,
                                 const Registry& registry) const {
    MetaInputs meta;
    meta.argv = request_.argv;
    if (parts.configs.size() == 1)
        meta.config = parts.configs.front().to_json();
    else
        for (const auto& p : parts.configs) meta.config.push_back(p.to_json());
    meta.seed = parts.configs.front().seed;
    for (const auto& p : registry.plugins())
        meta.plugins.push_back({p.path, p.name, p.version, p.sha256, p.abi_major, p.abi_minor, p.error});
    meta.gpu = devices.gpu;
    ReportMeta report_meta = make_report_meta(meta);
    if (request_.shard)  // what runner merge checks K shards against (merge/shard.hpp)
        report_meta.shard = SweepShardMeta{request_.shard->index,
                                           request_.shard->count,
                                           plan.whole_plan_size,
                                           plan.whole_plan_sha256,
                                           sha256_hex(report_meta.config.dump()),
                                           fs::current_path().string()};
    for (const auto& lane : devices.lanes) report_meta.devices.push_back({lane.ordinal, lane.uuid, lane.gpu});
    return report_meta;
}

// Reports: named by the config, or the default folder; a resumed sweep keeps the ones it had.
SweepReports SweepRun::open_reports(const SweepParts& parts, const SweepPlan& plan, const SweepDevices& devices,
                                    const Registry& registry) {
    const SweepConfig& main_part = parts.configs.front();
    SweepReports out;
    // One kernel serving every dtype of the sweep is written as the plain name, as before per-dtype baselines.
    out.baseline = main_part.baseline.simplified_for(main_part.dtypes);
    std::optional<JournalWriter> journal;
    ReportMeta meta;
    std::vector<Record> already;
    try {
        if (resume_) {
            check_resumable(plan, registry);
            const nlohmann::json& h = resume_->contents.header;
            out.targets.json = h["json"].get<std::string>();
            out.targets.csv = h["csv"].get<std::string>();
            out.targets.journal = resume_->journal_path;
            meta = read_resumed_meta(h["meta"], *given_.resume);
            already = std::move(resume_->contents.records);
            journal.emplace(JournalWriter::continue_at(out.targets.journal, resume_->contents.valid_bytes));
            journal->append_event(
                {{"resumed", utc_timestamp_iso8601()}, {"argv", given_.argv}, {"rows_done", already.size()}});
        } else {
            out.targets = new_report_targets(main_part, request_);
            if (std::string refusal = why_not_overwrite(out.targets, request_.force, runner_word_); !refusal.empty())
                throw RunError(RunError::Kind::cannot_run, "refusing to overwrite: " + refusal);
            meta = report_meta(parts, plan, devices, registry);
            // What --resume needs to make the same plan again: the command line, where it ran, the files.
            const nlohmann::json header = {{"argv", request_.argv},
                                           {"cwd", fs::current_path().string()},
                                           {"json", out.targets.json.string()},
                                           {"csv", out.targets.csv.string()},
                                           {"planned", plan.jobs.size()},
                                           {"plan_sha256", plan_fingerprint(plan.jobs)},
                                           {"meta", meta}};
            journal.emplace(JournalWriter::create(out.targets.journal, header, request_.force));
        }
        out.writer.emplace(out.targets.json, out.targets.csv, std::move(*journal), meta, out.baseline, plan.jobs.size(),
                           std::move(already));
        auto progress = std::make_unique<ProgressReporter>(log_, plan.nothing_measured.has_value());
        out.progress = progress.get();
        out.writer->add_reporter(std::move(progress));
    } catch (const RunError&) {
        throw;
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::cannot_run, std::string("cannot write reports: ") + e.what());
    }
    log_ << "runner: " << plan.jobs.size() << " job(s)";
    if (out.writer->done() > 0) log_ << ", " << out.writer->done() << " already done";
    log_ << "; reports: " << out.targets.json.string() << ", " << out.targets.csv.string() << " (journal "
         << out.targets.journal.string() << ")\n";
    return out;
}

// One finished row: its roofline against its own GPU, then to the reporters (the journal, the reports, the progress
// line).
void SweepRun::take_row(Record& r, const std::optional<GpuInfo>& row_gpu, SweepReports& reports, SweepRows& rows) {
    if (r.status == RowStatus::ok && r.backend == Backend::cuda && row_gpu) annotate_roofline(r, *row_gpu);
    if (r.status != RowStatus::ok && r.status != RowStatus::skipped) rows.all_good = false;
    reports.writer->add(r);
}

// The jobs that run in this thread, one after the other; returns the CUDA jobs left for the lanes.
std::vector<Job> SweepRun::run_here(const SweepPlan& plan, const SweepDevices& devices, SweepReports& reports,
                                    SweepRows& rows) {
    std::vector<Job> lane_jobs;
    for (const auto& p : plan.jobs) {
        if (stop_requested()) break;
        if (reports.writer->has(p.job.id)) continue;
        if (!devices.lanes.empty() && p.backend == Backend::cuda && !p.skip_reason) {
            lane_jobs.push_back(p.job);
            lane_jobs.back().settings.device = 0;  // a lane's worker sees its GPU alone, as device 0
            continue;
        }
        Record r = p.skip_reason ? skipped_record(p) : executor().run_job(p.job);
        if (stop_requested()) break;  // its worker was killed for the stop: not a row, it runs again on resume
        take_row(r, devices.gpu, reports, rows);
    }
    executor().finish();
    return lane_jobs;
}

// --devices: the CUDA jobs in lanes, one thread and one executor per GPU.
void SweepRun::run_lanes(const std::vector<Job>& lane_jobs, const SweepDevices& devices, SweepReports& reports,
                         SweepRows& rows) {
    std::vector<std::unique_ptr<Executor>> lane_executors;
    for (const auto& lane : devices.lanes)
        lane_executors.push_back(std::make_unique<Executor>(lane_options(options_, lane)));
    LaneCallbacks<Record> callbacks;
    callbacks.run = [&](size_t i, size_t job) { return lane_executors[i]->run_job(lane_jobs[job]); };
    callbacks.take = [&](size_t i, size_t, Record&& r) {
        if (stop_requested()) return;  // killed for the stop: it runs again on resume
        r.extra.device = devices.lanes[i].ordinal;
        r.extra.device_uuid = devices.lanes[i].uuid;
        take_row(r, devices.lanes[i].gpu, reports, rows);
    };
    callbacks.finish = [&](size_t i) { lane_executors[i]->finish(); };
    callbacks.stop = [] { return stop_requested(); };
    run_in_lanes(kernel_runs(lane_jobs), devices.lanes.size(), callbacks);
}

// Runs the rows, journaling every row as it arrives. From here SIGINT/SIGTERM stop after the current worker.
SweepRows SweepRun::run_rows(const SweepPlan& plan, const SweepDevices& devices, SweepReports& reports) {
    install_stop_handlers();
    sweep_start_ = std::chrono::steady_clock::now();
    SweepRows rows;
    for (const Record& r : reports.writer->records())
        if (r.status != RowStatus::ok && r.status != RowStatus::skipped) rows.all_good = false;
    try {
        // With --devices the CUDA jobs wait for the lanes; everything else runs first, alone, so CPU timings
        // are not disturbed by the GPUs' host threads.
        std::vector<Job> lane_jobs = run_here(plan, devices, reports, rows);
        if (!lane_jobs.empty() && !stop_requested()) run_lanes(lane_jobs, devices, reports, rows);
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::cannot_run, std::string("cannot write reports: ") + e.what());
    }
    return rows;
}

// The reports rendered, the table printed, and the exit status the rows give.
int SweepRun::finish(const SweepPlan& plan, SweepReports& reports, const SweepRows& rows) {
    ReportWriter& writer = *reports.writer;
    const ReportTargets& targets = reports.targets;
    reports.progress->finish();
    try {
        writer.render();
    } catch (const std::exception& e) {
        throw RunError(RunError::Kind::cannot_run, std::string("cannot write reports: ") + e.what());
    }
    if (request_.verbose) print_writing_cost(writer, seconds_since(sweep_start_), log_);
    if (const int signo = stop_signal(); signo != 0) {
        const std::string report = resume_ ? *given_.resume : targets.json.string();
        log_ << "runner: stopped by " << (signo == SIGINT ? "SIGINT" : "SIGTERM") << ": " << writer.done() << " of "
             << plan.jobs.size() << " rows finished; reports: " << targets.json.string() << ", " << targets.csv.string()
             << "; resume with: " << runner_word_ << " --resume " << shell_word(report) << "\n";
        return 128 + signo;
    }
    if (plan.nothing_measured) {
        // The reason was said before the rows; a table of N rows each repeating it would bury it.
        out_ << "\n" << writer.done() << " rows: " << writer.done() << " skipped\n";
        out_ << "reports: " << targets.json.string() << "  " << targets.csv.string() << "\n";
        log_ << "runner: nothing was measured: every row was skipped\n";
        return 3;
    }
    out_ << "\n";
    ConsoleTableReporter table(out_);  // the same rows the journal and the reports hold
    table.report_context(writer.context());
    table.render(writer.rows());
    out_ << "reports: " << targets.json.string() << "  " << targets.csv.string() << "\n";
    return rows.all_good ? 0 : 1;
}

}  // namespace kreg
