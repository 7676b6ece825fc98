// The parent's side of running things in workers: it starts workers (re-exec of the runner), hands
// them requests, and turns every way a worker can end into exactly one row status. With
// Isolation::none everything runs in this process instead (for debugging; a crash ends the runner).
#pragma once

#include "common/job.hpp"
#include "plugin/kernel_meta.hpp"
#include "sandbox/sandbox.hpp"
#include "sweep/checked_calls.hpp"
#include "worker/process.hpp"
#include "worker/session.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

enum class Isolation { process, none };

struct ExecutorOptions {
    Isolation isolation = Isolation::process;
    std::string runner_exe;           // the executable started as a worker (`runner __worker`)
    double load_timeout_s = 60.0;     // for starting a worker and loading its plugin
    bool echo_worker_stderr = false;  // copy what workers print to our stderr as it arrives
    // Untrusted plugins: every worker is confined from its first instruction (sandbox/confined_spawn.hpp:
    // its own namespaces and identity, an allow-listed environment, a private scratch folder, a memory
    // cgroup where one can be made) and hardens itself with this policy before loading anything. The
    // plugin is copied into the worker's scratch folder and loaded from there.
    std::optional<SandboxPolicy> sandbox;
    // A lane of runner --devices: every worker gets CUDA_VISIBLE_DEVICES set to this (a GPU's UUID), so
    // it sees that one GPU as device 0. Empty: workers see what the runner sees.
    std::string cuda_visible_devices;
    // >= 0: every worker starts on this one CPU and, when sandboxed, may not widen its affinity
    // (SandboxPolicy::fixed_affinity), so that the CPU time it uses inside a checked call's window bounds
    // the call's elapsed time (worker/cpu_time.hpp; CheckedCall::cpu_ms). The grader sets it for CPU rubrics.
    int timing_cpu = -1;
};

class Executor {
public:
    explicit Executor(ExecutorOptions options);
    ~Executor();

    // Reads a plugin's descriptor in a fresh worker. Never throws: a plugin that cannot be read comes
    // back with PluginInfo::error set (crash and timeout included).
    PluginInfo describe(const std::string& plugin_path, int device);

    // GPU facts and, if asked, measured ceilings, read in a worker: {"facts","ceilings"} or {"error"}.
    // The ceilings are measured with the cuBLAS plugin of the runner's own plugin folder (next to
    // options.runner_exe; never one from KREG_PLUGIN_PATH or --plugin-dir), loaded in the worker as any
    // plugin is (staged into its scratch folder when confined); ceilings carry "plugin": {"name",
    // "version", "path", "sha256"}. Without that plugin, or when calibration fails, ceilings is null and
    // "ceilings_unavailable" says why; the facts come back either way.
    nlohmann::json device_info(int device, bool calibrate, double timeout_s);

    // One job; the worker is kept for the next job of the same plugin until finish().
    Record run_job(const Job& job);
    // One job with settings.checked_outside: the parent issues every call's seed and takes every call's
    // output (sweep/checked_calls.hpp); calls receives them, in order.
    Record run_checked_job(const Job& job, std::vector<CheckedCall>& calls);
    // Stops the current worker, if any.
    void finish();

    // Why the last started worker's checked calls carry no CPU time (CheckedCall::cpu_ms), "" when they do.
    const std::string& cpu_clock_unavailable() const { return cpu_clock_unavailable_; }
    // What the last started worker reported of its sandbox ({"applied","unavailable"}), null if none.
    const nlohmann::json& last_sandbox_report() const { return last_sandbox_; }
    // The most memory any worker this executor ended held (its cgroup's memory.peak, else its peak RSS), in
    // bytes; 0 when none ended or none was measured.
    uint64_t peak_memory_bytes() const { return peak_memory_bytes_; }

private:
    struct Worker;
    // plugin: the plugin a confined worker will load, copied into its scratch folder ("" for none).
    // error says why none started: whatever the cause (no scratch folder, no namespaces, an end or a stray line
    // before the hello), no plugin code had run (EndCause::worker_not_started).
    std::unique_ptr<Worker> start_worker(const std::string& plugin, std::string& error);
    Record run_job_in_worker(const Job& job, std::vector<CheckedCall>* calls);
    std::optional<Record> start_job_worker(const Job& job);
    std::string one_cpu_worker(Worker& w, const std::string& pinned_why_not) const;
    // The row of a job whose exchange did not end in a reply; drops the worker.
    Record row_for_lost_worker(const Job& job, const WorkerProcess::Reply& reply, const std::string& phase);

    ExecutorOptions options_;
    uint64_t peak_memory_bytes_ = 0;  // before worker_: a Worker ending writes it
    std::unique_ptr<Worker> worker_;  // current worker, with the plugin it has loaded
    std::unique_ptr<WorkerSession> in_process_;
    nlohmann::json last_sandbox_ = nullptr;
    std::string cpu_clock_unavailable_ = "no worker started";
};

// "killed by SIGSEGV; last stderr: ..." — one line for a row's reason. The stderr tail is the
// plugin's text: only printable UTF-8 of it is kept.
std::string explain_worker_end(const ExitInfo& exit, const std::string& stderr_tail);

// The cause a worker's end shows the reaper: SIGSYS (seccomp's kill) is a sandbox refusal, any other signal a
// signal, an exit status an exit.
EndCause end_cause_of(const ExitInfo& exit);

// The prefix of the reason of a row whose worker broke the protocol (grade/outcome.cpp reads it).
inline constexpr const char* kProtocolViolationPrefix = "protocol violation: ";

}  // namespace kreg
