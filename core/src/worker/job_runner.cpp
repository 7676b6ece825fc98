#include "worker/job_runner.hpp"

#include "plugin/loader.hpp"

namespace kreg {

const char* status_name(kreg_status status) {
    switch (status) {
        case KREG_STATUS_OK: return "OK";
        case KREG_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
        case KREG_STATUS_UNSUPPORTED: return "UNSUPPORTED";
        case KREG_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
        case KREG_STATUS_RUNTIME_ERROR: return "RUNTIME_ERROR";
        case KREG_STATUS_INTERNAL_ERROR: return "INTERNAL_ERROR";
    }
    return "UNKNOWN_STATUS";
}

JobStart start_job(const Job& job, const LoadedKernel& kernel, Backend backend, const char* timer) {
    JobStart start{record_for(job, RowStatus::failed, ""), false};
    Record& record = start.record;
    record.backend = backend;
    record.plugin = kernel.plugin_name;
    if (!kernel.plugin_path.empty()) record.plugin_path = kernel.plugin_path;
    record.timer = timer;

    const kreg_kernel_info* info = kernel.info;
    if (info == nullptr || info->run_gemm == nullptr) {
        record.reason = "internal: the kernel is not loaded";
        return start;
    }
    if (info->name != nullptr) record.kernel = info->name;
    if (info->backend != static_cast<kreg_backend>(backend)) {
        record.reason = "internal: " + record.kernel + " is not a " + (backend == Backend::cpu ? "CPU" : "CUDA") + " kernel";
        return start;
    }
    const Shape& shape = job.shape;
    if (shape.m < 1 || shape.n < 1 || shape.k < 1) {
        record.reason = "invalid shape " + to_string(shape) + ": every dimension must be >= 1";
        return start;
    }
    if (auto why = why_unsupported(to_kernel_meta(*info), shape, job.dtype)) {
        record.status = RowStatus::skipped;
        record.reason = *why;
        return start;
    }
    start.usable = true;
    return start;
}

}  // namespace kreg
