// The backend interface of the measurement pipeline (pipeline/pipeline.hpp): what differs between
// running a kernel on the host and on a CUDA device, and nothing else. The protocol — which call gets
// which inputs, what is poisoned, checked, timed and in which order — lives in the pipeline only.
//
// Operands come in `sets` (one for an ordinary run, kStrictBufferSets for strict runs, which rotate
// through them so that consecutive calls never share a pointer). Every method may throw KernelFailed
// (this row fails) or WorkerFatal (the worker must end); a backend may throw its own errors too, which
// its job entry point (run_cpu_gemm_job, run_cuda_gemm_job) turns into the row's end.
#pragma once

#include <kreg/abi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "common/job.hpp"
#include "measure/anticheat.hpp"
#include "measure/sampler.hpp"
#include "ops/operation.hpp"
#include "verify/output_fill.hpp"

namespace kreg {

// A failure of this row only (kernel status, a non-sticky CUDA error), carried out of the sampling loop.
struct KernelFailed {
    std::string message;
};

// What a cheap look at a call's C found (MeasureBackend::scan_output).
struct OutputScan {
    size_t unwritten = 0;              // elements that still hold what C was filled with (still_holds_fill)
    size_t first_unwritten = 0;        // the lowest such index, when unwritten > 0
    size_t non_finite = 0;             // other NaN or Inf elements
    size_t first_non_finite = 0;       // the lowest such index, when non_finite > 0
    float first_non_finite_value = 0;  // its value, bits and all (verify_gemm.hpp's describe_non_finite)
    std::vector<float> samples;        // C at the indices asked for, in that order
};

class MeasureBackend {
public:
    virtual ~MeasureBackend() = default;

    // Makes `sets` operand sets for the job, sized by its operation's geometry (GEMM: A m x k and B k x n
    // of job.dtype, C m x n fp32; an operation without B gets none).
    // guarded: C lies between guard bands (and, on the host, guard pages), checked by guard_damage.
    virtual void allocate(const Job& job, int sets, bool guarded) = 0;
    // Writes host fp32 values into the set's A and B as the kernel gets them. 16-bit dtypes are rounded
    // in place in a and b, so the reference sees what the kernel sees.
    virtual void fill_inputs(int set, std::vector<float>& a, std::vector<float>& b) = 0;
    // Fills the set's C with this call's fill (verify/output_fill.hpp), or, for an in-place operation,
    // with a copy of the set's A; guarded: rewrites what a band needs rewriting. Returns the fill as
    // written (a device without cuMemsetD32Async writes all-ones NaN instead of fill.nan_word).
    virtual OutputFill poison_output(int set, const OutputFill& fill) = 0;
    // Evicts the operands from the caches the kernel would find them in (the GPU's L2); may be a no-op.
    virtual void flush_caches() = 0;
    // Waits for the work queued so far (device_wide: on every stream of the device too); faults of the
    // kernel surface here. `when` names the moment in errors.
    virtual void synchronize(const std::string& when, bool device_wide) = 0;
    // Copies the set's C into c (m * n floats). Call after synchronize.
    virtual void copy_output(int set, float* c) = 0;
    // "" when the set's A and B still hold what fill_inputs wrote, else describe_input_change's text.
    virtual std::string inputs_changed(int set) = 0;
    // "" when the set's guard bands are intact (or there are none), else describe_guard_damage's text.
    virtual std::string guard_damage(int set) = 0;
    // Counts the elements of the set's C that still hold `fill` (still_holds_fill) and the other
    // non-finite ones, and reads C at sample_at (flat indices), without copying all of C anywhere. Call
    // after synchronize.
    virtual OutputScan scan_output(int set, const OutputFill& fill, const std::vector<size_t>& sample_at) = 0;
    // The operands of a call on the set: its pointers (and the harness's stream).
    virtual CallOperands operands(int set) = 0;
    // One call of the kernel's run entry for the job's operation (ops/operation.hpp); throws
    // KernelFailed with the kernel's message (or WorkerFatal).
    virtual void call(const CallOperands& operands) = 0;
    // The timer of timed calls. Strict runs ask for one that also waits for the whole device and reads
    // the host clock around that wait (measure/anticheat.hpp's TimingCrossCheck).
    virtual Timer& timer(bool strict) = 0;

    // Whether the first job of this process should wait for the clocks (measure/sampler.hpp's
    // ClockSettle): a GPU ramps its clocks up under load; the host is left as it is.
    virtual bool wants_clock_settle() const { return false; }
    // Once, after the checked call and before the first warm-up (CUDA: L2 lines the checked call set
    // aside as persisting are released, so they cannot make the timed calls' inputs look cached).
    virtual void before_sampling() {}
    // Backend facts for the record (launch geometry, kernel attributes), once the operands exist.
    virtual void describe(Record& /*record*/, const CallOperands& /*operands*/) {}
    // Strict runs: before the first call and after the last (also when the run ends early; the CPU
    // explains faults in its guard pages meanwhile, and waits for threads a kernel left running)...
    virtual void start_strict(StrictEvidence& /*evidence*/) {}
    virtual void end_strict() {}
    // ...around every call (the CPU counts the threads a call leaves running), after each timed
    // call with its sample (the CUDA timer's wall clock), and at the end (a timing cross-check that fails
    // the row: its reason, else "").
    virtual void before_call() {}
    virtual void after_call(StrictEvidence& /*evidence*/) {}
    virtual void after_timed_call(double /*ms*/, StrictEvidence& /*evidence*/) {}
    virtual std::string timing_violation(const StrictEvidence& /*evidence*/) { return ""; }
    // Facts of the timing method for the record, after the last timed call (launch overhead).
    virtual void timing_facts(Record& /*record*/) {}
};

}  // namespace kreg
