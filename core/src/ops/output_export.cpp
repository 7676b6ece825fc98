#include "ops/output_export.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <vector>

#include "measure/sampler.hpp"
#include "ops/operation.hpp"
#include "verify/output_fill.hpp"
#include "verify/random_fill.hpp"
#include "verify/tolerance.hpp"
#include "verify/verify_gemm.hpp"

namespace kreg {
namespace {

// Call `call` of a job as its rows name it: 0 is the checked call, then the warm-ups, then timed calls.
std::string call_label(const Job& job, uint64_t call) {
    const uint64_t warmup = uint64_t(std::max(0, job.settings.warmup));
    const CallSite site = call == 0        ? CallSite{CallSite::Role::checked, 0}
                          : call <= warmup ? CallSite{CallSite::Role::warmup, int(call - 1)}
                                           : CallSite{CallSite::Role::timed, int(call - 1 - warmup)};
    return site.label();
}

// Rounds fill_call_inputs' values (finite, |v| < 1) to what a bf16/fp16 kernel is given, round to
// nearest even like the CUDA host conversions the runner uploads with (cuda/host_convert.hpp, which
// exists only in CUDA builds; the checker must not need the toolkit).
void round_to_dtype(float* values, size_t count, DType dtype) {
    if (dtype != DType::bf16 && dtype != DType::fp16) return;
    for (size_t i = 0; i < count; ++i) {
        uint32_t bits;
        std::memcpy(&bits, &values[i], sizeof bits);
        if (dtype == DType::bf16) {
            bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;  // keep 7 mantissa bits
        } else if (std::fabs(values[i]) >= 0x1p-14f) {
            bits = (bits + 0xfffu + ((bits >> 13) & 1u)) & ~0x1fffu;  // fp16 normal: keep 10 mantissa bits
        } else {
            // fp16 subnormal: a multiple of 2^-24 (the product is exact; nearbyint rounds to even).
            const float rounded = std::nearbyint(values[i] * 0x1p24f) * 0x1p-24f;
            std::memcpy(&bits, &rounded, sizeof bits);
        }
        std::memcpy(&values[i], &bits, sizeof bits);
    }
}
}  // namespace

void fill_call_inputs(const Job& job, uint64_t call_seed, float* a, float* b) {
    const OperationDef& op = operation_def(job.operation);
    const OperandGeometry g = op.geometry(job.shape);
    fill_uniform(a, g.a_count, call_seed, 0);
    if (g.b_count > 0) fill_uniform(b, g.b_count, call_seed, 1);
    if (op.plants_special_values()) {
        // The special values go through a vector (the interface's); a's caller holds a_count floats.
        std::vector<float> planted(a, a + g.a_count);
        op.plant_special_values(planted, call_seed);
        std::copy(planted.begin(), planted.end(), a);
    }
}

TrustedCheck check_call_outputs(const Job& job, const std::vector<CallOutput>& outputs, int expected_calls) {
    TrustedCheck check;
    const OperationDef& op = operation_def(job.operation);
    const OperandGeometry geometry = op.geometry(job.shape);
    if (const std::string why = op.invalid_shape(job.shape); !why.empty()) {
        check.reason = why;
        return check;
    }
    const size_t c_count = geometry.c_count;
    const uint64_t expected = uint64_t(std::max(0, expected_calls));

    // The sequence first: every call once, in order, nothing else, before any reference is computed.
    std::vector<int> seen(expected, 0);
    for (const CallOutput& out : outputs) {
        if (out.call >= expected) {
            check.reason = "call " + std::to_string(out.call) + " was handed over, but the worker was to make " +
                           std::to_string(expected) + " calls";
            return check;
        }
        if (++seen[out.call] > 1) {
            check.reason = call_label(job, out.call) + ": its output was handed over twice";
            return check;
        }
    }
    for (uint64_t call = 0; call < expected; ++call)
        if (seen[call] == 0) {
            check.reason = call_label(job, call) + ": its output is missing";
            return check;
        }
    for (uint64_t i = 0; i < expected; ++i)
        if (outputs[i].call != i) {
            check.reason = call_label(job, outputs[i].call) + ": its output was handed over out of order";
            return check;
        }

    // Exact operations are compared bit for bit: their tolerance is 0 (as in pipeline/pipeline.cpp).
    const double tolerance =
        op.exact() ? 0.0 : job.settings.tolerance.value_or(op.default_tolerance(job.shape, job.dtype));
    std::vector<float> a(geometry.a_count), b(geometry.b_count);
    std::random_device entropy;  // the sampled check's rows: unknowable to the worker
    bool first_call_finite = false;
    for (const CallOutput& out : outputs) {
        const std::string label = call_label(job, out.call);
        if (out.count != c_count || out.c == nullptr) {
            check.reason = label + ": its output has " + std::to_string(out.c == nullptr ? 0 : out.count) +
                           " floats, expected " + std::to_string(c_count);
            return check;
        }
        // What C held before the call, drawn from the same seed as in the worker (pipeline.cpp): an element
        // that still holds it was never written, whatever the fill was (a finite one is not "fine").
        const uint64_t previous_seed = out.call > 0 ? outputs[size_t(out.call) - 1].seed : 0;
        const OutputFill fill =
            call_output_fill(out.call, checked_fill_seed(out.call, job.seed, previous_seed), first_call_finite);
        if (out.call == 0) first_call_finite = fill.finite;
        if (!geometry.in_place)
            for (size_t i = 0; i < c_count; ++i) {
                uint32_t word;
                std::memcpy(&word, &out.c[i], sizeof word);
                if (!still_holds_fill(fill, i, word)) continue;
                const int64_t cols = geometry.c_cols;
                check.reason = label + ": unwritten element at (" + std::to_string(int64_t(i) / cols) + ", " +
                               std::to_string(int64_t(i) % cols) + "): " + fill_description(fill) +
                               " (never written, or C was read although beta = 0)";
                return check;
            }
        fill_call_inputs(job, out.seed, a.data(), b.data());
        round_to_dtype(a.data(), a.size(), job.dtype);
        round_to_dtype(b.data(), b.size(), job.dtype);
        const uint64_t sample_seed = (uint64_t(entropy()) << 32) ^ entropy() ^ out.seed;
        const VerifyResult v = op.verify(a.data(), b.data(), out.c, job.shape, tolerance, sample_seed);
        ++check.calls_checked;
        if (std::isfinite(v.max_rel_err)) check.max_rel_err = std::max(check.max_rel_err, v.max_rel_err);
        if (!v.passed) {
            check.reason = label + ": " + v.reason;
            return check;
        }
    }
    check.passed = true;
    return check;
}

}  // namespace kreg
