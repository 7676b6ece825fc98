// run_cpu_gemm_job: one job on a CPU kernel, from seeded inputs to a complete Record.
//
// Order matters: the first call is checked before anything is timed (a wrong kernel is not worth
// timing), every timed call gets a freshly poisoned C outside the timed region (so a call that writes
// nothing cannot reuse an earlier correct output), and the last timed output is checked again (a
// kernel that takes a shortcut only when called repeatedly must fail too).
//
// settings.strict (grading) replaces that loop with run_strict below: every call gets fresh inputs in
// a rotated buffer set, C is copied out the instant the call returns and verified, A and B are
// compared with what was written, and threads the call left running are counted (measure/anticheat.hpp).
// C lies against inaccessible guard regions (measure/guard_pages.hpp): a write past its end kills the
// worker at the instruction, with a line on stderr that says where. settings.checked_outside makes the
// same loop take each call's input seed from the CallChannel and hand each call's C to it, instead of
// verifying here.
#include "worker/job_runner.hpp"

#include "measure/anticheat.hpp"
#include "measure/guard_pages.hpp"
#include "measure/output_export.hpp"
#include "measure/sampler.hpp"
#include "measure/stats.hpp"
#include "verify/random_fill.hpp"
#include "verify/verify_gemm.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace kreg {
namespace {

// A non-OK status from the kernel, carried out of the sampling loop.
struct KernelFailed {
    std::string message;
};

// Strict mode's host memory: kStrictBufferSets sets of operands that calls rotate through, the pristine
// inputs of the current call (what A and B must still hold afterwards, and what the reference uses),
// and the copy of C taken the moment a call returns.
// Each C starts after a band of at least kGuardFloats guard words (measure/anticheat.hpp) that starts
// after an inaccessible region, and ends where the next inaccessible region begins: a small underrun
// is reported by the band, anything else faults (measure/guard_pages.hpp).
constexpr size_t kGuardFloats = 1024;

struct StrictOperands {
    struct Set {
        std::vector<float> a, b;
        GuardedFloats c;
    };
    std::vector<Set> sets;
    std::vector<float> a_ref, b_ref, c_snapshot;
    size_t guard_bytes = 0;

    explicit StrictOperands(const Shape& shape) : guard_bytes(tile_guard_bytes(shape.n)) {
        const int64_t m = shape.m, n = shape.n, k = shape.k;
        sets.reserve(size_t(kStrictBufferSets));
        for (int i = 0; i < kStrictBufferSets; ++i)
            sets.push_back({std::vector<float>(size_t(m * k)), std::vector<float>(size_t(k * n)),
                            GuardedFloats(size_t(m * n), kGuardFloats, guard_bytes)});
        a_ref.resize(size_t(m * k));
        b_ref.resize(size_t(k * n));
        c_snapshot.resize(size_t(m * n));
    }
    std::vector<const GuardedFloats*> outputs() const {
        std::vector<const GuardedFloats*> all;
        for (const Set& set : sets) all.push_back(&set.c);
        return all;
    }
};

// The strict calls of one job; leaves the outcome in record and what it saw in evidence. With a channel
// (settings.checked_outside) the inputs come from its seeds and the outputs go to it.
void run_strict_calls(const Job& job, const kreg_kernel_info& info, void* instance, StrictOperands& ops, Record& record,
                      StrictEvidence& evidence, CallChannel* channel) {
    const int64_t m = job.shape.m, n = job.shape.n, k = job.shape.k;
    // Identical for every call but for the three pointers: the plugin cannot tell the calls apart.
    kreg_gemm_args args = gemm_args(job.shape, KREG_DTYPE_FP32);
    auto call = [&] {
        if (std::string failure = call_run_gemm(info, instance, args); !failure.empty()) throw KernelFailed{std::move(failure)};
    };

    // Grading always verifies, whatever settings.verify says.
    const double tolerance = job.settings.tolerance.value_or(default_tolerance(job.dtype));
    record.tolerance = tolerance;
    const uint64_t verify_seed = job.seed ^ (job.id * 0x9e3779b97f4a7c15ULL);

    uint64_t call_number = 0;  // 0: the checked call, then warm-ups, then timed calls
    CallSite current{CallSite::Role::checked, 0};
    StrictOperands::Set* set = nullptr;
    int threads_before = -1;

    // Outside the timed region: fresh A and B (a stream no other call draws, or the channel's seed for
    // this call) into the next buffer set, C poisoned, so neither a cache keyed on pointers nor one keyed
    // on contents can answer the call.
    auto prepare = [&](const CallSite& site) {
        current = site;
        set = &ops.sets[size_t(call_number % kStrictBufferSets)];
        if (channel != nullptr) {
            fill_call_inputs(job, channel->seed_for_call(call_number), ops.a_ref.data(), ops.b_ref.data());
        } else {
            fill_uniform(ops.a_ref.data(), ops.a_ref.size(), job.seed, strict_input_stream(job.id, call_number, 0));
            fill_uniform(ops.b_ref.data(), ops.b_ref.size(), job.seed, strict_input_stream(job.id, call_number, 1));
        }
        std::memcpy(set->a.data(), ops.a_ref.data(), ops.a_ref.size() * sizeof(float));
        std::memcpy(set->b.data(), ops.b_ref.data(), ops.b_ref.size() * sizeof(float));
        set->c.fill_band();
        poison_nan(set->c.data(), set->c.size());
        args.a = set->a.data();
        args.b = set->b.data();
        args.c = set->c.data();
        threads_before = count_threads();
    };
    // Right after the call: C is copied before anything else, so work a thread finishes after the
    // call returned is not seen; then the inputs and the band are compared, and the copy verified or
    // handed over (with measured_ms, the sample of a timed call).
    auto inspect = [&](const CallSite& site, std::optional<double> measured_ms) {
        std::memcpy(ops.c_snapshot.data(), set->c.data(), ops.c_snapshot.size() * sizeof(float));
        const int threads_after = count_threads();
        const uint64_t number = call_number++;
        ++evidence.calls;
        if (threads_before >= 0 && threads_after > threads_before) {
            evidence.threads_left_running = true;
            evidence.max_threads_left = std::max(evidence.max_threads_left, threads_after - threads_before);
        }
        const struct {
            const char* name;
            const std::vector<float>& expected;
            const std::vector<float>& got;
            int64_t cols;
        } inputs[] = {{"A", ops.a_ref, set->a, k}, {"B", ops.b_ref, set->b, n}};
        for (const auto& input : inputs) {
            const std::string change = describe_input_change(input.name, input.expected.data(), input.got.data(),
                                                             input.expected.size(), sizeof(float), input.cols);
            if (!change.empty()) throw StrictViolation{RowStatus::failed, site.label() + ": " + change};
        }
        if (const std::string oob = describe_guard_damage(set->c.band(), set->c.band_elements(), nullptr, 0); !oob.empty())
            throw StrictViolation{RowStatus::failed, site.label() + ": " + oob};
        if (channel != nullptr) {  // the checker checks C, outside this process
            channel->hand_over(number, ops.c_snapshot.data(), ops.c_snapshot.size(), measured_ms);
            ++evidence.calls_exported;
            return;
        }
        const VerifyResult v = verify_gemm(ops.a_ref.data(), ops.b_ref.data(), ops.c_snapshot.data(), m, n, k, k, n, n,
                                           tolerance, verify_seed + number);
        ++evidence.calls_verified;
        if (std::isfinite(v.max_rel_err))
            record.max_rel_err = record.max_rel_err ? std::max(*record.max_rel_err, v.max_rel_err) : v.max_rel_err;
        if (v.sampled) record.extra["verify_sampled"] = true;
        if (!v.passed) throw StrictViolation{RowStatus::wrong_result, site.label() + ": " + v.reason};
    };

    try {
        const CallSite checked{CallSite::Role::checked, 0};
        prepare(checked);
        call();
        inspect(checked, std::nullopt);

        SampleHooks hooks;
        hooks.before_call = prepare;
        hooks.after_call = [&](const CallSite& site, double ms) {
            inspect(site, site.role == CallSite::Role::timed ? std::optional<double>(ms) : std::nullopt);
        };
        HostTimer timer;
        record.samples_ms = sample(job.settings, timer, call, hooks);
    } catch (const KernelFailed& e) {
        evidence.failed_at = current.label();
        record.status = RowStatus::failed;
        record.reason = current.label() + ": " + e.message;
        return;
    } catch (const StrictViolation& v) {
        evidence.failed_at = current.label();
        record.status = v.status;
        record.reason = v.reason;
        return;
    }

    record.stats = compute_stats(record.samples_ms);
    if (record.stats->median_ms > 0) record.gflops = job.shape.flops() / (record.stats->median_ms * 1e-3) / 1e9;
    if (info.model_global_bytes != nullptr) record.extra["model_bytes"] = info.model_global_bytes(m, n, k, KREG_DTYPE_FP32);
    record.status = RowStatus::ok;
    record.reason.clear();
}

// settings.strict: the grading run of one job (pre-checks already passed).
Record run_strict(const Job& job, const kreg_kernel_info& info, void* instance, Record record, CallChannel* channel) {
    std::optional<StrictOperands> ops;
    try {
        ops.emplace(job.shape);
    } catch (const std::bad_alloc&) {
        record.reason = "out of host memory for the strict operands of " + to_string(job.shape);
        return record;
    }
    StrictEvidence evidence;
    evidence.threads_left_running = false;
    evidence.guard_band_elements = kGuardFloats;
    evidence.guard_page_bytes = ops->guard_bytes;
    const int threads_at_start = count_threads();
    {
        // Faults in the guard regions are explained while the kernel can make them, and until the
        // threads it left behind are gone; not once the regions are unmapped (a fault there would be
        // someone else's).
        const GuardPageWatch watch(ops->outputs());
        run_strict_calls(job, info, instance, *ops, record, evidence, channel);
        // A thread the kernel left running may still write into these buffers: give it a moment to end
        // before they are freed (a legitimate thread pool just outlasts the wait).
        if (threads_at_start >= 0 && count_threads() > threads_at_start)
            wait_for_threads(threads_at_start, std::chrono::milliseconds(500));
    }
    ops.reset();
    record.extra["anticheat"] = evidence.to_json();
    if (record.status != RowStatus::ok) {
        record.stats.reset();
        record.gflops.reset();
    }
    return record;
}

}  // namespace

Record run_cpu_gemm_job(const Job& job, const LoadedKernel& kernel, CallChannel* channel) {
    JobStart start = start_job(job, kernel, Backend::cpu, "host");
    if (!start.usable) return start.record;
    Record record = std::move(start.record);
    const kreg_kernel_info* info = kernel.info;
    const Shape shape = job.shape;
    if (job.dtype != DType::fp32) {
        record.status = RowStatus::skipped;
        record.reason = "the CPU runner only runs fp32; " + std::string(to_string(job.dtype)) + " was requested";
        return record;
    }

    if (job.settings.checked_outside && channel == nullptr) {
        record.reason = "checked_outside needs a channel";
        return record;
    }
    if (job.settings.strict || job.settings.checked_outside)
        return run_strict(job, *info, kernel.instance, std::move(record), job.settings.checked_outside ? channel : nullptr);

    const int64_t m = shape.m, n = shape.n, k = shape.k;
    std::vector<float> a, b, c;
    try {
        a.resize(size_t(m * k));
        b.resize(size_t(k * n));
        c.resize(size_t(m * n));
    } catch (const std::bad_alloc&) {
        record.reason = "out of host memory for the operands of " + to_string(shape);
        return record;
    }
    // Two streams per job: A and B differ, and every job of a plan draws from its own pair.
    fill_uniform(a.data(), a.size(), job.seed, 2 * job.id);
    fill_uniform(b.data(), b.size(), job.seed, 2 * job.id + 1);
    poison_nan(c.data(), c.size());

    kreg_gemm_args args = gemm_args(shape, KREG_DTYPE_FP32);
    args.a = a.data();
    args.b = b.data();
    args.c = c.data();
    auto call = [&] {
        if (std::string failure = call_run_gemm(*info, kernel.instance, args); !failure.empty())
            throw KernelFailed{std::move(failure)};
    };

    const double tolerance = job.settings.tolerance.value_or(default_tolerance(job.dtype));
    const uint64_t verify_seed = job.seed ^ (job.id * 0x9e3779b97f4a7c15ULL);
    auto check = [&](const char* when) {
        const VerifyResult v = verify_gemm(a.data(), b.data(), c.data(), m, n, k, k, n, n, tolerance, verify_seed);
        if (std::isfinite(v.max_rel_err)) {
            record.max_rel_err = record.max_rel_err ? std::max(*record.max_rel_err, v.max_rel_err) : v.max_rel_err;
        }
        if (!v.passed) {
            record.status = RowStatus::wrong_result;
            record.reason = std::string(when) + ": " + v.reason;
        }
        return v.passed;
    };

    try {
        call();
    } catch (const KernelFailed& e) {
        record.reason = e.message;
        return record;
    }
    if (job.settings.verify) {
        record.tolerance = tolerance;
        if (!check("first call")) return record;
    }

    SampleHooks hooks;
    hooks.before_each = [&] { poison_nan(c.data(), c.size()); };
    HostTimer timer;
    try {
        record.samples_ms = sample(job.settings, timer, call, hooks);
    } catch (const KernelFailed& e) {
        record.reason = e.message + " (while timing)";
        return record;
    }
    if (job.settings.verify && !check("last timed call")) return record;

    record.stats = compute_stats(record.samples_ms);
    if (record.stats->median_ms > 0) record.gflops = shape.flops() / (record.stats->median_ms * 1e-3) / 1e9;
    if (info->model_global_bytes != nullptr) {
        record.extra["model_bytes"] = info->model_global_bytes(m, n, k, KREG_DTYPE_FP32);
    }
    record.status = RowStatus::ok;
    record.reason.clear();
    return record;
}

}  // namespace kreg
