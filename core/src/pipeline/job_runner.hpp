// What a worker does with one job once its kernel is loaded and created. One function per backend;
// the worker picks by the kernel's declared backend.
#pragma once

#include "common/job.hpp"
#include "ops/gemm.hpp"

#include <kreg/abi.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace kreg {

// A created kernel instance inside a worker. Owned by the worker's plugin session.
struct LoadedKernel {
    const kreg_kernel_info* info = nullptr;
    void* instance = nullptr;
    std::string plugin_name;
    std::string plugin_path;
};

// Thrown by a job runner when the worker must not run anything else: a sticky CUDA error, a corrupted
// context. The worker reports the job as `crashed` with what() as the reason, then exits.
class WorkerFatal : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    // A sticky CUDA error (the cause the row carries, EndCause::cuda_error), known where it is detected.
    static WorkerFatal cuda(const std::string& what) {
        WorkerFatal fatal(what);
        fatal.cuda_error = true;
        return fatal;
    }
    bool cuda_error = false;
};

// Grading's line to the checker outside the worker (the parent, through the worker session). For a job
// with settings.checked_outside, the runner asks for each call's input seed right before that call (the
// checker draws it only then, so no call's inputs can be known earlier), and hands each call's output
// over right after the call, before it does anything else (the checker's copy is sealed: nothing the
// plugin does later can change it). The runner then computes no reference itself.
class CallChannel {
public:
    virtual ~CallChannel() = default;
    // The seed of call `call` (0: the checked call, then the warm-ups, then the timed calls), from
    // which fill_call_inputs (ops/output_export.hpp) draws that call's A and B. Blocks.
    virtual uint64_t seed_for_call(uint64_t call) = 0;
    // C of call `call` (count floats, row-major M x N) and, for a timed call, the time the runner
    // measured for it. Throws WorkerFatal when the checker cannot be reached.
    virtual void hand_over(uint64_t call, const float* c, size_t count, std::optional<double> measured_ms) = 0;
    // Right before the call (its inputs are in place) and right after it returned: the worker's CPU time between
    // the two goes with the output, so that the grader can tell the harness's CPU work in a trusted kernel's
    // window from the kernel's (grade/timing_claims.hpp). A submission's own figure is never used.
    virtual void call_starts() {}
    virtual void call_returned() {}
};

// "RUNTIME_ERROR" for KREG_STATUS_RUNTIME_ERROR, and so on.
const char* status_name(kreg_status status);

// The row every job runner starts from (names, backend, timer) after the checks all runners share: the
// kernel is loaded, of this backend, the shape is valid, and the kernel declares this dtype and shape
// (else the row is skipped with the reason). When a check fails, `record` already holds the row's
// verdict and `usable` is false.
struct JobStart {
    Record record;
    bool usable = false;
};
JobStart start_job(const Job& job, const LoadedKernel& kernel, Backend backend, const char* timer);

// Runs job on a CPU kernel: fresh seeded inputs, NaN-poisoned output, one checked call, verification
// against the fp64 reference, then warm-up and timed calls with the host timer. Returns a complete
// Record with status ok, wrong_result or failed (kernel error status, with its message).
// settings.checked_outside runs the strict loop with every call's seed and output going through
// channel (which must then be given: without one the row fails, "checked_outside needs a channel");
// the channel's WorkerFatal propagates. Strict runs place C against inaccessible guard pages, so a
// write past either end of C kills the worker with SIGSEGV (measure/guard_pages.hpp says how).
Record run_cpu_gemm_job(const Job& job, const LoadedKernel& kernel, CallChannel* channel = nullptr);

#ifdef KREG_HAVE_CUDA
// The same on a CUDA kernel, on the job's device: device buffers, a harness-owned stream, CUDA event
// timing with L2 flushed before every timed launch unless settings.warm_cache. Throws WorkerFatal on
// a sticky CUDA error. channel: as for run_cpu_gemm_job.
Record run_cuda_gemm_job(const Job& job, const LoadedKernel& kernel, CallChannel* channel = nullptr);
#endif

}  // namespace kreg
