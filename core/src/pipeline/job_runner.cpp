#include "pipeline/job_runner.hpp"

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

kreg_gemm_args gemm_args(const Shape& shape, kreg_dtype dtype) {
    kreg_gemm_args args{};
    args.struct_size = sizeof(kreg_gemm_args);
    args.m = shape.m;
    args.n = shape.n;
    args.k = shape.k;
    args.lda = shape.k;
    args.ldb = shape.n;
    args.ldc = shape.n;
    args.alpha = 1.0;
    args.beta = 0.0;
    args.dtype = dtype;
    return args;
}

std::string call_run_gemm(const kreg_kernel_info& info, void* instance, const kreg_gemm_args& args) {
    char error[1024];
    error[0] = '\0';
    const kreg_status status = info.run_gemm(instance, &args, error, sizeof error);
    if (status == KREG_STATUS_OK) return "";
    error[sizeof error - 1] = '\0';
    return std::string("kernel returned ") + status_name(status) + ": " + (error[0] != '\0' ? error : "(no message)");
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
