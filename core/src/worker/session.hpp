// The worker side of the protocol: one request in, one reply out, as JSON objects. The same session
// serves a worker process (over pipes) and --isolation none (called directly by the runner).
//
// Every request carries an "id" (the parent's per-worker nonce and a sequence number) and every line the
// worker writes for it carries the same id; the hello carries "<nonce>:0".
// Requests (field "op"):
//   {"op":"describe","plugin":PATH,"device":N} -> {"op":"described","plugin":PluginInfo}
//   {"op":"load","plugin":PATH,"device":N}     -> {"op":"loaded","sandbox":{...}} or {"op":"load_failed","error":"..."}
//       (device: whose CUDA context a hardened worker creates before it forbids fork/exec; default 0)
//   {"op":"run","job":Job}                     -> {"op":"result","claim":{...}} over the channel (wire_reply): the
//       worker's row less what only the parent may say (result_claim_keys); handle() itself returns
//       {"op":"result","record":Record}, the row, for --isolation none
//       with job.settings.checked_outside, before it, for every call n = 0, 1, ...:
//       {"op":"next_call","call":n} <- {"op":"call_seed","call":n,"seed":S}, the call, then
//       {"op":"output","call":n,"count":C,"measured_ms":T|null[,"call_cpu_ms":U]} with C's sealed memfd attached
//       (U: the worker's CPU time from right before the call to right after it) <- {"op":"output_held","call":n},
//       which the worker waits for before it does anything else
//   {"op":"device","device":N[,"ceiling_plugin":PATH]}
//                                              -> {"op":"device","facts":{...},"ceilings":{...}|null
//                                                  [,"ceilings_unavailable":"..."]} or {"op":"device","error":"..."}
//       with ceiling_plugin (the trusted cuBLAS plugin the parent chose: plugin/discovery.hpp), the worker
//       loads it as it loads any plugin (the same sandbox steps after loading) and measures the ceilings
//       with its kernels (cuda/calibrate.hpp); a ceiling plugin that cannot be loaded or run leaves
//       ceilings null and says why in ceilings_unavailable, the facts still come back.
//   {"op":"exit"}                              -> {"op":"bye"}
// Any malformed request -> {"op":"error","message":"..."}. The protocol is versioned by
// kWorkerProtocolVersion, sent in the worker's first line {"op":"hello","protocol":V,"pid":P}.
#pragma once

#include "plugin/loader.hpp"
#include "sandbox/sandbox.hpp"
#include "pipeline/job_runner.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <utility>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// 4: the parent acknowledges each output (output_held); 5: a result carries a claim, not the worker's row.
inline constexpr int kWorkerProtocolVersion = 5;

// The keys a result's claim may carry: a row's (common/job.hpp) but plugin_path, exit_code and signal, which say
// where the plugin was and how the worker ended, and are the parent's to say (sweep/result_claim.hpp reads them).
const std::vector<std::string>& result_claim_keys();

// A reply as the worker's channel carries it: a result's row becomes its claim (result_claim_keys' keys of it);
// any other reply is sent as it is.
nlohmann::json wire_reply(nlohmann::json reply);

class WorkerSession {
public:
    WorkerSession() = default;
    // A hardened session: the worker already applied harden_before_load (report says what took); the
    // session applies harden_after_load once its plugin is loaded (and, for CUDA plugins, the CUDA
    // context exists), before any plugin code runs a job.
    WorkerSession(SandboxPolicy policy, SandboxReport report);
    WorkerSession(const WorkerSession&) = delete;
    WorkerSession& operator=(const WorkerSession&) = delete;
    ~WorkerSession();

    nlohmann::json handle(const nlohmann::json& request);
    // The channel to the checker for the request being handled (null: none; a job that needs one fails).
    void set_call_channel(CallChannel* channel) { call_channel_ = channel; }
    // True once the worker must stop: after "exit", or after a fatal error (sticky CUDA error).
    bool finished() const { return finished_; }

private:
    nlohmann::json describe(const std::string& path, int device);
    nlohmann::json run(const Job& job);
    nlohmann::json device(int device, const std::string& ceiling_plugin);
    nlohmann::json calibrate(int device, const std::string& ceiling_plugin);
    const LoadedPlugin& plugin_for(const std::string& path);
    // The kernel's instance for device, created on first use with that device current.
    void* instance_for(const kreg_kernel_info& info, int device);
    void destroy_instances();
    // device: the one whose CUDA context is created before fork/exec are forbidden.
    void harden_after_plugin_load(int device);

    // Declared first: destroyed after every instance made from it.
    std::optional<LoadedPlugin> plugin_;
    // (kernel name, device) -> instance; destroyed in ~WorkerSession with its device current.
    std::map<std::pair<std::string, int>, void*> instances_;
    bool finished_ = false;
    std::optional<SandboxPolicy> sandbox_policy_;
    SandboxReport sandbox_report_;
    bool hardened_after_load_ = false;
    CallChannel* call_channel_ = nullptr;
};

// Availability of a kernel on this machine ("" when it can run), as seen from inside a worker.
std::string unavailable_reason(const KernelMeta& kernel, int device);

// The worker process's main loop: reads requests from request_fd, writes replies to reply_fd, one JSON
// object per line. Returns the process exit code.
// With a sandbox policy, the worker hardens itself before anything else (see sandbox/sandbox.hpp) and
// reports what applied in its hello line: {"op":"hello",...,"sandbox":{"applied":[...],"unavailable":[...]}}.
int run_worker(int request_fd, int reply_fd, const std::string& nonce,
               const std::optional<SandboxPolicy>& sandbox = std::nullopt);

}  // namespace kreg
