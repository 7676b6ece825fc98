// Grading's trusted re-check: the worker hands the output of every call it makes (the copy of C taken
// when the call returned) to a checker outside the submission's process and computes no reference
// itself; the checker regenerates that call's inputs and checks each output. The expected result never
// exists in the process that ran the submission.
// Every call's inputs come from a seed the checker issues right before that call (fill_call_inputs),
// and its output is checked by check_call_outputs. Both follow the job's operation (ops/operation.hpp):
// GEMM within a tolerance, transposes bit for bit, every element.
#pragma once

#include "common/job.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kreg {

struct TrustedCheck {
    bool passed = false;
    int calls_checked = 0;
    double max_rel_err = 0;
    std::string reason;  // why not, naming the call
};

// --- Checked outside, call by call (pipeline/job_runner.hpp's CallChannel) ---------------------------
// The inputs of one call of a job with settings.checked_outside, drawn from the seed the checker issued
// for that call: the worker and the checker draw them alike. a and b are sized by the operation's
// geometry (GEMM: a M x K, b K x N; transposes: a M x N, no b), row-major fp32, uniform in [-1, 1):
// fill_uniform streams 0 (A) and 1 (B) of call_seed. An exact operation then plants its special values
// in A (plant_special_values with call_seed: NaN payloads, a signalling NaN, +-Inf, -0, a subnormal), so
// that grading tests "bit for bit" as a plain run does. For bf16/fp16 jobs the runner rounds these
// values to the dtype before upload, and check_call_outputs rounds them the same way.
void fill_call_inputs(const Job& job, uint64_t call_seed, float* a, float* b);

// One call's output as the checker holds it (its own sealed copy, mapped read-only).
struct CallOutput {
    uint64_t call = 0;
    uint64_t seed = 0;
    const float* c = nullptr;
    size_t count = 0;
};

// Checks every call's output against the operation's reference of the inputs drawn from its seed (GEMM:
// verify_gemm in fp64, tolerance settings.tolerance or the dtype's default; transposes: every element
// bit for bit, an unwritten one named as such). outputs must hold calls 0 .. expected_calls-1,
// in order, each of exactly M*N floats; else the check fails, naming the call as the worker's rows do
// ("first call", "warm-up call 2", "timed call 4"): "... its output is missing", "... handed over
// twice", "... handed over out of order", "... has 10 floats, expected 12", or the reference's reason.
// Where verify_gemm samples (large shapes), its rows and projection are drawn from entropy of this
// process, so a kernel that knows the call seeds still cannot tell which elements are looked at.
TrustedCheck check_call_outputs(const Job& job, const std::vector<CallOutput>& outputs, int expected_calls);

}  // namespace kreg
