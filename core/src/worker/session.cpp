#include "worker/session.hpp"

#include "common/sha256.hpp"
#include "pipeline/call_watchdog.hpp"

#ifdef KREG_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda/calibrate.hpp"
#include "cuda/device_facts.hpp"
#endif

#include <cstdio>
#include <stdexcept>

namespace kreg {

#ifdef KREG_HAVE_CUDA
namespace {
// Creates the primary context of device (errors are left for the job to report).
void warm_up_cuda_context(int device) {
    if (cudaSetDevice(device) == cudaSuccess) (void)cudaFree(nullptr);
    (void)cudaGetLastError();
}
}  // namespace
#endif

WorkerSession::WorkerSession(SandboxPolicy policy, SandboxReport report)
    : sandbox_policy_(std::move(policy)), sandbox_report_(std::move(report)) {}

WorkerSession::~WorkerSession() { destroy_instances(); }

void WorkerSession::harden_after_plugin_load() {
    if (!sandbox_policy_ || hardened_after_load_ || !plugin_) return;
#ifdef KREG_HAVE_CUDA
    // The CUDA runtime may start helper threads and open device files when its context is created:
    // do that before fork/exec are forbidden, and only for plugins that need it.
    bool uses_cuda = false;
    for (const auto& k : plugin_->kernels()) uses_cuda = uses_cuda || k.backend == KREG_BACKEND_CUDA;
    if (uses_cuda) warm_up_cuda_context(0);
#endif
    harden_after_load(*sandbox_policy_, sandbox_report_);
    hardened_after_load_ = true;
}

void WorkerSession::destroy_instances() {
    if (plugin_)
        for (auto& [name, instance] : instances_)
            if (const auto* info = plugin_->find_kernel(name)) info->destroy(instance);
    instances_.clear();
}

std::string unavailable_reason(const KernelMeta& kernel, int device) {
    if (kernel.backend == Backend::cpu) return "";
#ifdef KREG_HAVE_CUDA
    return why_cannot_run(device, kernel.min_compute_capability).value_or("");
#else
    (void)device;
    return "this runner was built without CUDA support";
#endif
}

nlohmann::json WorkerSession::describe(const std::string& path, int device) {
    PluginInfo info;
    info.path = path;
    try {
        const LoadedPlugin& plugin = plugin_for(path);
        info = plugin.info();
        for (auto& k : info.kernels) k.unavailable_reason = unavailable_reason(k, device);
    } catch (const PluginLoadError& e) {
        info.error = e.what();
    }
    try {
        info.sha256 = sha256_file_hex(path);
    } catch (const std::exception&) {
        // A missing or unreadable file already carries its load error.
    }
    return {{"op", "described"}, {"plugin", info}};
}

const LoadedPlugin& WorkerSession::plugin_for(const std::string& path) {
    if (plugin_ && plugin_->path() == path) return *plugin_;
    destroy_instances();
    plugin_.reset();
    plugin_.emplace(LoadedPlugin::load(path));
    return *plugin_;
}

void* WorkerSession::instance_for(const kreg_kernel_info& info) {
    auto it = instances_.find(info.name);
    if (it != instances_.end()) return it->second;
    void* instance = nullptr;
    char message[1024] = {};
    const kreg_status status = info.create(&instance, message, sizeof message);
    message[sizeof message - 1] = '\0';
    if (status != KREG_STATUS_OK || instance == nullptr)
        throw std::runtime_error(std::string("creation failed: ") +
                                 (message[0] ? message : "create returned status " + std::to_string(int(status))));
    instances_[info.name] = instance;
    return instance;
}

nlohmann::json WorkerSession::run(const Job& job) {
    Record record = record_for(job, RowStatus::failed, "");
    try {
        const LoadedPlugin& plugin = plugin_for(job.plugin_path);
        harden_after_plugin_load();
        record.plugin = plugin.descriptor().plugin_name;
        const kreg_kernel_info* info = plugin.find_kernel(job.kernel);
        if (info == nullptr) throw std::runtime_error("plugin " + job.plugin_path + " has no kernel '" + job.kernel + "'");
        record.backend = static_cast<Backend>(info->backend);
        const KernelMeta meta = to_kernel_meta(*info);
        if (auto why = why_unsupported(meta, job.shape, job.dtype)) {
            record.status = RowStatus::skipped;
            record.reason = *why;
        } else if (auto reason = unavailable_reason(meta, job.settings.device); !reason.empty()) {
            record.status = RowStatus::skipped;
            record.reason = reason;
        } else {
            LoadedKernel kernel{info, instance_for(*info), plugin.descriptor().plugin_name, job.plugin_path};
            if (job.settings.call_timeout_s) start_call_watchdog();
            // The per-call limit is the pipeline's (pipeline/pipeline.hpp); its thread starts here, before
            // a strict run counts the process's threads.
            if (meta.backend == Backend::cpu) {
                record = run_cpu_gemm_job(job, kernel, call_channel_);
            } else {
#ifdef KREG_HAVE_CUDA
                record = run_cuda_gemm_job(job, kernel, call_channel_);
#else
                throw std::runtime_error("this runner was built without CUDA support");
#endif
            }
            record.job_id = job.id;
            record.plugin = kernel.plugin_name;
            record.plugin_path = job.plugin_path;
        }
    } catch (const WorkerFatal& e) {
        record.status = RowStatus::crashed;
        record.reason = e.what();
        finished_ = true;
    } catch (const std::exception& e) {
        record.status = RowStatus::failed;
        record.reason = e.what();
    }
    return {{"op", "result"}, {"record", record}};
}

nlohmann::json WorkerSession::device(int device, bool calibrate) {
#ifdef KREG_HAVE_CUDA
    try {
        if (auto why = why_cannot_run(device, 0)) return {{"op", "device"}, {"error", *why}};
        nlohmann::json reply = {{"op", "device"}, {"facts", describe_device(device)}};
        reply["ceilings"] = calibrate ? calibrate_ceilings(device) : nlohmann::json(nullptr);
        return reply;
    } catch (const std::exception& e) {
        return {{"op", "device"}, {"error", e.what()}};
    }
#else
    (void)device;
    (void)calibrate;
    return {{"op", "device"}, {"error", "this runner was built without CUDA support"}};
#endif
}

nlohmann::json WorkerSession::handle(const nlohmann::json& request) {
    try {
        const std::string op = request.at("op").get<std::string>();
        if (op == "describe") return describe(request.at("plugin").get<std::string>(), request.value("device", 0));
        if (op == "run") return run(request.at("job").get<Job>());
        if (op == "load") {
            try {
                plugin_for(request.at("plugin").get<std::string>());
                harden_after_plugin_load();
                return {{"op", "loaded"}, {"sandbox", sandbox_report_.to_json()}};
            } catch (const PluginLoadError& e) {
                return {{"op", "load_failed"}, {"error", e.what()}};
            }
        }
        if (op == "device") return device(request.value("device", 0), request.value("calibrate", false));
        if (op == "exit") {
            finished_ = true;
            return {{"op", "bye"}};
        }
        return {{"op", "error"}, {"message", "unknown request op '" + op + "'"}};
    } catch (const std::exception& e) {
        return {{"op", "error"}, {"message", std::string("malformed request: ") + e.what()}};
    }
}

}  // namespace kreg
