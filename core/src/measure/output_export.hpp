// Grading's trusted re-check: a strict worker writes the output of every call it makes (the copy of C
// taken when the call returned) to a folder the grader names, and does not compute a reference itself;
// the grader, outside the submission's process, regenerates that call's inputs from the job and checks
// each output. The expected result never exists in the process that ran the submission.
#pragma once

#include "common/job.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kreg {

// Writes count floats as <dir>/call-<n>.f32 (raw, native byte order). Throws std::runtime_error.
void export_call_output(const std::string& dir, uint64_t call_number, const float* c, size_t count);

struct TrustedCheck {
    bool passed = false;
    int calls_checked = 0;
    double max_rel_err = 0;
    std::string reason;  // why not, naming the call
};

// Checks every exported output of job (fp32, strict inputs) against an fp64 reference computed here.
// expected_calls: how many calls the worker made; dir must hold exactly that many files, call-0 to
// call-<expected_calls - 1>, each exactly M*N floats.
TrustedCheck check_exported_outputs(const Job& job, const std::string& dir, int expected_calls);

// --- Checked outside, call by call (worker/job_runner.hpp's CallChannel) ---------------------------
// The inputs of one call of a job with settings.checked_outside, drawn from the seed the checker issued
// for that call: the worker and the checker draw them alike. a: M x K, b: K x N, row-major fp32.
void fill_call_inputs(const Job& job, uint64_t call_seed, float* a, float* b);

// One call's output as the checker holds it (its own sealed copy, mapped read-only).
struct CallOutput {
    uint64_t call = 0;
    uint64_t seed = 0;
    const float* c = nullptr;
    size_t count = 0;
};

// Checks every call's output against an fp64 reference of the inputs drawn from its seed. outputs must
// hold calls 0 .. expected_calls-1, in order, each of exactly M*N floats; else the check fails, naming
// the call.
TrustedCheck check_call_outputs(const Job& job, const std::vector<CallOutput>& outputs, int expected_calls);

}  // namespace kreg
