// Checks a kernel cannot lean on (issue 20, item 3): the harness-state fixtures of
// tests/fixtures/harness_state each fail in a plain sweep, a strict run and a run checked outside the
// worker (grading's path), through a real worker process; and the fill C starts from varies the way
// verify/output_fill.hpp says.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "ops/output_export.hpp"
#include "sweep/checked_calls.hpp"
#include "sweep/executor.hpp"
#include "verify/output_fill.hpp"
#include "verify/random_fill.hpp"

namespace kreg {
namespace {

std::string fixture(const std::string& name) { return std::string(KREG_FIXTURE_DIR) + "/" + name + ".so"; }

enum class Mode { plain, strict, checked_outside };
const char* to_text(Mode mode) {
    return mode == Mode::plain ? "plain" : mode == Mode::strict ? "strict" : "checked outside";
}

Job job_for(const std::string& kernel, Mode mode, uint64_t seed) {
    Job job;
    job.id = 3;
    job.seed = seed;
    job.kernel = kernel;
    job.plugin_path = fixture(kernel);
    job.shape = {33, 20, 17};
    job.settings.warmup = 2;
    job.settings.repeats = 5;
    job.settings.strict = mode == Mode::strict;
    job.settings.checked_outside = mode == Mode::checked_outside;
    return job;
}

// The row, and for a job checked outside the checker's verdict folded into it as the grader does.
struct Outcome {
    RowStatus status;
    std::string reason;
};

Outcome run(const std::string& kernel, Mode mode, uint64_t seed) {
    ExecutorOptions options;
    options.runner_exe = KREG_RUNNER;
    Executor executor(options);
    const Job job = job_for(kernel, mode, seed);
    if (mode != Mode::checked_outside) {
        const Record r = executor.run_job(job);
        return {r.status, r.reason};
    }
    std::vector<CheckedCall> calls;
    const Record r = executor.run_checked_job(job, calls);
    if (r.status != RowStatus::ok) return {r.status, r.reason};
    std::vector<CallOutput> outputs;
    for (const CheckedCall& c : calls) outputs.push_back({c.call, c.seed, c.output.data(), c.output.count()});
    const TrustedCheck check = check_call_outputs(job, outputs, 1 + job.settings.warmup + job.settings.repeats);
    return {check.passed ? RowStatus::ok : RowStatus::wrong_result, check.reason};
}

struct Expected {
    const char* kernel;
    RowStatus status;
    const char* reason_has;  // "" : any reason
};

const Expected kFixtures[] = {
    {"state_nan_as_zero", RowStatus::wrong_result, ""},
    {"state_poison_word_as_zero", RowStatus::wrong_result, ""},
    {"state_large_or_nan_as_zero", RowStatus::wrong_result, ""},
    {"state_write_1mib_past_c", RowStatus::crashed,
     "kreg: the kernel wrote past the end of C (guard page at +1048576 bytes)"},
    {"state_write_60mib_past_c", RowStatus::crashed,
     "kreg: the kernel wrote past the end of C (guard page at +62914560 bytes)"},
    {"state_clobbers_b", RowStatus::failed, "kernel modified its input B: element (16, 0)"},
};

TEST(HarnessState, EveryFixtureFailsInPlainStrictAndCheckedRuns) {
    ASSERT_TRUE(std::filesystem::exists(KREG_RUNNER)) << "build the runner target: " << KREG_RUNNER;
    // Several seeds: the fill differs from run to run, and every run must catch each fixture.
    for (uint64_t seed : {1u, 2u, 3u})
        for (const Expected& e : kFixtures)
            for (Mode mode : {Mode::plain, Mode::strict, Mode::checked_outside}) {
                const Outcome o = run(e.kernel, mode, seed);
                if (std::getenv("KREG_TEST_VERBOSE"))
                    std::printf("%s %s %d: %s\n", e.kernel, to_text(mode), int(o.status), o.reason.c_str());
                EXPECT_EQ(o.status, e.status)
                    << e.kernel << ", " << to_text(mode) << ", seed " << seed << ": " << o.reason;
                EXPECT_NE(o.reason.find(e.reason_has), std::string::npos)
                    << e.kernel << ", " << to_text(mode) << ": " << o.reason;
            }
}

TEST(HarnessState, AnHonestKernelPassesEveryMode) {
    for (Mode mode : {Mode::plain, Mode::strict, Mode::checked_outside}) {
        const Outcome o = run("fixture_good", mode, 1);
        EXPECT_EQ(o.status, RowStatus::ok) << to_text(mode) << ": " << o.reason;
    }
}

// ---- The fill itself ------------------------------------------------------------------------------------

uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

TEST(OutputFill, NanWordsVaryAndAvoidTheHarnessPatterns) {
    std::set<uint32_t> words;
    int finite = 0;
    for (uint64_t seed = 0; seed < 4000; ++seed) {
        const OutputFill f = draw_output_fill(seed);
        finite += f.finite;
        EXPECT_TRUE(std::isnan([&] {
            float x;
            std::memcpy(&x, &f.nan_word, sizeof x);
            return x;
        }()));
        EXPECT_NE(f.nan_word & 0x00400000u, 0u) << "quiet";
        for (uint32_t r : {kPadBeforeABits, kPadAfterABits, kPadBeforeBBits, kPadAfterBBits, 0x7fc00000u})
            EXPECT_NE(f.nan_word & 0x3fffffu, r & 0x3fffffu);
        words.insert(f.nan_word);
    }
    EXPECT_GT(words.size(), 3900u) << "the payload is drawn per call";
    EXPECT_GT(finite, 1700);
    EXPECT_LT(finite, 2300);
}

TEST(OutputFill, TheCallAfterTheFirstIsFiniteWheneverTheFirstWasNot) {
    for (uint64_t seed = 0; seed < 200; ++seed) {
        EXPECT_TRUE(call_output_fill(1, seed, false).finite);
        EXPECT_EQ(call_output_fill(1, seed, true).finite, draw_output_fill(seed).finite);
        EXPECT_EQ(call_output_fill(2, seed, false).finite, draw_output_fill(seed).finite);
    }
}

TEST(OutputFill, FiniteFillsMixPlausibleAndImplausibleMagnitudes) {
    OutputFill f;
    f.finite = true;
    f.key = 99;
    std::vector<float> c(20000);
    write_output_fill(f, c.data(), c.size());
    int implausible = 0, below_one = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        ASSERT_TRUE(std::isfinite(c[i]));
        EXPECT_EQ(bits_of(c[i]), finite_fill_word(f.key, i));
        EXPECT_EQ(still_holds_fill(f, i, bits_of(c[i])), std::fabs(c[i]) >= 0x1p24f);
        implausible += std::fabs(c[i]) >= 0x1p24f;
        below_one += std::fabs(c[i]) < 1.0f;
        // A written element (another value) is never taken for the fill.
        EXPECT_FALSE(still_holds_fill(f, i, bits_of(c[i] * 0.5f)));
    }
    EXPECT_GT(implausible, 6000);
    EXPECT_GT(below_one, 2500);
}

// A worker that hands over an output of the wrong length is told the operation's own count: a reduction's
// output is one element, not M*N.
TEST(CallCollector, AWrongOutputCountNamesTheOperationsCount) {
    WorkerProcess no_worker;  // no process: the seed it is sent goes nowhere
    Job job;
    job.operation = Operation::reduction;
    job.shape.n = 1000;
    CallCollector collector(no_worker, job, 3);
    const auto& handle = collector.interim().handler;
    ASSERT_EQ(handle({{"op", "next_call"}, {"id", 1}, {"call", 0u}}, -1), "");
    const std::string why =
        handle({{"op", "output"}, {"id", 1}, {"call", 0u}, {"count", 1000u}, {"measured_ms", 1.0}}, -1);
    EXPECT_NE(why.find("the reduction output's 1 element(s)"), std::string::npos) << why;
    EXPECT_EQ(why.find("M*N"), std::string::npos) << why;
}

}  // namespace
}  // namespace kreg
