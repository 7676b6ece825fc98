#include "sweep/executor.hpp"

#include "report/number_format.hpp"
#include "sandbox/policy_json.hpp"
#include "worker/call_watchdog.hpp"

#include <iostream>

namespace kreg {
namespace {
// A limit as people write it: "20", "2.5", not "20.000000".
std::string seconds_text(double seconds) { return detail::format_general(seconds, 6); }
}  // namespace

struct Executor::Worker {
    WorkerProcess process;
    std::string plugin_path;  // plugin it has loaded ("" before the first job)
};

namespace {

std::string last_lines(const std::string& text, size_t max_chars) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
    if (t.size() > max_chars) t = "..." + t.substr(t.size() - max_chars);
    for (char& c : t)
        if (c == '\n' || c == '\r') c = ' ';
    return t;
}

}  // namespace

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

std::unique_ptr<Executor::Worker> Executor::start_worker(std::string& error) {
    try {
        std::vector<std::string> args{"__worker"};
        if (options_.sandbox) args.insert(args.end(), {"--sandbox", nlohmann::json(*options_.sandbox).dump()});
        auto w = std::make_unique<Worker>(Worker{WorkerProcess::start(options_.runner_exe, args), ""});
        const auto hello = w->process.exchange(nullptr, options_.load_timeout_s);
        if (hello.outcome != WorkerProcess::Outcome::reply || hello.message.value("op", "") != "hello") {
            error = "worker did not start: " + explain_worker_end(hello.exit, w->process.stderr_tail());
            return nullptr;
        }
        if (hello.message.value("protocol", 0) != kWorkerProtocolVersion) {
            error = "worker speaks protocol " + hello.message.value("protocol", nlohmann::json(0)).dump() +
                    ", runner expects " + std::to_string(kWorkerProtocolVersion);
            return nullptr;
        }
        if (hello.message.contains("sandbox")) last_sandbox_ = hello.message["sandbox"];
        return w;
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

PluginInfo Executor::describe(const std::string& plugin_path, int device) {
    const nlohmann::json request = {{"op", "describe"}, {"plugin", plugin_path}, {"device", device}};
    PluginInfo info;
    info.path = plugin_path;
    if (in_process_) return in_process_->handle(request).at("plugin").get<PluginInfo>();
    std::string error;
    auto w = start_worker(error);
    if (!w) {
        info.error = plugin_path + ": " + error;
        return info;
    }
    const auto reply = w->process.exchange(request, options_.load_timeout_s);
    if (reply.outcome == WorkerProcess::Outcome::timed_out) {
        info.error = plugin_path + ": loading did not finish within " + seconds_text(options_.load_timeout_s) +
                     " s; worker killed";
    } else if (reply.outcome == WorkerProcess::Outcome::ended) {
        info.error = plugin_path + ": " + explain_worker_end(reply.exit, w->process.stderr_tail()) + " while loading";
    } else {
        try {
            info = reply.message.at("plugin").get<PluginInfo>();
        } catch (const std::exception& e) {
            info.error = plugin_path + ": worker sent a malformed description: " + e.what();
        }
    }
    w->process.stop();
    if (options_.echo_worker_stderr && !w->process.stderr_tail().empty()) std::cerr << w->process.stderr_tail();
    return info;
}

nlohmann::json Executor::device_info(int device, bool calibrate, double timeout_s) {
    const nlohmann::json request = {{"op", "device"}, {"device", device}, {"calibrate", calibrate}};
    if (in_process_) return in_process_->handle(request);
    std::string error;
    auto w = start_worker(error);
    if (!w) return {{"error", error}};
    const auto reply = w->process.exchange(request, timeout_s);
    w->process.stop();
    if (reply.outcome == WorkerProcess::Outcome::reply) return reply.message;
    if (reply.outcome == WorkerProcess::Outcome::timed_out) return {{"error", "device query timed out"}};
    return {{"error", "device query: " + explain_worker_end(reply.exit, w->process.stderr_tail())}};
}

Record Executor::run_job(const Job& job) {
    const nlohmann::json request = {{"op", "run"}, {"job", job}};
    if (in_process_) return in_process_->handle(request).at("record").get<Record>();

    if (worker_ && worker_->plugin_path != job.plugin_path) {
        worker_->process.stop();
        worker_.reset();
    }
    if (!worker_) {
        std::string error;
        worker_ = start_worker(error);
        if (!worker_) return record_for(job, RowStatus::failed, error);
        worker_->plugin_path = job.plugin_path;
        // Loading is its own phase with its own time limit, so a slow load is not charged to the job.
        const auto loaded = worker_->process.exchange({{"op", "load"}, {"plugin", job.plugin_path}}, options_.load_timeout_s);
        if (loaded.outcome == WorkerProcess::Outcome::reply && loaded.message.contains("sandbox"))
            last_sandbox_ = loaded.message["sandbox"];
        if (loaded.outcome != WorkerProcess::Outcome::reply || loaded.message.value("op", "") != "loaded") {
            Record r = record_for(job, RowStatus::failed, "");
            if (loaded.outcome == WorkerProcess::Outcome::timed_out) {
                r.status = RowStatus::timeout;
                r.reason = "loading the plugin exceeded " + seconds_text(options_.load_timeout_s) + " s; worker killed";
            } else if (loaded.outcome == WorkerProcess::Outcome::ended) {
                r.status = RowStatus::crashed;
                r.reason = explain_worker_end(loaded.exit, worker_->process.stderr_tail()) + " while loading the plugin";
                r.exit_code = loaded.exit.exit_code;
                r.signal = loaded.exit.signal;
            } else {
                r.reason = loaded.message.value("error", "plugin could not be loaded");
            }
            worker_.reset();
            return r;
        }
    }
    const auto reply = worker_->process.exchange(request, job.settings.timeout_s);
    const std::string tail = worker_->process.stderr_tail();
    if (options_.echo_worker_stderr && !tail.empty()) std::cerr << tail;
    if (reply.outcome == WorkerProcess::Outcome::timed_out) {
        worker_.reset();
        Record r = record_for(job, RowStatus::timeout,
                              "exceeded the time limit of " + seconds_text(job.settings.timeout_s) +
                                  " s; worker process group killed");
        r.signal = reply.exit.signal;
        return r;
    }
    if (reply.outcome == WorkerProcess::Outcome::ended && reply.exit.exit_code == kCallTimeoutExitCode &&
        job.settings.call_timeout_s) {
        worker_.reset();
        Record r = record_for(job, RowStatus::timeout,
                              "a single call exceeded the per-call time limit of " +
                                  seconds_text(*job.settings.call_timeout_s) + " s; worker ended");
        r.exit_code = reply.exit.exit_code;
        return r;
    }
    if (reply.outcome == WorkerProcess::Outcome::ended) {
        worker_.reset();
        Record r = record_for(job, RowStatus::crashed, explain_worker_end(reply.exit, tail));
        r.exit_code = reply.exit.exit_code;
        r.signal = reply.exit.signal;
        return r;
    }
    try {
        if (reply.message.value("op", "") != "result")
            return record_for(job, RowStatus::failed, "worker error: " + reply.message.value("message", reply.message.dump()));
        Record r = reply.message.at("record").get<Record>();
        if (r.job_id != job.id) return record_for(job, RowStatus::failed, "worker answered for another job");
        if (r.status == RowStatus::crashed) {  // fatal inside the worker: it exits after replying
            worker_->process.stop();
            worker_.reset();
        }
        return r;
    } catch (const std::exception& e) {
        worker_.reset();
        return record_for(job, RowStatus::failed, std::string("worker sent a malformed record: ") + e.what());
    }
}

void Executor::run(const std::vector<Job>& jobs, const std::function<void(const Record&)>& on_record) {
    for (const Job& job : jobs) on_record(run_job(job));
    finish();
}

void Executor::finish() {
    if (worker_) {
        worker_->process.stop();
        worker_.reset();
    }
}

}  // namespace kreg
