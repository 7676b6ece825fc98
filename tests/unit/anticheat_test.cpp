// Strict (grading) mode on the CPU: each cheating fixture of tests/fixtures/anticheat becomes the row it
// deserves, with the call it was caught at in the reason; honest plugins stay ok; and what a plugin sees
// call after call (fresh pointers, fresh inputs, identical arguments) is checked from the plugin's side
// by a spy kernel. Without strict, cheat_caches passes, which is why strict exists.
#include "record_json.hpp"
#include "measure/anticheat.hpp"
#include "ops/output_export.hpp"
#include "measure/sampler.hpp"
#include "plugin/loader.hpp"
#include "sweep/executor.hpp"
#include "verify/random_fill.hpp"
#include "pipeline/job_runner.hpp"
#include "worker/session.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kreg {
namespace {

std::string fixture(const std::string& name) { return std::string(KREG_FIXTURE_DIR) + "/" + name + ".so"; }
std::string plugin(const std::string& name) { return std::string(KREG_PLUGIN_DIR) + "/" + name + ".so"; }

Job strict_job(const std::string& path, const std::string& kernel, bool strict = true) {
    Job job;
    job.id = 7;
    job.seed = 1234;
    job.kernel = kernel;
    job.plugin_path = path;
    job.shape = {33, 20, 17};
    job.settings.warmup = 2;
    job.settings.repeats = 5;
    job.settings.strict = strict;
    return job;
}

Record run(const Job& job) {
    WorkerSession session;
    const auto reply = session.handle({{"op", "run"}, {"job", job}});
    return reply.at("record").get<Record>();
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// ---- The cheat corpus, strict -------------------------------------------------------------------------

struct Expected {
    const char* cheat;
    RowStatus status;
    const char* reason_prefix;  // the call it is caught at, then what was wrong
};

TEST(StrictCpu, EveryCheatIsCaughtAtTheCallItCheats) {
    // Calls, in order: first call, warm-up call 1, warm-up call 2, timed call 1..5.
    const Expected expected[] = {
        {"cheat_never_writes", RowStatus::wrong_result, "first call: unwritten element at ("},
        {"cheat_constant", RowStatus::wrong_result, "first call: error"},
        // Rows 16 and on: with a finite fill, the first element whose fill no result can equal.
        {"cheat_partial", RowStatus::wrong_result, "first call: unwritten element at ("},
        // Right on the first call; the second call's inputs are new, so its replayed result is wrong.
        {"cheat_caches", RowStatus::wrong_result, "warm-up call 1: error"},
        {"cheat_modifies_input", RowStatus::failed, "first call: kernel modified its input A: element (0, 0)"},
        // Right for three calls (first, warm-ups 1 and 2); the fourth is the first timed call.
        {"cheat_nth_call", RowStatus::wrong_result, "timed call 1: unwritten element"},
        // Right while a shape has been called at most three times in a row; the fourth is timed call 1.
        {"cheat_when_benchmarked", RowStatus::wrong_result, "timed call 1: error"},
        // Returns before its thread writes C: the copy taken on return is still poison.
        {"cheat_thread_after_return", RowStatus::wrong_result, "first call: unwritten element"},
    };
    for (const Expected& e : expected) {
        const Record r = run(strict_job(fixture(e.cheat), e.cheat));
        EXPECT_EQ(r.status, e.status) << e.cheat << ": " << r.reason;
        EXPECT_TRUE(starts_with(r.reason, e.reason_prefix)) << e.cheat << ": " << r.reason;
        EXPECT_FALSE(r.stats.has_value()) << e.cheat << ": a failed row must carry no timing to read";
        ASSERT_TRUE(extra_json(r).contains("anticheat")) << e.cheat;
        EXPECT_EQ(extra_json(r)["anticheat"]["strict"], true) << e.cheat;
        // Every call up to the one that cheated had its output checked (for a changed input, the input
        // check ends the row before the output is).
        if (e.status == RowStatus::wrong_result)
            EXPECT_EQ(extra_json(r)["anticheat"]["calls_verified"], extra_json(r)["anticheat"]["calls"]) << e.cheat;
        EXPECT_FALSE(extra_json(r)["anticheat"]["failed_at"].get<std::string>().empty()) << e.cheat;
    }
}

TEST(StrictCpu, ModifiedInputNamesTheElementAndHowManyChanged) {
    const Record r = run(strict_job(fixture("cheat_modifies_input"), "cheat_modifies_input"));
    ASSERT_EQ(r.status, RowStatus::failed) << r.reason;
    // The fixture zeroes the first row of A: k = 17 elements (none of the inputs is exactly zero).
    EXPECT_NE(r.reason.find(", now 0 (17 of 561 elements changed)"), std::string::npos) << r.reason;
    EXPECT_EQ(extra_json(r)["anticheat"]["calls_verified"], 0) << "the inputs are checked before the output";
}

TEST(StrictCpu, ThreadLeftRunningIsRecorded) {
    const Record r = run(strict_job(fixture("cheat_thread_after_return"), "cheat_thread_after_return"));
    ASSERT_TRUE(extra_json(r).contains("anticheat"));
    EXPECT_EQ(extra_json(r)["anticheat"]["threads_left_running"], true) << extra_json(r).dump();
    EXPECT_GE(extra_json(r)["anticheat"]["max_threads_left"].get<int>(), 1);
}

TEST(StrictCpu, NthCallCheatNeedsEveryCallChecked) {
    // Without strict the same plugin is caught too, at the same call: every call's C is scanned for the
    // poison it left (pipeline/pipeline.hpp); strict verifies every call in full besides.
    const Record lax = run(strict_job(fixture("cheat_nth_call"), "cheat_nth_call", false));
    EXPECT_EQ(lax.status, RowStatus::wrong_result) << lax.reason;
    EXPECT_TRUE(starts_with(lax.reason, "timed call 1: unwritten element")) << lax.reason;
    const Record strict = run(strict_job(fixture("cheat_nth_call"), "cheat_nth_call"));
    EXPECT_TRUE(starts_with(strict.reason, "timed call 1: ")) << strict.reason;
    EXPECT_EQ(extra_json(strict)["anticheat"]["calls"], 4);
    EXPECT_EQ(extra_json(strict)["anticheat"]["failed_at"], "timed call 1");
}

TEST(StrictCpu, WithoutStrictTheCachingCheatPasses) {
    // Why strict exists: the ordinary run checks the first and the last timed output, and both are right
    // because every call sees the same inputs; the timed calls are a memcpy.
    const Record lax = run(strict_job(fixture("cheat_caches"), "cheat_caches", false));
    EXPECT_EQ(lax.status, RowStatus::ok) << lax.reason;
    EXPECT_FALSE(extra_json(lax).contains("anticheat"));
    const Record strict = run(strict_job(fixture("cheat_caches"), "cheat_caches"));
    EXPECT_EQ(strict.status, RowStatus::wrong_result) << strict.reason;
}

TEST(StrictCpu, StrictVerifiesEvenWhenVerifyIsOff) {
    Job job = strict_job(fixture("cheat_constant"), "cheat_constant");
    job.settings.verify = false;
    EXPECT_EQ(run(job).status, RowStatus::wrong_result);
}

TEST(StrictCpu, KernelErrorNamesTheCall) {
    const Record r = run(strict_job(fixture("fixture_throw_in_run"), "fixture_throw_in_run"));
    EXPECT_EQ(r.status, RowStatus::failed);
    EXPECT_TRUE(starts_with(r.reason, "first call: kernel returned ")) << r.reason;
    EXPECT_NE(r.reason.find("fixture: run_gemm throws"), std::string::npos) << r.reason;
}

// ---- Honest plugins stay ok ---------------------------------------------------------------------------

TEST(StrictCpu, HonestPluginsAreOkAndEveryCallIsVerified) {
    for (const auto& [path, kernel] :
         std::vector<std::pair<std::string, std::string>>{{fixture("fixture_good"), "fixture_good"},
                                                          {plugin("cpu_naive"), "cpu_naive"},
                                                          {plugin("cpu_blocked"), "cpu_blocked"}}) {
        const Record r = run(strict_job(path, kernel));
        EXPECT_EQ(r.status, RowStatus::ok) << kernel << ": " << r.reason;
        EXPECT_EQ(r.samples_ms.size(), 5u) << kernel;
        EXPECT_TRUE(r.stats.has_value()) << kernel;
        ASSERT_TRUE(r.max_rel_err.has_value()) << kernel;
        EXPECT_LE(*r.max_rel_err, *r.tolerance) << kernel;
        const nlohmann::json ac = extra_json(r).at("anticheat");
        EXPECT_EQ(ac["strict"], true);
        EXPECT_EQ(ac["calls"], 1 + 2 + 5) << kernel;
        EXPECT_EQ(ac["calls_verified"], 1 + 2 + 5) << kernel;
        EXPECT_EQ(ac["every_call_checked"], true) << kernel;
        EXPECT_EQ(ac["fresh_inputs"], true);
        EXPECT_EQ(ac["input_checksums"], true);
        EXPECT_EQ(ac["buffer_sets"], kStrictBufferSets);
        EXPECT_TRUE(ac.contains("threads_left_running")) << kernel;
        EXPECT_FALSE(ac.contains("failed_at")) << kernel;
    }
}

// Grading sets a per-call limit, whose watchdog is a thread of the worker. It must exist before the job
// counts threads: seen in a 50-submission grading run, the first job of every worker reported a thread
// left running by an honest kernel and then waited 500 ms for it to end.
TEST(StrictCpu, ThePerCallWatchdogIsNotAThreadTheKernelLeftRunning) {
    Job job = strict_job(fixture("fixture_good"), "fixture_good");
    job.settings.call_timeout_s = 30;
    const Record r = run(job);
    EXPECT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_EQ(extra_json(r)["anticheat"]["threads_left_running"], false) << extra_json(r).dump();
}

TEST(StrictCpu, StrictOffKeepsTheOrdinaryRow) {
    const Record r = run(strict_job(fixture("fixture_good"), "fixture_good", false));
    EXPECT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_FALSE(extra_json(r).contains("anticheat"));
    EXPECT_EQ(r.samples_ms.size(), 5u);
}

// ---- What the plugin sees, from its side --------------------------------------------------------------

// A correct kernel that records every call's arguments and input contents.
struct SpyCall {
    kreg_gemm_args args{};
    std::vector<float> a, b;
    bool c_poisoned = true;  // C held one call's fill: one NaN word everywhere, or finite values only
    bool c_finite = true;
    uint32_t c_first_word = 0;
};
std::vector<SpyCall> g_spy_calls;

kreg_status spy_run_gemm(void*, const kreg_gemm_args* args, char*, size_t) {
    SpyCall call;
    call.args = *args;
    const auto* a = static_cast<const float*>(args->a);
    const auto* b = static_cast<const float*>(args->b);
    auto* c = static_cast<float*>(args->c);
    call.a.assign(a, a + args->m * args->k);
    call.b.assign(b, b + args->k * args->n);
    std::memcpy(&call.c_first_word, &c[0], sizeof call.c_first_word);
    for (int64_t i = 0; i < args->m * args->n; ++i) {
        uint32_t word;
        std::memcpy(&word, &c[i], sizeof word);
        call.c_finite = call.c_finite && std::isfinite(c[i]);
        call.c_poisoned = call.c_poisoned && (std::isnan(c[0]) ? word == call.c_first_word : std::isfinite(c[i]));
    }
    for (int64_t i = 0; i < args->m; ++i)
        for (int64_t j = 0; j < args->n; ++j) {
            float sum = 0;
            for (int64_t p = 0; p < args->k; ++p) sum += a[i * args->lda + p] * b[p * args->ldb + j];
            c[i * args->ldc + j] = sum;
        }
    g_spy_calls.push_back(std::move(call));
    return KREG_STATUS_OK;
}

LoadedKernel spy_kernel(kreg_kernel_info& info) {
    info = kreg_kernel_info{};
    info.struct_size = sizeof(kreg_kernel_info);
    info.name = "spy";
    info.backend = KREG_BACKEND_CPU;
    info.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
    info.run_gemm = spy_run_gemm;
    return LoadedKernel{&info, nullptr, "spy", ""};
}

TEST(StrictCpu, EveryCallGetsNewPointersNewInputsAndTheSameArguments) {
    kreg_kernel_info info;
    g_spy_calls.clear();
    const Job job = strict_job("", "spy");
    const Record r = run_cpu_gemm_job(job, spy_kernel(info));
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    ASSERT_EQ(g_spy_calls.size(), 8u);

    // The checked call sees the job's ordinary inputs, as without strict.
    std::vector<float> ordinary_a(size_t(job.shape.m * job.shape.k));
    fill_uniform(ordinary_a.data(), ordinary_a.size(), job.seed, 2 * job.id);
    EXPECT_EQ(g_spy_calls[0].a, ordinary_a);

    std::set<std::vector<float>> distinct_a, distinct_b;
    std::set<uint32_t> nan_words;
    int finite_calls = 0;
    for (size_t i = 0; i < g_spy_calls.size(); ++i) {
        const SpyCall& call = g_spy_calls[i];
        EXPECT_TRUE(call.c_poisoned) << "call " << i;
        // C's fill varies (verify/output_fill.hpp): never the one word of old, finite at least once.
        if (call.c_finite)
            ++finite_calls;
        else
            nan_words.insert(call.c_first_word);
        if (i == 1)
            EXPECT_TRUE(call.c_finite || g_spy_calls[0].c_finite) << "the call after a NaN first call is finite";
        distinct_a.insert(call.a);
        distinct_b.insert(call.b);
        if (i == 0) continue;
        const kreg_gemm_args& prev = g_spy_calls[i - 1].args;
        EXPECT_NE(call.args.a, prev.a) << "call " << i << " reuses the previous call's A";
        EXPECT_NE(call.args.b, prev.b) << "call " << i;
        EXPECT_NE(call.args.c, prev.c) << "call " << i;
        // Nothing else tells the calls apart.
        if (i + 1 == g_spy_calls.size()) {
            EXPECT_GE(finite_calls, 1);
            if (nan_words.size() >= 2) EXPECT_NE(*nan_words.begin(), *nan_words.rbegin());
        }
        kreg_gemm_args same = call.args, before = prev;
        same.a = before.a = nullptr;
        same.b = before.b = nullptr;
        same.c = before.c = nullptr;
        EXPECT_EQ(std::memcmp(&same, &before, sizeof same), 0) << "call " << i;
    }
    EXPECT_EQ(distinct_a.size(), g_spy_calls.size()) << "every call must get its own A";
    EXPECT_EQ(distinct_b.size(), g_spy_calls.size()) << "every call must get its own B";
}

TEST(StrictCpu, WithoutStrictEveryCallSeesTheSameInputs) {
    // The premise of cheat_caches, checked from the plugin's side.
    kreg_kernel_info info;
    g_spy_calls.clear();
    const Record r = run_cpu_gemm_job(strict_job("", "spy", false), spy_kernel(info));
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;
    ASSERT_EQ(g_spy_calls.size(), 8u);
    for (const SpyCall& call : g_spy_calls) {
        EXPECT_EQ(call.args.a, g_spy_calls[0].args.a);
        EXPECT_EQ(call.a, g_spy_calls[0].a);
    }
}

// ---- Checked outside: the call channel --------------------------------------------------------------

// A checker that issues a seed per call and keeps every output, logging the order things happen in.
class RecordingChannel final : public CallChannel {
public:
    std::vector<std::string>* log = nullptr;
    std::vector<std::vector<float>> c;
    std::vector<CallOutput> outputs;
    std::vector<std::optional<double>> measured;

    uint64_t seed_for_call(uint64_t call) override {
        if (log) log->push_back("seed " + std::to_string(call));
        return 0x5eed0000ULL + 31 * call;
    }
    void hand_over(uint64_t call, const float* data, size_t count, std::optional<double> measured_ms) override {
        if (log) log->push_back("out " + std::to_string(call));
        c.emplace_back(data, data + count);
        outputs.push_back({call, 0x5eed0000ULL + 31 * call, nullptr, count});
        measured.push_back(measured_ms);
    }
    // outputs with their pointers set (c no longer grows).
    std::vector<CallOutput> sealed() const {
        std::vector<CallOutput> all = outputs;
        for (size_t i = 0; i < all.size(); ++i) all[i].c = c[i].data();
        return all;
    }
};

std::vector<std::string>* g_call_log = nullptr;
kreg_status logging_spy_run_gemm(void* instance, const kreg_gemm_args* args, char* error, size_t error_size) {
    if (g_call_log) g_call_log->push_back("call");
    return spy_run_gemm(instance, args, error, error_size);
}

Job checked_outside_job(const std::string& path, const std::string& kernel) {
    Job job = strict_job(path, kernel, false);
    job.settings.checked_outside = true;  // implies strict
    return job;
}

TEST(CheckedOutside, EverySeedIsAskedForRightBeforeItsCallAndEveryOutputHandedOverRightAfter) {
    kreg_kernel_info info;
    LoadedKernel kernel = spy_kernel(info);
    info.run_gemm = logging_spy_run_gemm;
    std::vector<std::string> log;
    g_call_log = &log;
    g_spy_calls.clear();
    RecordingChannel channel;
    channel.log = &log;
    const Job job = checked_outside_job("", "spy");
    const Record r = run_cpu_gemm_job(job, kernel, &channel);
    g_call_log = nullptr;
    ASSERT_EQ(r.status, RowStatus::ok) << r.reason;

    std::vector<std::string> expected;
    for (int call = 0; call < 8; ++call) {
        expected.push_back("seed " + std::to_string(call));
        expected.push_back("call");
        expected.push_back("out " + std::to_string(call));
    }
    EXPECT_EQ(log, expected);

    // Each call saw the inputs drawn from its seed, and the timed calls' samples are what was measured.
    ASSERT_EQ(g_spy_calls.size(), 8u);
    std::vector<float> a(size_t(job.shape.m * job.shape.k)), b(size_t(job.shape.k * job.shape.n));
    for (uint64_t call = 0; call < 8; ++call) {
        fill_call_inputs(job, 0x5eed0000ULL + 31 * call, a.data(), b.data());
        EXPECT_EQ(g_spy_calls[call].a, a) << "call " << call;
        EXPECT_EQ(g_spy_calls[call].b, b) << "call " << call;
    }
    ASSERT_EQ(channel.measured.size(), 8u);
    for (int call = 0; call < 3; ++call)
        EXPECT_FALSE(channel.measured[size_t(call)].has_value()) << "untimed call " << call;
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(channel.measured[3 + i], r.samples_ms.at(i));

    // The worker checked nothing itself; the checker's check passes.
    EXPECT_FALSE(r.max_rel_err.has_value());
    EXPECT_EQ(extra_json(r)["anticheat"]["calls_verified"], 0);
    EXPECT_EQ(extra_json(r)["anticheat"]["calls_exported"], 8);
    EXPECT_EQ(extra_json(r)["anticheat"]["every_call_checked"], true);
    const TrustedCheck check = check_call_outputs(job, channel.sealed(), 8);
    EXPECT_TRUE(check.passed) << check.reason;
}

TEST(CheckedOutside, ACachingCheatPassesTheWorkerAndFailsTheChecker) {
    RecordingChannel channel;
    const Job job = checked_outside_job(fixture("cheat_caches"), "cheat_caches");
    const LoadedPlugin plugin = LoadedPlugin::load(job.plugin_path);
    const kreg_kernel_info* info = plugin.find_kernel(job.kernel);
    ASSERT_NE(info, nullptr);
    void* instance = nullptr;
    char error[256] = {};
    ASSERT_EQ(info->create(&instance, error, sizeof error), KREG_STATUS_OK) << error;
    const Record r = run_cpu_gemm_job(job, LoadedKernel{info, instance, "cheat_caches", job.plugin_path}, &channel);
    info->destroy(instance);
    EXPECT_EQ(r.status, RowStatus::ok) << "the worker no longer judges C: " << r.reason;
    const TrustedCheck check = check_call_outputs(job, channel.sealed(), 1 + 2 + 5);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason.rfind("warm-up call 1: error ", 0), 0u) << check.reason;
}

TEST(CheckedOutside, WithoutAChannelTheRowFails) {
    kreg_kernel_info info;
    const Record r = run_cpu_gemm_job(checked_outside_job("", "spy"), spy_kernel(info));
    EXPECT_EQ(r.status, RowStatus::failed);
    EXPECT_EQ(r.reason, "checked_outside needs a channel");
}

// ---- The pieces -------------------------------------------------------------------------------------

TEST(Anticheat, StrictInputStreamsNeverRepeatAndCallZeroIsTheOrdinaryStream) {
    EXPECT_EQ(strict_input_stream(7, 0, 0), 14u);
    EXPECT_EQ(strict_input_stream(7, 0, 1), 15u);
    std::set<uint64_t> streams;
    for (uint64_t job = 0; job < 20; ++job) {
        streams.insert(2 * job);  // every ordinary stream of a 20-job plan
        streams.insert(2 * job + 1);
    }
    size_t expected = streams.size();
    for (uint64_t job = 0; job < 20; ++job)
        for (uint64_t call = 1; call < 50; ++call)
            for (int which = 0; which < 2; ++which) {
                streams.insert(strict_input_stream(job, call, which));
                ++expected;
            }
    EXPECT_EQ(streams.size(), expected) << "two calls (or a call and an ordinary job) share an input stream";
}

TEST(Anticheat, DescribeInputChange) {
    const float before[6] = {1, 2, 3, 4, 5, 6};
    float after[6] = {1, 2, 3, 4, 5, 6};
    EXPECT_EQ(describe_input_change("A", before, after, 6, sizeof(float), 3), "");
    after[4] = -0.5f;
    after[5] = 0;
    EXPECT_EQ(describe_input_change("B", before, after, 6, sizeof(float), 3),
              "kernel modified its input B: element (1, 1) was 5, now -0.5 (2 of 6 elements changed)");
    const uint16_t bits_before[2] = {0x3f80, 0x4000};
    const uint16_t bits_after[2] = {0x3f80, 0x0000};
    EXPECT_EQ(describe_input_change("A", bits_before, bits_after, 2, sizeof(uint16_t), 2),
              "kernel modified its input A: element (0, 1) was bits 0x4000, now bits 0x0000 (1 of 2 elements changed)");
}

TEST(Anticheat, TimingCrossCheckFlagsHiddenWorkNotLaunchOverhead) {
    // A tiny honest kernel: 5 us on the GPU, 40 us of launch and synchronize around it.
    EXPECT_FALSE(TimingCrossCheck::mismatched(0.005, 0.045));
    // An honest 1 ms kernel with 30 us of overhead.
    EXPECT_FALSE(TimingCrossCheck::mismatched(1.0, 1.03));
    // Work on another stream: the events bracket nothing, the wall clock sees 1 ms.
    EXPECT_TRUE(TimingCrossCheck::mismatched(0.004, 1.0));
    // Half the work hidden is still hidden work.
    EXPECT_TRUE(TimingCrossCheck::mismatched(0.4, 1.0));

    TimingCrossCheck honest;
    for (int i = 0; i < 9; ++i) honest.add(1.0, 1.02);
    honest.add(1.0, 12.0);  // one call whose host thread was preempted
    EXPECT_EQ(honest.mismatched_calls(), 1);
    EXPECT_FALSE(honest.escaped());
    EXPECT_EQ(honest.reason(), "");
    EXPECT_FALSE(honest.facts().timing_mismatch);

    TimingCrossCheck hidden;
    for (int i = 0; i < 5; ++i) hidden.add(1.0, 1.02);
    for (int i = 0; i < 5; ++i) hidden.add(0.004, 1.5);
    EXPECT_TRUE(hidden.escaped());
    EXPECT_EQ(hidden.reason(),
              "work escaped the harness stream: event time 0.004 ms vs wall time 1.5 ms (5 of 10 timed calls)");
    EXPECT_TRUE(hidden.facts().timing_mismatch);
    EXPECT_EQ(hidden.facts().mismatched_calls, 5);

    // Grading's correctness runs time two calls: one preempted call of two is a hiccup (seen on the
    // H200: event 0.0147 ms, wall 0.246 ms, an honest kernel at 17^3), both mismatched is hidden work.
    TimingCrossCheck two_calls;
    two_calls.add(0.0147, 0.03);
    two_calls.add(0.0147, 0.246);
    EXPECT_FALSE(two_calls.escaped()) << two_calls.reason();
    two_calls = TimingCrossCheck{};
    two_calls.add(0.004, 1.0);
    two_calls.add(0.004, 1.1);
    EXPECT_TRUE(two_calls.escaped());
    TimingCrossCheck one_call;
    one_call.add(0.004, 1.0);
    EXPECT_TRUE(one_call.escaped()) << "a single timed call that hides work is still caught";

    EXPECT_FALSE(TimingCrossCheck{}.escaped()) << "no timed call, no verdict";
}

TEST(Anticheat, EvidenceJson) {
    StrictEvidence e;
    e.calls = 3;
    e.calls_verified = 3;
    nlohmann::json j = e.facts();
    EXPECT_EQ(j["strict"], true);
    EXPECT_EQ(j["every_call_checked"], true);
    EXPECT_FALSE(j.contains("device_wide_sync"));
    EXPECT_FALSE(j.contains("timing_mismatch"));
    e.device_wide_sync = true;
    e.timing.emplace();
    e.timing->add(0.001, 2.0);
    e.failed_at = "timed call 1";
    j = e.facts();
    EXPECT_EQ(j["device_wide_sync"], true);
    EXPECT_EQ(j["timing_mismatch"], true);
    EXPECT_EQ(j["failed_at"], "timed call 1");
}

TEST(Anticheat, ThreadCountSeesAThreadUntilItEnds) {
    const int before = count_threads();
    ASSERT_GE(before, 1);
    std::atomic<bool> release{false};
    std::thread t([&] {
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    EXPECT_EQ(count_threads(), before + 1);
    EXPECT_FALSE(wait_for_threads(before, std::chrono::milliseconds(20)));
    release = true;
    t.join();
    EXPECT_TRUE(wait_for_threads(before, std::chrono::seconds(5)));
}

// ---- The sampler's per-call hooks ---------------------------------------------------------------------

class CountingTimer final : public Timer {
public:
    void start() override { events.push_back("start"); }
    double stop_ms() override {
        events.push_back("stop");
        return 1.0;
    }
    std::string name() const override { return "counting"; }
    std::vector<std::string> events;
};

TEST(Sampler, PerCallHooksSeeEveryCallWithItsRoleOutsideTheTimedRegion) {
    RunSettings settings;
    settings.warmup = 2;
    settings.repeats = 3;
    CountingTimer timer;
    std::vector<std::string>& events = timer.events;
    SampleHooks hooks;
    hooks.before_each = [&] { events.push_back("each"); };
    hooks.before_call = [&](const CallSite& site) { events.push_back("before " + site.label()); };
    hooks.after_call = [&](const CallSite& site, double ms) {
        events.push_back("after " + site.label() + " " + std::to_string(int(ms)));
    };
    const auto samples = sample(
        settings, timer, [&] { events.push_back("call"); }, hooks);
    EXPECT_EQ(samples.size(), 3u);
    const std::vector<std::string> expected = {
        "each", "before warm-up call 1",  "call", "after warm-up call 1 0", "each",  "before warm-up call 2",
        "call", "after warm-up call 2 0", "each", "before timed call 1",    "start", "call",
        "stop", "after timed call 1 1",   "each", "before timed call 2",    "start", "call",
        "stop", "after timed call 2 1",   "each", "before timed call 3",    "start", "call",
        "stop", "after timed call 3 1",
    };
    EXPECT_EQ(events, expected);
    EXPECT_EQ((CallSite{CallSite::Role::checked, 0}).label(), "first call");
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

// Past the end of C lies an inaccessible page: the first write past C kills the worker at the
// instruction, and the line the worker leaves on stderr says where it went. Death tests: the crash
// happens in a child, as it would in a worker.
TEST(StrictCpuGuardPagesDeathTest, AWritePastTheEndOfCKillsTheWorkerNamingTheGuardPage) {
    // One row too many: the result is right, the first float past C is already inaccessible.
    EXPECT_EXIT(run(strict_job(fixture("fixture_writes_past_c"), "fixture_writes_past_c")),
                ::testing::KilledBySignal(SIGSEGV),
                "kreg: the kernel wrote past the end of C \\(guard page at \\+0 bytes\\)");
    // 6000 bytes past the end: beyond the 1024-float band the runner used to keep after C, which a
    // write this far jumped over unseen.
    EXPECT_EXIT(run(strict_job(fixture("fixture_writes_far_past_c"), "fixture_writes_far_past_c")),
                ::testing::KilledBySignal(SIGSEGV),
                "kreg: the kernel wrote past the end of C \\(guard page at \\+6000 bytes\\)");
}

// A kernel (in this process) that computes C and then writes c[offset].
int64_t g_stray_offset = 0;
kreg_status stray_run_gemm(void*, const kreg_gemm_args* args, char*, size_t) {
    const auto* a = static_cast<const float*>(args->a);
    const auto* b = static_cast<const float*>(args->b);
    auto* c = static_cast<float*>(args->c);
    for (int64_t i = 0; i < args->m; ++i)
        for (int64_t j = 0; j < args->n; ++j) {
            float sum = 0;
            for (int64_t p = 0; p < args->k; ++p) sum += a[i * args->lda + p] * b[p * args->ldb + j];
            c[i * args->ldc + j] = sum;
        }
    c[g_stray_offset] = 0.0f;
    return KREG_STATUS_OK;
}

LoadedKernel stray_kernel(kreg_kernel_info& info) {
    info = kreg_kernel_info{};
    info.struct_size = sizeof(kreg_kernel_info);
    info.name = "stray";
    info.backend = KREG_BACKEND_CPU;
    info.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
    info.run_gemm = stray_run_gemm;
    return LoadedKernel{&info, nullptr, "stray", ""};
}

TEST(StrictCpuGuardPages, ASmallUnderrunIsReportedByTheBandBeforeC) {
    kreg_kernel_info info;
    g_stray_offset = -3;
    const Record r = run_cpu_gemm_job(strict_job("", "stray"), stray_kernel(info));
    EXPECT_EQ(r.status, RowStatus::failed) << r.reason;
    EXPECT_TRUE(starts_with(r.reason, "first call: kernel wrote outside C: 3 element(s) before the start of C (1 of "))
        << r.reason;
}

TEST(StrictCpuGuardPagesDeathTest, AWriteBeforeTheBandKillsTheWorkerNamingTheGuardPage) {
    // Past the band (at most a page and 1024 floats long) into the inaccessible region before it.
    const int64_t bytes = int64_t(sysconf(_SC_PAGESIZE)) + 8192;
    kreg_kernel_info info;
    g_stray_offset = -bytes / 4;
    EXPECT_EXIT(
        run_cpu_gemm_job(strict_job("", "stray"), stray_kernel(info)), ::testing::KilledBySignal(SIGSEGV),
        "kreg: the kernel wrote before the start of C \\(guard page at -" + std::to_string(bytes) + " bytes\\)");
}

// What the grader sees: the worker's death is a crashed row whose reason carries that line.
TEST(StrictCpuGuardPages, AWorkerKilledByTheGuardPageIsACrashedRowNamingIt) {
    ASSERT_TRUE(std::filesystem::exists(KREG_RUNNER)) << "build the runner target: " << KREG_RUNNER;
    ExecutorOptions options;
    options.runner_exe = KREG_RUNNER;
    Executor executor(options);
    const Record r = executor.run_job(strict_job(fixture("fixture_writes_far_past_c"), "fixture_writes_far_past_c"));
    executor.finish();
    EXPECT_EQ(r.status, RowStatus::crashed) << r.reason;
    EXPECT_EQ(r.signal.value_or(""), "SIGSEGV") << r.reason;
    EXPECT_NE(r.reason.find("kreg: the kernel wrote past the end of C (guard page at +6000 bytes)"), std::string::npos)
        << r.reason;
}

TEST(StrictCpuGuardBands, HonestKernelsLeaveThemIntact) {
    for (const char* name : {"cpu_naive", "cpu_blocked"}) {
        const Record r = run(strict_job(plugin(name), name));
        EXPECT_EQ(r.status, RowStatus::ok) << name << ": " << r.reason;
        EXPECT_EQ(extra_json(r)["anticheat"]["guard_band_elements"], 1024) << name;
        EXPECT_EQ(extra_json(r)["anticheat"]["guard_page_bytes"], 64 << 20)
            << name << ": max(64 MiB, C, 256 rows + 256 columns)";
    }
}

}  // namespace
}  // namespace kreg
