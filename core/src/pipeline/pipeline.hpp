// The measurement protocol, written once for every backend (pipeline/backend.hpp):
//
//   1. the checked call: fresh seeded inputs, C filled (in-place operations: C set to A), one call, C
//      verified against the operation's reference (GEMM: fp64, verify_gemm; transposes: bit for bit)
//      before anything is timed — a wrong kernel is not worth timing;
//   2. warm-up calls, then (first job of a CUDA worker) calls until the clocks have settled, then timed
//      calls until the stopping rule says stop (measure/sampler.hpp). Before every call, outside the
//      timed region: C filled again, caches flushed (unless warm_cache), the device idle, the per-call
//      limit armed (settings.call_timeout_s; it ends the worker, pipeline/call_watchdog.hpp);
//   3. after every warm-up and timed call, its C is scanned: no element may still hold the call's fill or
//      be NaN/Inf, and kSampledElements elements drawn at random for that call are compared with the fp64
//      reference — so a kernel that skips every second call, or writes a wrong tile now and then, fails
//      at the call it does so, not only when that call happens to be the last;
//   4. after the last timed call the whole device is waited for and the last C is verified in full.
// C's fill varies per call (verify/output_fill.hpp: a NaN with a drawn payload, or finite values, the
// call after the first finite whenever the first was not), so no result may depend on what C held; after
// the checks of steps 1, 3 and 4, A and B are compared with what was written and the band before C (and
// on the GPU the slack after it) is checked. C, A and B lie between large unmapped regions in every run
// (CPU: guard_pages.hpp; GPU: cuda/fenced_device_buffer.hpp), so a write far past C faults.
// A failure names the call: "first call: ...", "warm-up call 2: ...", "timed call 4: ...",
// "last timed call: ...". settings.verify = false skips steps 1, 3 and 4's checks (never in strict).
//
// Strict mode (settings.strict, grading) is a policy of the same loop, not a second one: every call
// gets fresh inputs (its own stream of the generator, or the CallChannel's seed for that call) in the
// next of kStrictBufferSets operand sets, the timer also waits for the
// whole device, and after every call A and B are compared with what was written, the bands checked,
// and C verified in full (or, with settings.checked_outside, handed to the channel instead). Strict
// runs take a fixed number of calls (no stopping rule, no clock settling) so their evidence counts them.
#pragma once

#include "common/job.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/job_runner.hpp"

namespace kreg {

// Elements of C compared with the reference after every warm-up and timed call (step 3).
inline constexpr int kSampledElements = 16;

// Runs job on kernel through backend, completing record (start_job's, usable) into the row: ok,
// wrong_result or failed. KernelFailed is caught here; WorkerFatal and the backend's own errors
// propagate to the backend's entry point, with record holding what was found until then (a strict
// run's evidence included). channel: the checker's line for settings.checked_outside.
// The protocol is the same for every operation (ops/operation.hpp): its geometry sizes the operands, its
// run entry is called, and its check judges the output (GEMM within the tolerance, transposes bit for bit).
void run_pipeline(const Job& job, const LoadedKernel& kernel, MeasureBackend& backend, Record& record,
                  CallChannel* channel);

}  // namespace kreg
