#include "worker/session.hpp"

#include "common/gpu_info.hpp"
#include "common/sha256.hpp"
#include "platform/host.hpp"
#include "pipeline/call_watchdog.hpp"
#include "worker/allocation_watch.hpp"

#ifdef KREG_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda/calibrate.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#endif

#include <algorithm>
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

namespace {
std::string mib_text(uint64_t bytes) {
    char text[64];
    std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
    return text;
}

// A failed row that followed a request RLIMIT_DATA refused (worker/allocation_watch.hpp): the cap reached, as
// the worker's allocator saw it, whatever way the kernel asked (malloc, new, a vector's growth, ...). Only
// under a finite RLIMIT_DATA: where a cgroup caps memory the worker has none, and memory.events decides.
void note_memory_refused(Record& record) {
    const AllocationRefusals refused = allocation_refusals();
    const uint64_t data_limit = platform::data_limit_bytes();
    if (record.status != RowStatus::failed || refused.count == 0 || data_limit == 0) return;
    record.end_cause = EndCause::memory_refused;
    record.reason = "memory limit reached: RLIMIT_DATA (" + mib_text(data_limit) + ") refused " +
                    std::to_string(refused.count) + " allocation" + (refused.count == 1 ? "" : "s") + ", the largest " +
                    mib_text(refused.largest) + "; " + record.reason;
}
}  // namespace

// Makes device current for what the plugin does next (abi.h's contract: create(), every run and
// destroy() of a CUDA kernel happen with the job's device current). A failure is left for the job's
// own cudaSetDevice to report with its context.
static void make_current(const kreg_kernel_info& info, int device) {
#ifdef KREG_HAVE_CUDA
    if (info.backend == KREG_BACKEND_CUDA && cudaSetDevice(device) != cudaSuccess) (void)cudaGetLastError();
#else
    (void)info;
    (void)device;
#endif
}

WorkerSession::WorkerSession(SandboxPolicy policy, SandboxReport report)
    : sandbox_policy_(std::move(policy)), sandbox_report_(std::move(report)) {}

WorkerSession::~WorkerSession() { destroy_instances(); }

void WorkerSession::harden_after_plugin_load(int device) {
    if (!sandbox_policy_ || hardened_after_load_ || !plugin_) return;
#ifdef KREG_HAVE_CUDA
    // The CUDA runtime may start helper threads and open device files when its context is created:
    // do that before fork/exec are forbidden, and only for plugins that need it.
    bool uses_cuda = false;
    for (const auto& k : plugin_->kernels()) uses_cuda = uses_cuda || k.backend == KREG_BACKEND_CUDA;
    if (uses_cuda) warm_up_cuda_context(device);
#else
    (void)device;
#endif
    harden_after_load(*sandbox_policy_, sandbox_report_);
    hardened_after_load_ = true;
}

void WorkerSession::destroy_instances() {
    if (plugin_)
        for (auto& [key, instance] : instances_)
            if (const auto* info = plugin_->find_kernel(key.first)) {
                make_current(*info, key.second);
                info->destroy(instance);
            }
    instances_.clear();
}

std::string unavailable_reason(const KernelMeta& kernel, int device) {
    // What the loader found this runner cannot run at all (an unknown operation or dtype) comes first.
    if (!kernel.unavailable_reason.empty()) return kernel.unavailable_reason;
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

void* WorkerSession::instance_for(const kreg_kernel_info& info, int device) {
    const auto key = std::make_pair(std::string(info.name), device);
    auto it = instances_.find(key);
    if (it != instances_.end()) return it->second;
    // Created with the job's device current, so what create() allocates (a cuBLAS handle, a stream,
    // device memory) lives on the device the kernel then runs on.
    make_current(info, device);
    void* instance = nullptr;
    char message[1024] = {};
    const kreg_status status = info.create(&instance, message, sizeof message);
    message[sizeof message - 1] = '\0';
    if (status != KREG_STATUS_OK || instance == nullptr)
        throw std::runtime_error(std::string("creation failed: ") +
                                 (message[0] ? message : "create returned status " + std::to_string(int(status))));
    instances_[key] = instance;
    return instance;
}

nlohmann::json WorkerSession::run(const Job& job) {
    Record record = record_for(job, RowStatus::failed, "");
    reset_allocation_refusals();
    try {
        const LoadedPlugin& plugin = plugin_for(job.plugin_path);
        harden_after_plugin_load(job.settings.device);
        record.plugin = plugin.descriptor().plugin_name;
        const kreg_kernel_info* info = plugin.find_kernel(job.kernel);
        if (info == nullptr)
            throw std::runtime_error("plugin " + job.plugin_path + " has no kernel '" + job.kernel + "'");
        record.backend = static_cast<Backend>(info->backend);
        const KernelMeta meta = to_kernel_meta(*info);
        if (!meta.unavailable_reason.empty()) {  // an operation or dtype this runner does not know
            record.status = RowStatus::skipped;
            record.reason = meta.unavailable_reason;
        } else if (auto why = why_unsupported(meta, job.shape, job.dtype)) {
            record.status = RowStatus::skipped;
            record.reason = *why;
        } else if (auto reason = unavailable_reason(meta, job.settings.device); !reason.empty()) {
            record.status = RowStatus::skipped;
            record.reason = reason;
        } else {
            LoadedKernel kernel{info, instance_for(*info, job.settings.device), plugin.descriptor().plugin_name,
                                job.plugin_path};
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
            if (record.status == RowStatus::failed) record.end_cause = EndCause::kernel_failed;
        }
    } catch (const WorkerFatal& e) {
        record.status = RowStatus::crashed;
        record.reason = e.what();
        record.end_cause = e.cuda_error ? EndCause::cuda_error : EndCause::kernel_failed;
        finished_ = true;
    } catch (const std::exception& e) {
        record.status = RowStatus::failed;
        record.reason = e.what();
        record.end_cause = EndCause::kernel_failed;
    }
    note_memory_refused(record);
    return {{"op", "result"}, {"record", record}};
}

const std::vector<std::string>& result_claim_keys() {
    static const std::vector<std::string> keys = {"job_id",    "kernel", "plugin", "backend",    "dtype", "operation",
                                                  "m",         "n",      "k",      "block",      "seed",  "status",
                                                  "reason",    "timer",  "extra",  "samples_ms", "stats", "max_rel_err",
                                                  "tolerance", "gflops", "gbps",   "end_cause"};
    return keys;
}

nlohmann::json wire_reply(nlohmann::json reply) {
    const auto record = reply.find("record");
    if (reply.value("op", "") != "result" || record == reply.end() || !record->is_object()) return reply;
    nlohmann::json claim = nlohmann::json::object();
    for (const std::string& key : result_claim_keys())
        if (const auto it = record->find(key); it != record->end()) claim[key] = *it;
    reply.erase("record");
    reply["claim"] = std::move(claim);
    return reply;
}

#ifdef KREG_HAVE_CUDA
// The cuBLAS plugin's kernel of each dtype a GEMM ceiling is measured for (plugins/cublas).
constexpr std::pair<DType, const char*> kCeilingKernelNames[] = {
    {DType::fp32, "cublas_sgemm"}, {DType::tf32, "cublas_tf32"}, {DType::bf16, "cublas_bf16"}};

nlohmann::json WorkerSession::calibrate(int device, const std::string& ceiling_plugin) {
    // Loaded like any job's plugin, and the worker hardened after loading it the same way, before any of
    // its code runs.
    const LoadedPlugin& plugin = plugin_for(ceiling_plugin);
    harden_after_plugin_load(device);
    KREG_RUNNER_CUDA_CHECK(cudaSetDevice(device));  // instances (cuBLAS handles) are made on this device
    CeilingKernels gemm;
    for (const auto& [dtype, name] : kCeilingKernelNames) {
        const kreg_kernel_info* info = plugin.find_kernel(name);
        if (info == nullptr) {
            gemm.unavailable[dtype] = ceiling_plugin + " has no kernel '" + name + "'";
            continue;
        }
        const KernelMeta meta = to_kernel_meta(*info);
        if (std::find(meta.dtypes.begin(), meta.dtypes.end(), dtype) == meta.dtypes.end()) {
            gemm.unavailable[dtype] = std::string(name) + " does not declare dtype " + std::string(to_string(dtype));
            continue;
        }
        if (std::string why = unavailable_reason(meta, device); !why.empty()) {
            gemm.unavailable[dtype] = std::string(name) + ": " + why;
            continue;
        }
        try {
            gemm.kernels[dtype] = {info, instance_for(*info, device)};
        } catch (const std::exception& e) {
            gemm.unavailable[dtype] = std::string(name) + ": " + e.what();
        }
    }
    nlohmann::json ceilings = calibrate_ceilings(device, gemm);
    ceilings["plugin"] = {{"name", plugin.descriptor().plugin_name}, {"version", plugin.descriptor().plugin_version}};
    return ceilings;
}
#endif

nlohmann::json WorkerSession::device(int device, const std::string& ceiling_plugin) {
#ifdef KREG_HAVE_CUDA
    nlohmann::json reply;
    try {
        if (auto why = why_cannot_run(device, 0)) return {{"op", "device"}, {"error", *why}};
        reply = {{"op", "device"},
                 {"facts", describe_device(device)},
                 {"device_count", cuda_device_count()},
                 {"ceilings", nullptr}};
    } catch (const std::exception& e) {
        return {{"op", "device"}, {"error", e.what()}};
    }
    if (ceiling_plugin.empty()) return reply;
    try {
        reply["ceilings"] = calibrate(device, ceiling_plugin);
    } catch (const CudaError& e) {
        reply[kCeilingsUnavailableKey] = std::string("calibration failed: ") + e.what();
        if (e.sticky()) finished_ = true;  // the context is gone: this worker serves nothing more
    } catch (const std::exception& e) {    // PluginLoadError, a kernel's error status
        reply[kCeilingsUnavailableKey] = std::string("calibration failed: ") + e.what();
    }
    return reply;
#else
    (void)device;
    (void)ceiling_plugin;
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
                harden_after_plugin_load(request.value("device", 0));
                return {{"op", "loaded"}, {"sandbox", sandbox_report_.to_json()}};
            } catch (const PluginLoadError& e) {
                return {{"op", "load_failed"}, {"error", e.what()}};
            }
        }
        if (op == "device") return device(request.value("device", 0), request.value("ceiling_plugin", std::string()));
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
