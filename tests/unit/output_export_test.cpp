// The grader's trusted re-check of the outputs a worker handed over call by call (check_call_outputs).
// Right outputs pass; a changed, missing, duplicated, reordered, NaN or truncated one fails naming the
// call. Transposes are checked bit for bit, on inputs that carry NaN payloads, -0, Inf and a subnormal.
#include "ops/output_export.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "measure/anticheat.hpp"
#include "ops/transpose.hpp"
#include "verify/output_fill.hpp"
#include "verify/random_fill.hpp"
#include "verify/reference_gemm.hpp"

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
            outputs.push_back({uint64_t(call), 0xabcdef00ULL + 977ULL * uint64_t(call), c[size_t(call)].data(),
                               c[size_t(call)].size()});
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
        for (float& v : a)
            v = dtype == DType::bf16 ? round_to_significand(v, 8, -126) : round_to_significand(v, 11, -14);
        for (float& v : b)
            v = dtype == DType::bf16 ? round_to_significand(v, 8, -126) : round_to_significand(v, 11, -14);
        reference_gemm_fp64(m, n, k, a.data(), k, b.data(), n, ref.data(), n);
        for (size_t i = 0; i < c.size(); ++i) c[i] = float(ref[i]);
        const TrustedCheck rounded = check_call_outputs(job, {{0, 5, c.data(), c.size()}}, 1);
        EXPECT_TRUE(rounded.passed) << to_string(dtype) << ": " << rounded.reason;

        const std::vector<float> unrounded = honest_call_output(job, 5);  // the fp32 inputs' product
        const TrustedCheck fp32 = check_call_outputs(job, {{0, 5, unrounded.data(), unrounded.size()}}, 1);
        EXPECT_FALSE(fp32.passed) << to_string(dtype) << ": the checker did not round the inputs";
    }
}

// ---- Transposes: exact operations --------------------------------------------------------------------

Job transpose_job(Operation op, Shape shape) {
    Job job = channel_job();
    job.operation = op;
    job.shape = shape;
    return job;
}

// What an honest transpose hands over for a call drawn from seed: the exact result.
std::vector<float> honest_transpose(const Job& job, uint64_t seed) {
    std::vector<float> a(size_t(job.shape.m * job.shape.n)), out(a.size());
    fill_call_inputs(job, seed, a.data(), nullptr);
    if (job.operation == Operation::transpose)
        reference_transpose(a.data(), out.data(), job.shape.m, job.shape.n);
    else
        reference_block_transpose(a.data(), out.data(), job.shape.m, job.shape.n, job.shape.block);
    return out;
}

TEST(CallOutputs, ATransposesInputsCarryTheSpecialValuesSoBitsAreChecked) {
    const Job job = transpose_job(Operation::transpose, {17, 33, 0, 0});
    std::vector<float> a(17 * 33), again(17 * 33);
    fill_call_inputs(job, 42, a.data(), nullptr);  // no B: the pointer is never touched
    fill_call_inputs(job, 42, again.data(), nullptr);
    EXPECT_EQ(std::memcmp(a.data(), again.data(), a.size() * sizeof(float)), 0)
        << "the checker draws what the worker drew";
    // Every special bit pattern is in A (561 elements, 7 patterns), and nothing else is non-finite.
    std::vector<uint32_t> bits(a.size());
    std::memcpy(bits.data(), a.data(), a.size() * sizeof(float));
    for (uint32_t special : transpose_special_bits())
        EXPECT_NE(std::find(bits.begin(), bits.end(), special), bits.end()) << std::hex << special;
    // A GEMM's inputs stay plain uniform values (its check is within a tolerance).
    Job gemm = export_job();
    std::vector<float> ga(size_t(gemm.shape.m * gemm.shape.k)), gb(size_t(gemm.shape.k * gemm.shape.n));
    fill_call_inputs(gemm, 42, ga.data(), gb.data());
    for (float v : ga) EXPECT_TRUE(std::isfinite(v) && v != 0.0f);
}

TEST(CallOutputs, TransposesAreCheckedBitForBitEveryCall) {
    for (const auto& [op, shape] :
         std::vector<std::pair<Operation, Shape>>{{Operation::transpose, {17, 33, 0, 0}},
                                                  {Operation::transpose, {1, 300, 0, 0}},
                                                  {Operation::block_transpose, {12, 18, 0, 3}}}) {
        SCOPED_TRACE(to_string(shape));
        const Job job = transpose_job(op, shape);
        std::vector<std::vector<float>> c;
        for (uint64_t call = 0; call < 4; ++call) c.push_back(honest_transpose(job, 1000 + call));
        auto outputs = [&] {
            std::vector<CallOutput> out;
            for (uint64_t call = 0; call < 4; ++call)
                out.push_back({call, 1000 + call, c[call].data(), c[call].size()});
            return out;
        };
        const TrustedCheck honest = check_call_outputs(job, outputs(), 4);
        EXPECT_TRUE(honest.passed) << honest.reason;
        EXPECT_EQ(honest.calls_checked, 4);
        EXPECT_EQ(honest.max_rel_err, 0.0);

        // One ulp off in the last timed call: within any tolerance, not bit-exact.
        const float saved = c[3][5];
        c[3][5] = std::nextafter(c[3][5], INFINITY);
        TrustedCheck wrong = check_call_outputs(job, outputs(), 4);
        EXPECT_FALSE(wrong.passed);
        EXPECT_NE(wrong.reason.find("timed call 2: element"), std::string::npos) << wrong.reason;
        EXPECT_NE(wrong.reason.find("but the exact result is"), std::string::npos) << wrong.reason;
        // An element left holding the harness's poison is named as never written.
        const uint32_t poison = kPoisonBits;
        std::memcpy(&c[3][5], &poison, sizeof poison);
        wrong = check_call_outputs(job, outputs(), 4);
        EXPECT_NE(wrong.reason.find("was never written (it still holds the poison NaN)"), std::string::npos)
            << wrong.reason;
        c[3][5] = saved;
        // An element left holding what C was filled with before that call (verify/output_fill.hpp, drawn as in
        // the worker) is named as unwritten, whichever fill it was.
        if (op == Operation::transpose) {
            // Filled before the call's own seed is asked for: from the job's seed, then the previous call's.
            const bool first_finite = draw_output_fill(checked_fill_seed(0, job.seed, 0)).finite;
            const OutputFill fill = call_output_fill(3, checked_fill_seed(3, job.seed, 1002), first_finite);
            size_t at = 0;
            while (fill.finite && !fill_word_is_implausible(finite_fill_word(fill.key, at))) ++at;
            const uint32_t word = fill.finite ? finite_fill_word(fill.key, at) : fill.nan_word;
            const float kept = c[3][at];
            std::memcpy(&c[3][at], &word, sizeof word);
            wrong = check_call_outputs(job, outputs(), 4);
            EXPECT_NE(wrong.reason.find("timed call 2: unwritten element at ("), std::string::npos) << wrong.reason;
            c[3][at] = kept;
        }
        EXPECT_TRUE(check_call_outputs(job, outputs(), 4).passed);
    }
}

TEST(CallOutputs, ATransposeThatQuietsASignallingNaNFails) {
    // x * 1.0f: every finite value survives, the signalling NaN's payload does not.
    const Job job = transpose_job(Operation::transpose, {17, 33, 0, 0});
    std::vector<float> c = honest_transpose(job, 7);
    size_t changed = 0;
    for (float& v : c) {
        uint32_t b;
        std::memcpy(&b, &v, sizeof b);
        if (b == 0x7f812345u) {
            b = 0x7fc12345u;
            std::memcpy(&v, &b, sizeof b);
            ++changed;
        }
    }
    ASSERT_EQ(changed, 1u);
    Job one = job;
    one.settings.warmup = 0;
    const TrustedCheck check = check_call_outputs(one, {{0, 7, c.data(), c.size()}}, 1);
    EXPECT_FALSE(check.passed);
    EXPECT_NE(check.reason.find("first call: element"), std::string::npos) << check.reason;
    EXPECT_NE(check.reason.find("(bits 0x7fc12345) but the exact result is nan (bits 0x7f812345)"), std::string::npos)
        << check.reason;
}

}  // namespace
}  // namespace kreg
