#include "pipeline/job_runner.hpp"

#include "ops/operation.hpp"
#include "plugin/loader.hpp"

namespace kreg {

const char* status_name(kreg_status status) { return kreg_status_name(status); }

JobStart start_job(const Job& job, const LoadedKernel& kernel, Backend backend, const char* timer) {
    JobStart start{record_for(job, RowStatus::failed, ""), false};
    Record& record = start.record;
    record.backend = backend;
    record.plugin = kernel.plugin_name;
    if (!kernel.plugin_path.empty()) record.plugin_path = kernel.plugin_path;
    record.timer = timer;

    const kreg_kernel_info* info = kernel.info;
    if (info == nullptr) {
        record.reason = "internal: the kernel is not loaded";
        return start;
    }
    if (info->name != nullptr) record.kernel = info->name;
    if (info->backend != static_cast<kreg_backend>(backend)) {
        record.reason =
            "internal: " + record.kernel + " is not a " + (backend == Backend::cpu ? "CPU" : "CUDA") + " kernel";
        return start;
    }
    const Shape& shape = job.shape;
    if (info->operation != static_cast<kreg_operation>(job.operation)) {
        record.reason = "internal: " + record.kernel + " is not a " + std::string(to_string(job.operation)) + " kernel";
        return start;
    }
    if (std::string why = operation_def(job.operation).invalid_shape(shape); !why.empty()) {
        record.reason = why;
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
