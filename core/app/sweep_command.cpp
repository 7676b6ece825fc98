#include "sweep_command.hpp"

#include "common/baseline.hpp"
#include "common/host_info.hpp"
#include "common/suggest.hpp"
#include "common/sha256.hpp"
#include "measure/roofline.hpp"
#include "merge/shard.hpp"
#include "paths.hpp"
#include "plugin/discovery.hpp"
#include "plugin/registry.hpp"
#include "report/console.hpp"
#include "report/meta.hpp"
#include "report/report_writer.hpp"
#include "device_lanes.hpp"
#include "report_files.hpp"
#include "sweep/lanes.hpp"
#include "sweep/plan.hpp"
#include "worker/stop_request.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <iostream>
#include <set>

namespace kreg::app {
namespace {

namespace fs = std::filesystem;

Registry build_registry(const CommandLine& cl, const fs::path& exe, Executor& executor, int device) {
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
    for (const auto& p : problems) std::cerr << "runner: warning: " << p << "\n";
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
    std::vector<SweepConfig> parts{cpu};  // the GPU part's baseline is each dtype's cuBLAS kernel (run_command)
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

void print_plan(const std::vector<PlannedJob>& plan) {
    for (const auto& p : plan) {
        std::cout << p.job.id << "  " << p.job.kernel << "  " << to_string(p.job.dtype) << "  "
                  << to_string(p.job.shape) << "  " << (p.skip_reason ? "skip: " + *p.skip_reason : "run") << "\n";
    }
    std::cout << plan.size() << " job(s)\n";
}

// The command line recorded in a journal, parsed again as it was then (in its working directory).
std::optional<CommandLine> recorded_command_line(const ResumeState& resume, const std::string& report) {
    const nlohmann::json& h = resume.contents.header;
    std::vector<std::string> args;
    for (const auto& a : h["argv"]) {
        if (!a.is_string()) {
            std::cerr << "runner: cannot resume " << report << ": " << resume.journal_path.string()
                      << ":1: /argv holds a non-string\n";
            return std::nullopt;
        }
        args.push_back(a.get<std::string>());
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    try {
        CommandLine cl = parse_command_line(int(args.size()), argv.data());
        const std::string cwd = h["cwd"].get<std::string>();
        if (::chdir(cwd.c_str()) != 0) {
            std::cerr << "runner: cannot resume " << report << ": its sweep ran in " << cwd
                      << ", which cannot be entered now: " << std::strerror(errno) << "\n";
            return std::nullopt;
        }
        return cl;
    } catch (const std::exception& e) {
        std::cerr << "runner: cannot resume " << report << ": its recorded command line no longer parses: " << e.what()
                  << "\n";
        return std::nullopt;
    }
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

}  // namespace

int run_command(const CommandLine& given) {
    CommandLine cl = given;
    std::optional<ResumeState> resume;
    if (given.resume) {
        std::string error;
        resume = read_resume_state(*given.resume, error);
        if (!resume) {
            std::cerr << "runner: " << error << "\n";
            return 2;
        }
        const size_t planned = resume->contents.header["planned"].get<size_t>();
        std::set<uint64_t> done_ids;
        for (const auto& r : resume->contents.records) done_ids.insert(r.job_id);
        if (done_ids.size() >= planned) {
            std::cerr << "runner: " << *given.resume << " is complete (" << planned << " of " << planned
                      << " rows); nothing to resume\n";
            return 3;
        }
        if (!resume->contents.dropped_tail.empty())
            std::cerr << "runner: " << resume->journal_path.string() << ": " << resume->contents.dropped_tail
                      << " (the runner was killed while writing it; that job runs again)\n";
        auto recorded = recorded_command_line(*resume, *given.resume);
        if (!recorded) return 2;
        cl = *recorded;
        cl.verbose = cl.verbose || given.verbose;
        std::cerr << "runner: resuming " << *given.resume << ": " << done_ids.size() << " of " << planned
                  << " rows done\n";
    }
    const fs::path exe = runner_executable();
    ExecutorOptions options;
    options.isolation = cl.isolation;
    options.runner_exe = exe.string();
    options.load_timeout_s = cl.load_timeout_s;
    options.echo_worker_stderr = cl.verbose;
    Executor executor(options);
    const int device = cl.overrides.device.value_or(0);

    const Registry registry = build_registry(cl, exe, executor, device);
    for (const auto& p : registry.problems()) std::cerr << "runner: plugin problem: " << p << "\n";
    if (cl.list) {
        // --kernels narrows the list as it narrows a sweep: names or globs, a typo refused with a did-you-mean.
        ListOptions list;
        list.wide = cl.wide;
        try {
            if (cl.overrides.kernels)
                list.only =
                    resolve_kernel_patterns(*cl.overrides.kernels, registry.names(), std::string(kCommandLineSource));
        } catch (const ConfigError& e) {
            std::cerr << "runner: config error: " << e.what() << "\n";
            return 2;
        }
        if (cl.format == "json")
            std::cout << registry.to_json(list).dump(2) << "\n";
        else
            std::cout << registry.format_table(list);
        return 0;
    }

    // 1. What to run: a config file, quick-run options, or the built-in default.
    std::vector<SweepConfig> parts;
    std::vector<std::vector<std::string>> kernels_of_part;
    nlohmann::json gpu = nullptr;
    bool gpu_queried = false;
    auto query_gpu = [&](bool calibrate) {
        if (gpu_queried) return;
        gpu_queried = true;
        std::cerr << "runner: reading GPU facts" << (calibrate ? " and measuring ceilings" : "") << "...\n";
        const nlohmann::json reply = executor.device_info(device, calibrate, 300.0);
        if (reply.contains("error"))
            std::cerr << "runner: no GPU measurements: " << reply["error"].get<std::string>() << "\n";
        else
            gpu = gpu_of_device_reply(reply);
        if (gpu.is_object() && gpu.contains("ceilings_unavailable"))
            std::cerr << "runner: no measured ceilings: " << gpu["ceilings_unavailable"].get<std::string>() << "\n";
    };
    try {
        if (cl.config) {
            const fs::path path = resolve_config_path(*cl.config, configs_dir(exe));
            parts.push_back(load_sweep_config(path));
        } else if (any_quick_option(cl.overrides)) {
            SweepConfig c;
            c.source = std::string(kCommandLineSource);
            c.name = "cli";
            c.kernels = {"*"};
            c.shapes = {{512, 512, 512}};
            parts.push_back(c);
        } else {
#ifdef KREG_HAVE_CUDA
            const bool probe_gpu = true;
#else
            const bool probe_gpu = false;
#endif
            bool have_gpu = false;
            if (probe_gpu) {
                const nlohmann::json reply = executor.device_info(device, false, 60.0);
                have_gpu = !reply.contains("error");
            }
            parts = builtin_default(registry, have_gpu);
            std::cerr << "runner: no config given; running the built-in default sweep ("
                      << (parts.size() > 1 ? "CPU and GPU kernels" : "CPU kernels") << ")\n";
        }
        for (auto& part : parts) {
            apply_overrides(part, cl.overrides);
            for (const auto& note : part.notes) std::cerr << "runner: note: " << note << "\n";
            std::vector<std::string> unmatched;
            auto names = resolve_kernel_patterns(part.kernels, registry.names(),
                                                 cl.overrides.kernels ? std::string(kCommandLineSource) : part.source,
                                                 &unmatched);
            for (const auto& glob : unmatched)
                std::cerr << "runner: note: no loaded kernel matches '" << glob << "' (" << part.source << ")\n";
            // The built-in default's GPU part, and quick runs that name dtypes but no baseline, compare each
            // dtype with its cuBLAS kernel where the selection has it (issue 12: bf16 rows against cublas_bf16).
            const bool wants_default_baseline = part.source == kBuiltinDefaultSource ||
                                                (part.source == kCommandLineSource && cl.overrides.dtypes.has_value());
            if (!part.baseline && wants_default_baseline) part.baseline = default_baseline(part.dtypes, names);
            check_baseline(part, registry, cl.overrides.baseline.has_value(), names);
            kernels_of_part.push_back(names);
        }
    } catch (const ConfigError& e) {
        std::cerr << "runner: config error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "runner: " << e.what() << "\n";
        return 2;
    }

    // Lab conveniences reshape how each job is measured.
    for (auto& part : parts) {
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

    // 2. The plan: every job, with those that cannot run here already skipped.
    std::vector<PlannedJob> plan;
    for (size_t i = 0; i < parts.size(); ++i) {
        for (auto& p : plan_sweep(parts[i], registry, kernels_of_part[i])) {
            p.job.id = plan.size();
            plan.push_back(std::move(p));
        }
    }
    // A shard keeps every K-th job; ids stay the whole plan's, so K shards' rows never collide. What merge
    // checks shards against is the whole plan, so it is fingerprinted before the slice is taken.
    const size_t whole_plan_size = plan.size();
    const std::string whole_plan_sha256 = cl.shard ? plan_fingerprint(plan) : "";
    if (cl.shard && cl.shard->count > 1) {
        std::vector<PlannedJob> slice;
        for (auto& p : plan)
            if (p.job.id % uint64_t(cl.shard->count) == uint64_t(cl.shard->index - 1)) slice.push_back(std::move(p));
        std::cerr << "runner: shard " << cl.shard->index << "/" << cl.shard->count << ": " << slice.size() << " of "
                  << plan.size() << " job(s)\n";
        plan = std::move(slice);
    }
    if (cl.stress_s && plan.size() != 1) {
        std::cerr << "runner: --stress runs one kernel at one shape and dtype; the selection gives " << plan.size()
                  << " jobs (use --kernels NAME --shape MxNxK)\n";
        return 2;
    }
    if (cl.stress_s)
        std::cerr << "runner: stressing " << plan.front().job.kernel << " for " << *cl.stress_s
                  << " s; watch clocks and power with: nvidia-smi -l 1\n";
    if (cl.dry_run) {
        print_plan(plan);
        return 0;
    }
    if (plan.empty()) {
        std::cerr << "runner: nothing to run\n";
        return 3;
    }
    // Said first, before the rows scroll past: a sweep that can measure nothing here exits with 3 at the end.
    const std::optional<std::string> nothing_measured = nothing_measurable(plan);
    if (nothing_measured) std::cerr << "runner: " << *nothing_measured << "\n";
    const bool runs_cuda = std::any_of(
        plan.begin(), plan.end(), [](const PlannedJob& p) { return p.backend == Backend::cuda && !p.skip_reason; });
    // --devices: the CUDA jobs run on several GPUs at once, one lane (its own worker) per GPU, each lane's
    // workers seeing only their GPU. A sweep with no CUDA job to run needs no GPU named.
    std::vector<DeviceLane> lanes;
    if (cl.devices && runs_cuda) {
        std::string why;
        lanes = resolve_device_lanes(*cl.devices, executor, why);
        if (why.empty()) {
            std::cerr << "runner: reading the facts of " << lanes.size() << " GPU(s)"
                      << (cl.calibrate ? " and measuring their ceilings" : "") << "...\n";
            describe_lanes(lanes, options, cl.calibrate, why);
        }
        if (!why.empty()) {
            std::cerr << "runner: " << why << "\n";
            return 2;
        }
        gpu = lanes.front().gpu;
        for (const auto& lane : lanes)
            std::cerr << "runner: device " << lane.ordinal << ": " << lane.gpu["facts"].value("name", std::string("?"))
                      << " " << lane.uuid << "\n";
    } else if (runs_cuda) {
        query_gpu(cl.calibrate);
    }

    // 3. Reports: named by the config, or the default folder; a resumed sweep keeps the ones it had.
    const SweepConfig& main_part = parts.front();
    // One kernel serving every dtype of the sweep is written as the plain name, as before per-dtype baselines.
    const Baseline report_baseline = main_part.baseline.simplified_for(main_part.dtypes);
    const std::string fingerprint = plan_fingerprint(plan);
    const std::string runner_word = shell_word(given.argv.empty() ? "runner" : given.argv.front());
    ReportTargets targets;
    std::optional<JournalWriter> journal;
    nlohmann::json report_meta;
    std::vector<Record> already;
    try {
        if (resume) {
            const nlohmann::json& h = resume->contents.header;
            if (std::string changed = changed_plugin(h["meta"].value("plugins", nlohmann::json()), registry, plan);
                !changed.empty()) {
                std::cerr << "runner: cannot resume " << *given.resume << ": " << changed
                          << "; its rows would mix two builds (start a new report instead)\n";
                return 2;
            }
            if (plan.size() != h["planned"].get<size_t>() || fingerprint != h["plan_sha256"]) {
                std::cerr
                    << "runner: cannot resume " << *given.resume
                    << ": the plan made again from its recorded command line (" << plan.size()
                    << " jobs) is not the recorded one (" << h["planned"].get<size_t>()
                    << " jobs): the config file, a plugin's kernels or this machine changed since it was started\n";
                return 2;
            }
            targets.json = h["json"].get<std::string>();
            targets.csv = h["csv"].get<std::string>();
            targets.journal = resume->journal_path;
            report_meta = h["meta"];
            already = std::move(resume->contents.records);
            journal.emplace(JournalWriter::continue_at(targets.journal, resume->contents.valid_bytes));
            journal->append_event(
                {{"resumed", utc_timestamp_iso8601()}, {"argv", given.argv}, {"rows_done", already.size()}});
        } else {
            // {shard} in a report path is the slice ("shard-2-of-4", "all" unsharded), so that the K tasks of one
            // Slurm array, given one command line, write K reports; unnamed shard reports say it too.
            const std::string shard_tag_text = cl.shard ? shard_tag(cl.shard->index, cl.shard->count) : "all";
            const std::string stem = (fs::path(cl.output_dir) / (main_part.name + "-" + kTimePlaceholder +
                                                                 (cl.shard ? "-" + shard_tag_text : "")))
                                         .string();
            // A named JSON report without a named CSV gets its CSV beside it (--json r/x.json: r/x.csv).
            const std::string json_template = main_part.output.json.value_or(stem + ".json");
            const std::string csv_template =
                main_part.output.csv.value_or(main_part.output.json ? csv_beside(json_template) : stem + ".csv");
            targets = choose_report_targets(with_shard_tag(json_template, shard_tag_text),
                                            with_shard_tag(csv_template, shard_tag_text));
            if (std::string refusal = why_not_overwrite(targets, cl.force, runner_word); !refusal.empty()) {
                std::cerr << "runner: refusing to overwrite: " << refusal << "\n";
                return 3;
            }
            MetaInputs meta;
            meta.argv = cl.argv;
            if (parts.size() == 1)
                meta.config = parts.front().to_json();
            else
                for (const auto& p : parts) meta.config.push_back(p.to_json());
            meta.seed = main_part.seed;
            for (const auto& p : registry.plugins())
                meta.plugins.push_back({p.path, p.name, p.version, p.sha256, p.abi_major, p.abi_minor, p.error});
            meta.gpu = gpu;
            report_meta = make_report_meta(meta);
            if (cl.shard)  // what runner merge checks K shards against (merge/shard.hpp)
                report_meta["shard"] =
                    to_json(SweepShardMeta{cl.shard->index, cl.shard->count, whole_plan_size, whole_plan_sha256,
                                           sha256_hex(report_meta["config"].dump()), fs::current_path().string()});
            if (!lanes.empty()) {
                report_meta["devices"] = nlohmann::json::array();
                for (const auto& lane : lanes)
                    report_meta["devices"].push_back(
                        {{"ordinal", lane.ordinal}, {"uuid", lane.uuid}, {"gpu", lane.gpu}});
            }
            // What --resume needs to make the same plan again: the command line, where it ran, the files.
            const nlohmann::json header = {{"argv", cl.argv},
                                           {"cwd", fs::current_path().string()},
                                           {"json", targets.json.string()},
                                           {"csv", targets.csv.string()},
                                           {"planned", plan.size()},
                                           {"plan_sha256", fingerprint},
                                           {"meta", report_meta}};
            journal.emplace(JournalWriter::create(targets.journal, header, cl.force));
        }
    } catch (const std::exception& e) {
        std::cerr << "runner: cannot write reports: " << e.what() << "\n";
        return 3;
    }
    std::optional<ReportWriter> writer;
    try {
        writer.emplace(targets.json, targets.csv, std::move(*journal), report_meta, report_baseline, plan.size(),
                       std::move(already));
    } catch (const std::exception& e) {
        std::cerr << "runner: cannot write reports: " << e.what() << "\n";
        return 3;
    }
    std::cerr << "runner: " << plan.size() << " job(s)";
    if (writer->done() > 0) std::cerr << ", " << writer->done() << " already done";
    std::cerr << "; reports: " << targets.json.string() << ", " << targets.csv.string() << " (journal "
              << targets.journal.string() << ")\n";

    // 4. Run, journaling every row as it arrives. From here SIGINT/SIGTERM stop after the current worker.
    install_stop_handlers();
    const auto sweep_start = std::chrono::steady_clock::now();
    bool all_good = true;
    for (const Record& r : writer->records())
        if (r.status != RowStatus::ok && r.status != RowStatus::skipped) all_good = false;
    // One finished row: its roofline against its own GPU, journaled, and a progress line. A skipped row
    // whose reason was already said is counted, not printed again (a sweep of 475 CUDA rows on a machine
    // without a GPU is one line, not 475); when nothing can be measured the line before the rows said it.
    std::map<std::string, size_t> skips_not_shown;
    auto take_row = [&](Record& r, const nlohmann::json& row_gpu, const std::string& where) {
        if (r.status == RowStatus::ok && r.backend == Backend::cuda && !row_gpu.is_null())
            annotate_roofline(r, row_gpu["facts"], row_gpu["ceilings"]);
        if (r.status != RowStatus::ok && r.status != RowStatus::skipped) all_good = false;
        writer->add(r);
        if (r.status == RowStatus::skipped) {
            const auto [seen, first] = skips_not_shown.emplace(r.reason, 0);
            if (!first || nothing_measured) {
                ++seen->second;
                return;
            }
        }
        std::cerr << format_progress(writer->done(), plan.size(), r) << where << "\n";
    };
    // With --devices the CUDA jobs wait for the lanes; everything else runs first, alone, so CPU timings
    // are not disturbed by the GPUs' host threads.
    std::vector<Job> lane_jobs;
    try {
        for (const auto& p : plan) {
            if (stop_requested()) break;
            if (writer->has(p.job.id)) continue;
            if (!lanes.empty() && p.backend == Backend::cuda && !p.skip_reason) {
                lane_jobs.push_back(p.job);
                lane_jobs.back().settings.device = 0;  // a lane's worker sees its GPU alone, as device 0
                continue;
            }
            Record r = p.skip_reason ? skipped_record(p) : executor.run_job(p.job);
            if (stop_requested()) break;  // its worker was killed for the stop: not a row, it runs again on resume
            take_row(r, gpu, "");
        }
        executor.finish();
        if (!lane_jobs.empty() && !stop_requested()) {
            std::vector<std::unique_ptr<Executor>> lane_executors;
            for (const auto& lane : lanes)
                lane_executors.push_back(std::make_unique<Executor>(lane_options(options, lane)));
            LaneCallbacks callbacks;
            callbacks.run = [&](size_t i, const Job& job) { return lane_executors[i]->run_job(job); };
            callbacks.on_record = [&](size_t i, Record&& r) {
                if (stop_requested()) return;  // killed for the stop: it runs again on resume
                r.extra.device = lanes[i].ordinal;
                r.extra.device_uuid = lanes[i].uuid;
                take_row(r, lanes[i].gpu, " [device " + std::to_string(lanes[i].ordinal) + "]");
            };
            callbacks.finish = [&](size_t i) { lane_executors[i]->finish(); };
            callbacks.stop = [] { return stop_requested(); };
            run_in_lanes(lane_jobs, lanes.size(), callbacks);
        }
    } catch (const std::exception& e) {
        std::cerr << "runner: cannot write reports: " << e.what() << "\n";
        return 3;
    }
    for (const auto& [reason, count] : skips_not_shown)
        if (count > 0 && !nothing_measured)
            std::cerr << "runner: " << count << " more row(s) skipped: " << one_line(reason, 300) << "\n";
    try {
        writer->render();
    } catch (const std::exception& e) {
        std::cerr << "runner: cannot write reports: " << e.what() << "\n";
        return 3;
    }

    if (cl.verbose) {
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_start).count();
        std::cerr << "runner: " << writer->done() << " rows in " << wall << " s; journal and reports took "
                  << writer->seconds_writing() << " s of it ("
                  << 100.0 * writer->seconds_writing() / std::max(wall, 1e-9) << " %): " << writer->renders()
                  << " renders " << writer->seconds_rendering() << " s, fdatasync " << writer->seconds_syncing()
                  << " s\n";
    }
    if (const int signo = stop_signal(); signo != 0) {
        const std::string report = resume ? *given.resume : targets.json.string();
        std::cerr << "runner: stopped by " << (signo == SIGINT ? "SIGINT" : "SIGTERM") << ": " << writer->done()
                  << " of " << plan.size() << " rows finished; reports: " << targets.json.string() << ", "
                  << targets.csv.string() << "; resume with: " << runner_word << " --resume " << shell_word(report)
                  << "\n";
        return 128 + signo;
    }
    if (nothing_measured) {
        // The reason was said before the rows; a table of N rows each repeating it would bury it.
        std::cout << "\n" << writer->done() << " rows: " << writer->done() << " skipped\n";
        std::cout << "reports: " << targets.json.string() << "  " << targets.csv.string() << "\n";
        std::cerr << "runner: nothing was measured: every row was skipped\n";
        return 3;
    }
    std::cout << "\n" << format_table(writer->records(), report_baseline);
    std::cout << "reports: " << targets.json.string() << "  " << targets.csv.string() << "\n";
    return all_good ? 0 : 1;
}

}  // namespace kreg::app
