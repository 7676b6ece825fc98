#include "sweep/executor.hpp"

#include "common/gpu_info.hpp"
#include "common/sha256.hpp"
#include "common/text.hpp"
#include "plugin/discovery.hpp"
#include "report/number_format.hpp"
#include "sandbox/confined_spawn.hpp"
#include "sandbox/memory_limit.hpp"
#include "sandbox/policy_json.hpp"
#include "sweep/result_claim.hpp"
#include "worker/cpu_time.hpp"
#include "pipeline/call_watchdog.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace kreg {
namespace fs = std::filesystem;

namespace {
// A limit as people write it: "20", "2.5", not "20.000000".
std::string seconds_text(double seconds) { return detail::format_general(seconds, 6); }

// The longest text of a worker's (reasons, errors) a row keeps.
constexpr size_t kMaxClaimText = 4096;

std::string last_lines(const std::string& text, size_t max_chars) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
    if (t.size() > max_chars) t = t.substr(t.size() - max_chars);
    return printable_utf8(t, max_chars + 8);
}

// Copies plugin into the scratch folder for the confined worker to load (it may not be able to read the
// submission's own folder, and must not: that folder holds other students' work).
std::string stage_plugin(const std::string& plugin, const std::string& scratch) {
    const fs::path folder = fs::path(scratch) / "plugin";
    fs::create_directories(folder);
    const fs::path staged = folder / fs::path(plugin).filename();
    fs::copy_file(plugin, staged, fs::copy_options::overwrite_existing);
    fs::permissions(staged, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::permissions(folder, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
    return staged.string();
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    if (from.empty()) return text;
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
        text.replace(at, from.size(), to);
    return text;
}

}  // namespace

struct Executor::Worker {
    // Destroyed in reverse: the process (its whole namespace), then its cgroup, then its scratch folder.
    struct Scratch {
        std::string path;
        ~Scratch() { remove_scratch_dir(path); }
    } scratch;
    std::optional<WorkerCgroup> cgroup;
    std::string cgroup_unavailable;
    uint64_t memory_bytes = 0;
    WorkerProcess process;
    std::string plugin_path;                 // plugin it has loaded ("" before the first job)
    std::string staged_path;                 // the copy it loads, when confined
    platform::ProcessId cpu_clock_pid = -1;  // the process whose CPU time bounds its checked calls (-1: none, below)

    // The loader's messages name the staged copy; the row names the submission.
    std::string unstage(const std::string& text) const { return replace_all(text, staged_path, plugin_path); }

    uint64_t* peak_sink = nullptr;  // Executor::peak_memory_bytes_, raised when this worker, reaped, goes
    ~Worker() {
        if (!peak_sink) return;
        const uint64_t peak =
            std::max<uint64_t>(cgroup ? cgroup->peak_bytes() : 0, uint64_t(process.max_rss_kib()) * 1024);
        *peak_sink = std::max(*peak_sink, peak);
    }
};

EndCause end_cause_of(const ExitInfo& exit) {
    if (exit.signal) return *exit.signal == "SIGSYS" ? EndCause::sandbox_refusal : EndCause::signal;
    if (exit.exit_code) return EndCause::exited;
    return EndCause::signal;  // reaped without a status the reaper could report: killed by the parent
}

std::string explain_worker_end(const ExitInfo& exit, const std::string& stderr_tail) {
    std::string s = "worker " + exit.describe();
    const std::string tail = last_lines(stderr_tail, 300);
    if (!tail.empty()) s += "; last stderr: " + tail;
    return s;
}

Executor::Executor(ExecutorOptions options) : options_(std::move(options)) {
    if (options_.isolation == Isolation::none) in_process_ = std::make_unique<WorkerSession>();
}

Executor::~Executor() {
    if (worker_) worker_->process.stop();
}

// "" when w's CPU time bounds its elapsed time (it runs on one CPU and cannot leave it) and its CPU clock can be
// read, and then sets w.cpu_clock_pid; else why not.
std::string Executor::one_cpu_worker(Worker& w, const std::string& pinned_why_not) const {
    if (options_.timing_cpu < 0) return "the worker was not started on one CPU (only CPU rubrics' workers are)";
    if (!pinned_why_not.empty()) return "the worker could not be started on one CPU: " + pinned_why_not;
    if (options_.sandbox && !SandboxReport::from_json(last_sandbox_).has_applied("fixed affinity"))
        return "the worker's sandbox could not fix its affinity, so it could run on several CPUs at once";
    const platform::ProcessId pid = w.process.program_pid();
    if (pid <= 0) return "the worker's process was not found under its reaper";
    std::string why_not;
    if (!ProcessCpuClock::of(pid, why_not)) return why_not;
    w.cpu_clock_pid = pid;
    return "";
}

std::unique_ptr<Executor::Worker> Executor::start_worker(const std::string& plugin, std::string& error) {
    try {
        auto w = std::make_unique<Worker>();
        w->peak_sink = &peak_memory_bytes_;
        std::vector<std::string> args{"__worker"};
        if (!options_.cuda_visible_devices.empty())
            args.insert(args.end(), {"--cuda-visible-devices", options_.cuda_visible_devices});
        std::optional<WorkerConfinement> confinement;
        if (options_.sandbox) {
            // <scratch>/plugin: the copy it loads, read-only to it; <scratch>/work: its only writable folder
            // (a private tmpfs inside its namespaces where one can be mounted), HOME and TMPDIR.
            SandboxPolicy policy = *options_.sandbox;
            w->scratch.path = make_scratch_dir();
            const std::string work = make_scratch_subdir(w->scratch.path, "work");
            policy.scratch_dir = work;
            policy.network_namespace = false;  // the spawn gives it one (and no user namespace of its own)
            if (!plugin.empty()) {
                w->plugin_path = plugin;
                w->staged_path = stage_plugin(plugin, w->scratch.path);
                policy.readable_paths.push_back(fs::path(w->staged_path).parent_path().string());
            }
            w->memory_bytes = policy.memory_bytes;
            if (policy.memory_bytes > 0 || policy.max_processes > 0)
                w->cgroup = WorkerCgroup::create(policy.memory_bytes, policy.max_processes, w->cgroup_unavailable);
            policy.memory_in_cgroup = w->cgroup && policy.memory_bytes > 0;
            policy.fixed_affinity = options_.timing_cpu >= 0;
            confinement.emplace();
            confinement->scratch_dir = work;
            confinement->scratch_tmpfs_bytes = policy.scratch_bytes;
            confinement->environment = confined_environment(work, worker_environment_names());
            Worker* raw = w.get();
            confinement->before_start = [raw](platform::ProcessId reaper) {
                std::string why;
                if (raw->cgroup && !raw->cgroup->add(reaper, why)) {
                    raw->cgroup_unavailable = "cannot move the worker into " + raw->cgroup->path() + ": " + why;
                    raw->cgroup.reset();
                }
            };
            args.insert(args.end(), {"--sandbox", nlohmann::json(policy).dump()});
        }
        const bool memory_in_cgroup = w->cgroup && w->memory_bytes > 0;
        std::string pinned_why_not;
        {
            const OneCpuWhileStarting one_cpu(options_.timing_cpu);  // the worker (or its reaper) inherits it
            pinned_why_not = one_cpu.error();
            w->process = WorkerProcess::start(options_.runner_exe, args, confinement ? &*confinement : nullptr);
        }
        if (memory_in_cgroup && !w->cgroup) {  // the worker was told the cgroup caps its memory: none would
            error = "worker did not start: " + w->cgroup_unavailable;
            return nullptr;
        }
        const auto hello = w->process.exchange(nullptr, options_.load_timeout_s);
        if (hello.outcome == WorkerProcess::Outcome::violation) {
            error = "worker did not start: " + std::string(kProtocolViolationPrefix) + hello.violation;
            return nullptr;
        }
        if (hello.outcome != WorkerProcess::Outcome::reply || hello.message.value("op", "") != "hello") {
            error = "worker did not start: " + explain_worker_end(hello.exit, w->process.stderr_tail());
            return nullptr;
        }
        if (hello.message.value("protocol", 0) != kWorkerProtocolVersion) {
            error = "worker speaks protocol " + hello.message.value("protocol", nlohmann::json(0)).dump() +
                    ", runner expects " + std::to_string(kWorkerProtocolVersion);
            return nullptr;
        }
        last_sandbox_ = nullptr;
        if (hello.message.contains("sandbox")) last_sandbox_ = hello.message["sandbox"];
        if (options_.sandbox) {  // what the parent set up, next to what the worker says it applied
            if (!last_sandbox_.is_object())
                last_sandbox_ = {{"applied", nlohmann::json::array()}, {"unavailable", nlohmann::json::array()}};
            // The worker's own network step was left to the spawn, which made the namespace.
            auto& unavailable = last_sandbox_["unavailable"];
            for (auto it = unavailable.begin(); it != unavailable.end();)
                it = it->is_string() && it->get<std::string>().rfind("network namespace: disabled by policy", 0) == 0
                         ? unavailable.erase(it)
                         : it + 1;
            const nlohmann::json spawn = w->process.confinement_report();
            for (const auto& a : spawn["applied"]) last_sandbox_["applied"].push_back(a);
            for (const auto& u : spawn["unavailable"]) last_sandbox_["unavailable"].push_back(u);
            last_sandbox_["applied"].push_back("environment: an allow-list, HOME and TMPDIR in the scratch folder");
            last_sandbox_["applied"].push_back("scratch folder: " + w->scratch.path +
                                               "/work (private, removed afterwards)");
            if (w->cgroup)
                last_sandbox_["applied"].push_back("memory cgroup: " + w->cgroup->limits());
            else if (w->memory_bytes > 0)
                last_sandbox_["unavailable"].push_back("memory cgroup: " + w->cgroup_unavailable +
                                                       " (RLIMIT_DATA stands in)");
        }
        cpu_clock_unavailable_ = one_cpu_worker(*w, pinned_why_not);
        return w;
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

PluginInfo Executor::describe(const std::string& plugin_path, int device) {
    PluginInfo info;
    info.path = plugin_path;
    if (in_process_)
        return in_process_->handle({{"op", "describe"}, {"plugin", plugin_path}, {"device", device}})
            .at("plugin")
            .get<PluginInfo>();
    std::string error;
    auto w = start_worker(plugin_path, error);
    if (!w) {
        // Whatever went wrong, it went wrong before the worker's hello, so before the plugin was loaded.
        info.error = plugin_path + ": " + error;
        info.load_end = EndCause::worker_not_started;
        return info;
    }
    const std::string loads = w->staged_path.empty() ? plugin_path : w->staged_path;
    const auto reply =
        w->process.exchange({{"op", "describe"}, {"plugin", loads}, {"device", device}}, options_.load_timeout_s);
    if (reply.outcome == WorkerProcess::Outcome::timed_out) {
        info.error = plugin_path + ": loading did not finish within " + seconds_text(options_.load_timeout_s) +
                     " s; worker killed";
        info.load_end = EndCause::load_timeout;
    } else if (reply.outcome == WorkerProcess::Outcome::violation) {
        info.error = plugin_path + ": " + kProtocolViolationPrefix + reply.violation + " while loading; worker killed";
        info.load_end = EndCause::protocol_breach;
    } else if (reply.outcome == WorkerProcess::Outcome::ended) {
        info.error = plugin_path + ": " + explain_worker_end(reply.exit, w->process.stderr_tail()) + " while loading";
        info.load_end = end_cause_of(reply.exit);
        info.load_signal = reply.exit.signal;
        const std::string memory =
            describe_memory_limit_hit(w->memory_bytes, w->cgroup ? &*w->cgroup : nullptr, reply.exit.max_rss_kib);
        if (!memory.empty()) {
            info.error = plugin_path + ": " + memory + "; " + info.error.substr(plugin_path.size() + 2);
            info.load_end = EndCause::memory_cap;
        }
    } else if (std::string why = unexpected_field(reply.message, {"op", "plugin"});
               !why.empty() || reply.message.value("op", "") != "described") {
        info.error = plugin_path + ": " + kProtocolViolationPrefix +
                     (why.empty() ? "answered a description with '" + reply.message.value("op", "") + "'" : why);
        info.load_end = EndCause::protocol_breach;
    } else {
        try {
            info = reply.message.at("plugin").get<PluginInfo>();
            info.path = plugin_path;
            if (options_.sandbox) info.sha256 = sha256_file_hex(plugin_path);  // ours, not the worker's word
            info.error = printable_utf8(w->unstage(info.error), kMaxClaimText);
            info.name = printable_utf8(info.name, 256);
            info.version = printable_utf8(info.version, 256);
            if (info.kernels.size() > 4096) throw std::runtime_error("more than 4096 kernels");
            for (auto& k : info.kernels) k.unavailable_reason = printable_utf8(k.unavailable_reason, kMaxClaimText);
        } catch (const std::exception& e) {
            info = PluginInfo{};
            info.path = plugin_path;
            info.error = plugin_path + ": " + kProtocolViolationPrefix + "sent a malformed description: " + e.what();
            info.load_end = EndCause::protocol_breach;
        }
    }
    w->process.stop();
    if (options_.echo_worker_stderr && !w->process.stderr_tail().empty()) std::cerr << w->process.stderr_tail();
    return info;
}

nlohmann::json Executor::device_info(int device, bool calibrate, double timeout_s) {
    // The ceilings' plugin comes from the runner's own plugin folder only (plugin/discovery.hpp says why).
    const CeilingPluginSource source = calibrate ? ceiling_plugin_source(options_.runner_exe) : CeilingPluginSource{};
    const std::string ceiling_plugin = source.path.string();
    nlohmann::json request = {{"op", "device"}, {"device", device}};
    nlohmann::json reply;
    std::string staged;
    if (in_process_) {
        if (!ceiling_plugin.empty()) request["ceiling_plugin"] = ceiling_plugin;
        reply = in_process_->handle(request);
    } else {
        std::string error;
        // A confined worker gets the plugin staged in its scratch folder, as a job's plugin is.
        auto w = start_worker(ceiling_plugin, error);
        if (!w) return {{"error", error}};
        staged = w->staged_path;
        if (!ceiling_plugin.empty()) request["ceiling_plugin"] = staged.empty() ? ceiling_plugin : staged;
        const auto answer = w->process.exchange(request, timeout_s);
        w->process.stop();
        if (answer.outcome == WorkerProcess::Outcome::timed_out) return {{"error", "device query timed out"}};
        if (answer.outcome == WorkerProcess::Outcome::violation)
            return {{"error", kProtocolViolationPrefix + answer.violation}};
        if (answer.outcome != WorkerProcess::Outcome::reply)
            return {{"error", "device query: " + explain_worker_end(answer.exit, w->process.stderr_tail())}};
        reply = answer.message;
    }
    if (!reply.is_object() || reply.contains("error") || !calibrate) return reply;
    if (ceiling_plugin.empty()) {
        reply["ceilings"] = nullptr;
        reply[kCeilingsUnavailableKey] = source.unavailable;
    } else if (reply.contains(kCeilingsUnavailableKey) && reply[kCeilingsUnavailableKey].is_string() &&
               !staged.empty()) {
        reply[kCeilingsUnavailableKey] =
            replace_all(reply[kCeilingsUnavailableKey].get<std::string>(), staged, ceiling_plugin);
    }
    // Which file measured the ceilings, by the parent's own reading of it.
    if (reply.contains("ceilings") && reply["ceilings"].is_object()) {
        nlohmann::json& plugin = reply["ceilings"]["plugin"];
        if (!plugin.is_object()) plugin = nlohmann::json::object();
        plugin["path"] = ceiling_plugin;
        try {
            plugin["sha256"] = sha256_file_hex(ceiling_plugin);
        } catch (const std::exception&) {
            plugin["sha256"] = nullptr;  // gone since the worker loaded it; the path still says which
        }
    }
    return reply;
}

Record Executor::row_for_lost_worker(const Job& job, const WorkerProcess::Reply& reply, const std::string& phase) {
    const std::string tail = worker_ ? worker_->process.stderr_tail() : "";
    Record r = record_for(job, RowStatus::crashed, "");
    if (reply.outcome == WorkerProcess::Outcome::violation) {
        r.reason =
            kProtocolViolationPrefix + printable_utf8(reply.violation, kMaxClaimText) + phase + "; worker killed";
        r.end_cause = EndCause::protocol_breach;
    } else if (reply.outcome == WorkerProcess::Outcome::timed_out) {
        r.status = RowStatus::timeout;
        r.end_cause = phase.empty() ? EndCause::job_timeout : EndCause::load_timeout;
        r.reason = phase.empty()
                       ? "exceeded the time limit of " + seconds_text(job.settings.timeout_s) +
                             " s; worker and everything it started killed"
                       : "loading the plugin exceeded " + seconds_text(options_.load_timeout_s) + " s; worker killed";
        r.signal = reply.exit.signal;
    } else if (reply.exit.exit_code == kCallTimeoutExitCode && job.settings.call_timeout_s) {
        r.status = RowStatus::timeout;
        r.reason = "a single call exceeded the per-call time limit of " + seconds_text(*job.settings.call_timeout_s) +
                   " s; worker ended";
        r.exit_code = reply.exit.exit_code;
        r.end_cause = EndCause::call_timeout;
    } else {
        r.reason = explain_worker_end(reply.exit, tail) + phase;
        r.exit_code = reply.exit.exit_code;
        r.signal = reply.exit.signal;
        r.end_cause = end_cause_of(reply.exit);
        if (worker_) {  // the cgroup's memory.events or the peak RSS wait4 gave, never the worker's words
            const std::string memory = describe_memory_limit_hit(
                worker_->memory_bytes, worker_->cgroup ? &*worker_->cgroup : nullptr, reply.exit.max_rss_kib);
            if (!memory.empty()) {
                r.reason = memory + "; " + r.reason;
                r.end_cause = EndCause::memory_cap;
            }
        }
    }
    worker_.reset();
    return r;
}

Record Executor::run_job(const Job& job) { return run_job_in_worker(job, nullptr); }

Record Executor::run_checked_job(const Job& job, std::vector<CheckedCall>& calls) {
    calls.clear();
    return run_job_in_worker(job, &calls);
}

// A worker for the job's plugin, started and loaded, in worker_; or the job's row when there is none.
std::optional<Record> Executor::start_job_worker(const Job& job) {
    std::string error;
    worker_ = start_worker(job.plugin_path, error);
    if (!worker_) {
        Record r = record_for(job, RowStatus::failed, error);
        r.end_cause = EndCause::worker_not_started;  // before the hello: nothing of the plugin had run
        return r;
    }
    worker_->plugin_path = job.plugin_path;
    const std::string loads = worker_->staged_path.empty() ? job.plugin_path : worker_->staged_path;
    // Loading is its own phase with its own time limit, so a slow load is not charged to the job.
    const auto loaded = worker_->process.exchange({{"op", "load"}, {"plugin", loads}, {"device", job.settings.device}},
                                                  options_.load_timeout_s);
    if (loaded.outcome != WorkerProcess::Outcome::reply)
        return row_for_lost_worker(job, loaded, " while loading the plugin");
    const std::string op = loaded.message.value("op", "");
    if (op == "loaded" && unexpected_field(loaded.message, {"op", "sandbox"}).empty()) {
        if (loaded.message.contains("sandbox") && last_sandbox_.is_object() && loaded.message["sandbox"].is_object()) {
            // The worker's own steps after loading; the parent's stay.
            for (const auto& a : loaded.message["sandbox"].value("applied", nlohmann::json::array()))
                if (std::find(last_sandbox_["applied"].begin(), last_sandbox_["applied"].end(), a) ==
                    last_sandbox_["applied"].end())
                    last_sandbox_["applied"].push_back(a);
        } else if (loaded.message.contains("sandbox")) {
            last_sandbox_ = loaded.message["sandbox"];
        }
    } else {
        Record r = record_for(job, RowStatus::failed, "");
        if (op == "load_failed" && unexpected_field(loaded.message, {"op", "error"}).empty())
            r.reason = printable_utf8(worker_->unstage(loaded.message.value("error", "plugin could not be loaded")),
                                      kMaxClaimText);
        else
            r.reason = std::string(kProtocolViolationPrefix) + "answered the load request with '" +
                       printable_utf8(op, 64) + "'";
        r.status = op == "load_failed" ? RowStatus::failed : RowStatus::crashed;
        r.end_cause = op == "load_failed" ? EndCause::kernel_failed : EndCause::protocol_breach;
        worker_.reset();
        return r;
    }
    return std::nullopt;
}

Record Executor::run_job_in_worker(const Job& job, std::vector<CheckedCall>* calls) {
    if (in_process_) {
        if (calls)
            return record_for(job, RowStatus::failed,
                              "a job checked outside the worker needs a worker process (not --isolation none)");
        return in_process_->handle({{"op", "run"}, {"job", job}}).at("record").get<Record>();
    }

    // A worker that ended after its last reply (a plugin's thread crashing it) is not this job's fault.
    if (worker_ && (worker_->plugin_path != job.plugin_path || !worker_->process.alive())) {
        worker_->process.stop();
        worker_.reset();
    }
    if (!worker_)
        if (std::optional<Record> failed = start_job_worker(job)) return *failed;

    Job sent = job;
    if (!worker_->staged_path.empty()) sent.plugin_path = worker_->staged_path;
    std::optional<CallCollector> collector;
    if (calls)
        collector.emplace(worker_->process, job, 1 + job.settings.warmup + job.settings.repeats,
                          worker_->cpu_clock_pid);
    // On the worker's own CPU, so that each reading of its CPU time is exact (worker/cpu_time.hpp).
    const OneCpuWhileStarting on_the_workers_cpu(calls && worker_->cpu_clock_pid > 0 ? options_.timing_cpu : -1);
    const auto reply = worker_->process.exchange({{"op", "run"}, {"job", sent}}, job.settings.timeout_s,
                                                 collector ? &collector->interim() : nullptr);
    const std::string tail = worker_->process.stderr_tail();
    if (options_.echo_worker_stderr && !tail.empty()) std::cerr << tail;
    if (collector) *calls = std::move(collector->calls());
    if (reply.outcome != WorkerProcess::Outcome::reply) return row_for_lost_worker(job, reply, "");

    const std::string op = reply.message.value("op", "");
    if (op == "error" && unexpected_field(reply.message, {"op", "message"}).empty()) {
        Record failed =
            record_for(job, RowStatus::failed,
                       "worker error: " + printable_utf8(reply.message.value("message", ""), kMaxClaimText));
        failed.end_cause = EndCause::kernel_failed;
        return failed;
    }
    Record r;
    std::string violation = "answered a run with '" + printable_utf8(op, 64) + "'";
    if (ResultClaim claim; op == "result" && (violation = parse_result_message(reply.message, claim)).empty())
        violation = claim_to_row(claim, sent, worker_->memory_bytes > 0 && !worker_->cgroup, kMaxClaimText, r);
    if (!violation.empty()) {
        WorkerProcess::Reply broken;
        broken.outcome = WorkerProcess::Outcome::violation;
        broken.violation = violation;
        return row_for_lost_worker(job, broken, "");
    }
    r.plugin_path = job.plugin_path;
    r.reason = worker_->unstage(r.reason);
    if (r.status == RowStatus::failed && worker_->cgroup && worker_->memory_bytes > 0 &&
        worker_->cgroup->memory_limit_hit()) {
        // The worker lives on, but its cgroup counted the cap being reached (memory.events): that is seen, its
        // failure message is not read.
        r.reason = memory_limit_reason(worker_->memory_bytes, worker_->cgroup->peak_bytes()) + "; " + r.reason;
        r.end_cause = EndCause::memory_cap;
    }
    if (r.status == RowStatus::crashed) {  // fatal inside the worker: it exits after replying
        worker_->process.stop();
        worker_.reset();
    }
    return r;
}

void Executor::finish() {
    if (worker_) {
        worker_->process.stop();
        worker_.reset();
    }
}

}  // namespace kreg
