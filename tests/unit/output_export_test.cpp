// The grader's trusted re-check of the outputs a worker handed over call by call (check_call_outputs).
// Right outputs pass; a changed, missing, duplicated, reordered, NaN or truncated one fails naming the
// call.
#include "measure/anticheat.hpp"
#include "ops/output_export.hpp"
#include "verify/random_fill.hpp"
#include "verify/reference_gemm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kreg {
namespace {
Job export_job() {
    Job job;
    job.id = 3;
    job.seed = 99;
    job.shape = {9, 7, 5};
    job.settings.strict = true;
    job.settings.warmup = 0;
    return job;
}



// ---- check_call_outputs ----------------------------------------------------------------------------

// What an honest worker would hand over for a call whose inputs were drawn from seed.
std::vector<float> honest_call_output(const Job& job, uint64_t seed) {
    const int64_t m = job.shape.m, n = job.shape.n, k = job.shape.k;
    std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
    std::vector<double> ref(size_t(m * n));
    fill_call_inputs(job, seed, a.data(), b.data());
    reference_gemm_fp64(m, n, k, a.data(), k, b.data(), n, ref.data(), n);
    for (size_t i = 0; i < c.size(); ++i) c[i] = float(ref[i]);
    return c;
}

// Calls 0..count-1 with their own seeds, as the checker would hold them.
struct HandedOver {
    std::vector<std::vector<float>> c;
    std::vector<CallOutput> outputs;
    HandedOver(const Job& job, int count) : c(size_t(count)) {
        for (int call = 0; call < count; ++call) {
            const uint64_t seed = 0xabcdef00ULL + 977ULL * uint64_t(call);
            c[size_t(call)] = honest_call_output(job, seed);
        }
        for (int call = 0; call < count; ++call)
            outputs.push_back({uint64_t(call), 0xabcdef00ULL + 977ULL * uint64_t(call), c[size_t(call)].data(), c[size_t(call)].size()});
    }
};

Job channel_job() {
    Job job = export_job();
    job.settings.checked_outside = true;
    job.settings.warmup = 1;  // call 0: the checked call, call 1: the warm-up, calls 2, 3: timed calls 1, 2
    return job;
}

TEST(CallOutputs, InputsComeFromTheSeedAloneWithStreamsZeroAndOne) {
    Job job = channel_job();
    std::vector<float> a(size_t(job.shape.m * job.shape.k)), b(size_t(job.shape.k * job.shape.n));
    fill_call_inputs(job, 42, a.data(), b.data());
    std::vector<float> want_a(a.size()), want_b(b.size());
    fill_uniform(want_a.data(), want_a.size(), 42, 0);
    fill_uniform(want_b.data(), want_b.size(), 42, 1);
    EXPECT_EQ(a, want_a);
    EXPECT_EQ(b, want_b);
    job.id = 8;  // nothing of the job but its shape matters
    job.seed = 1;
    fill_call_inputs(job, 42, a.data(), b.data());
    EXPECT_EQ(a, want_a);
    for (float v : a) EXPECT_TRUE(v >= -1.0f && v < 1.0f) << v;
}

TEST(CallOutputs, HonestOutputsPassAndEveryCallIsChecked) {
    const Job job = channel_job();
    const HandedOver calls(job, 4);
    const TrustedCheck check = check_call_outputs(job, calls.outputs, 4);
    EXPECT_TRUE(check.passed) << check.reason;
    EXPECT_EQ(check.calls_checked, 4);
    EXPECT_LT(check.max_rel_err, 1e-6);
}

TEST(CallOutputs, AWrongElementFailsNamingTheCall) {
    const Job job = channel_job();
    HandedOver calls(job, 4);
    calls.c[2][5] += 0.5f;  // the first timed call
    const TrustedCheck check = check_call_outputs(job, calls.outputs, 4);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason.rfind("timed call 1: error ", 0), 0u) << check.reason;
    EXPECT_EQ(check.calls_checked, 3);
}

TEST(CallOutputs, ANaNFailsNamingTheCall) {
    const Job job = channel_job();
    HandedOver calls(job, 4);
    calls.c[1][0] = std::nanf("");  // the warm-up
    const TrustedCheck check = check_call_outputs(job, calls.outputs, 4);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason.rfind("warm-up call 1: NaN", 0), 0u) << check.reason;
}

TEST(CallOutputs, OutputsFromAnotherSeedFail) {
    const Job job = channel_job();
    HandedOver calls(job, 4);
    calls.outputs[3].seed += 1;  // the worker drew the last call's inputs from a seed it was not given
    const TrustedCheck check = check_call_outputs(job, calls.outputs, 4);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason.rfind("timed call 2: error ", 0), 0u) << check.reason;
}

TEST(CallOutputs, AMissingDuplicatedReorderedOrExtraCallFails) {
    const Job job = channel_job();
    HandedOver calls(job, 4);

    std::vector<CallOutput> missing = calls.outputs;
    missing.erase(missing.begin() + 1);
    TrustedCheck check = check_call_outputs(job, missing, 4);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason, "warm-up call 1: its output is missing");
    EXPECT_EQ(check.calls_checked, 0) << "the sequence is checked before any output";

    check = check_call_outputs(job, calls.outputs, 5);  // the worker was to make one more call
    EXPECT_EQ(check.reason, "timed call 3: its output is missing");

    std::vector<CallOutput> twice = calls.outputs;
    twice[3] = twice[2];
    check = check_call_outputs(job, twice, 4);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason, "timed call 1: its output was handed over twice");

    std::vector<CallOutput> swapped = calls.outputs;
    std::swap(swapped[2], swapped[3]);
    check = check_call_outputs(job, swapped, 4);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason, "timed call 2: its output was handed over out of order");

    check = check_call_outputs(job, calls.outputs, 3);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason, "call 3 was handed over, but the worker was to make 3 calls");
}

TEST(CallOutputs, AWrongCountFailsNamingTheCall) {
    const Job job = channel_job();
    HandedOver calls(job, 4);
    calls.outputs[0].count -= 1;
    TrustedCheck check = check_call_outputs(job, calls.outputs, 4);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason, "first call: its output has 62 floats, expected 63");
    calls.outputs[0].count += 1;
    calls.outputs[0].c = nullptr;
    check = check_call_outputs(job, calls.outputs, 4);
    EXPECT_EQ(check.reason, "first call: its output has 0 floats, expected 63");
}

// Round to nearest even with `bits` significant bits and normal exponents down to min_exponent (below:
// subnormal spacing), by scaling, independently of how output_export.cpp does it on the bits.
float round_to_significand(float x, int bits, int min_exponent) {
    if (x == 0) return x;
    int e = 0;
    std::frexp(x, &e);  // x = f 2^e, f in [0.5, 1): the leading bit is worth 2^(e-1)
    const double quantum = std::ldexp(1.0, std::max(e - 1, min_exponent) - (bits - 1));
    return float(std::nearbyint(double(x) / quantum) * quantum);
}

TEST(CallOutputs, SixteenBitJobsAreCheckedOnTheRoundedInputsTheKernelGets) {
    for (const DType dtype : {DType::bf16, DType::fp16}) {
        Job job = channel_job();
        job.dtype = dtype;
        job.settings.tolerance = 1e-6;  // far below the 16-bit rounding error: only exact inputs pass
        const int64_t m = job.shape.m, n = job.shape.n, k = job.shape.k;
        std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
        std::vector<double> ref(c.size());
        fill_call_inputs(job, 5, a.data(), b.data());
        for (float& v : a) v = dtype == DType::bf16 ? round_to_significand(v, 8, -126) : round_to_significand(v, 11, -14);
        for (float& v : b) v = dtype == DType::bf16 ? round_to_significand(v, 8, -126) : round_to_significand(v, 11, -14);
        reference_gemm_fp64(m, n, k, a.data(), k, b.data(), n, ref.data(), n);
        for (size_t i = 0; i < c.size(); ++i) c[i] = float(ref[i]);
        const TrustedCheck rounded = check_call_outputs(job, {{0, 5, c.data(), c.size()}}, 1);
        EXPECT_TRUE(rounded.passed) << to_string(dtype) << ": " << rounded.reason;

        const std::vector<float> unrounded = honest_call_output(job, 5);  // the fp32 inputs' product
        const TrustedCheck fp32 = check_call_outputs(job, {{0, 5, unrounded.data(), unrounded.size()}}, 1);
        EXPECT_FALSE(fp32.passed) << to_string(dtype) << ": the checker did not round the inputs";
    }
}

}  // namespace
}  // namespace kreg
