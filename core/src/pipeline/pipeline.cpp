#include "pipeline/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/operation_table.hpp"
#include "common/text.hpp"
#include "measure/anticheat.hpp"
#include "measure/sampler.hpp"
#include "measure/stats.hpp"
#include "ops/operation.hpp"
#include "ops/output_export.hpp"
#include "pipeline/call_watchdog.hpp"
#include "verify/output_fill.hpp"
#include "verify/random_fill.hpp"
#include "verify/verify_gemm.hpp"

namespace kreg {
namespace {

// settings.call_timeout_s: armed right before a call, disarmed once the wait for that call has returned
// (a CUDA launch returns at once; a kernel that never ends keeps the wait blocked until the watchdog
// ends the worker and the parent records a timeout). Disarmed on every way out by the destructor, so
// an early exit never leaves it armed for the next job.
class CallLimit {
public:
    explicit CallLimit(const Job& job)
        : seconds_(job.settings.call_timeout_s), what_("a call of " + job.kernel + " at " + to_string(job.shape)) {}
    ~CallLimit() { disarm(); }
    CallLimit(const CallLimit&) = delete;
    CallLimit& operator=(const CallLimit&) = delete;

    void arm() {
        if (seconds_) arm_call_watchdog(*seconds_, what_);
        armed_ = bool(seconds_);
    }
    void disarm() {
        if (armed_) disarm_call_watchdog();
        armed_ = false;
    }

private:
    std::optional<double> seconds_;
    std::string what_;
    bool armed_ = false;
};

uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// "(row, col)" of flat index `index` in a row-major matrix with n columns.
std::string position(size_t index, int64_t n) {
    return "(" + std::to_string(int64_t(index) / n) + ", " + std::to_string(int64_t(index) % n) + ")";
}

// Step 3 of the protocol (pipeline.hpp) on one call's C: "" if it passes, else the reason.
class CallScan {
public:
    CallScan(const OperationDef& op, const Shape& shape, double tolerance, uint64_t seed)
        : op_(op), shape_(shape), tolerance_(tolerance), seed_(seed), geometry_(op.geometry(shape)) {}

    // The elements call `number` is checked at: drawn from the job's verify seed and the call number, so
    // they differ from call to call and reproduce from run to run. A kernel that knows the seed could
    // predict them; grading does not rely on this check (strict runs verify every call in full).
    std::vector<size_t> elements(uint64_t number) const {
        uint64_t state = seed_ ^ (number * 0xd1b54a32d192ed03ULL);
        const uint64_t count = uint64_t(geometry_.c_count);
        std::vector<size_t> chosen;
        for (int i = 0; i < kSampledElements; ++i) chosen.push_back(size_t(splitmix64(state) % count));
        return chosen;
    }

    std::string judge(const OutputScan& scan, const OutputFill& fill, const std::vector<size_t>& elements,
                      const std::vector<float>& a, const std::vector<float>& b, double& worst) const {
        const int64_t n = geometry_.c_cols;
        const size_t total = geometry_.c_count;
        if (scan.unwritten > 0)
            return "unwritten element at " + position(scan.first_unwritten, n) + " (" + std::to_string(scan.unwritten) +
                   " of " + std::to_string(total) + " elements of C never written" +
                   // A finite fill proves only its values no result can have unwritten (output_fill.hpp).
                   (fill.finite ? ", counting the elements whose fill no result can equal)" : ")");
        // Exact operations copy A's NaN and Inf on purpose (plant_special_values); their samples are
        // compared bit for bit below instead.
        if (scan.non_finite > 0 && !op_.exact())
            // Its bits say where it came from, as far as they can (verify_gemm.hpp).
            return describe_non_finite(scan.first_non_finite_value, int64_t(scan.first_non_finite) / n,
                                       int64_t(scan.first_non_finite) % n) +
                   " (" + std::to_string(scan.non_finite) + " of " + std::to_string(total) +
                   " elements of C are NaN or Inf)";
        for (size_t s = 0; s < elements.size() && s < scan.samples.size(); ++s) {
            if (op_.exact()) {
                const float want = a[op_.exact_source(shape_, elements[s])];
                if (std::memcmp(&want, &scan.samples[s], sizeof want) != 0) {
                    worst = 1;
                    uint32_t got_bits, want_bits;
                    std::memcpy(&got_bits, &scan.samples[s], sizeof got_bits);
                    std::memcpy(&want_bits, &want, sizeof want_bits);
                    char bits[64];
                    std::snprintf(bits, sizeof bits, "bits 0x%08x, the exact result's 0x%08x", got_bits, want_bits);
                    return "element " + position(elements[s], n) + " differs from the exact result (" + bits + ")";
                }
                continue;
            }
            const auto [ref, magnitude] = expected_at(a, b, elements[s]);
            const double err = std::abs(double(scan.samples[s]) - ref) / std::max(magnitude, 1e-30);
            worst = std::max(worst, err);
            if (!(err <= tolerance_)) {
                char text[160];
                std::snprintf(text, sizeof text, "error %.2e at %s (sampled): got %.6g expected %.6g > tolerance %.0e",
                              err, position(elements[s], n).c_str(), double(scan.samples[s]), ref, tolerance_);
                return text;
            }
        }
        return "";
    }

    // A strict run's calls each have inputs of their own: the references computed so far are of the last.
    void forget_inputs() const { expected_.clear(); }

private:
    // The reference value of an element and its magnitude, computed once for the row's inputs (they are
    // compared after every checked call; a strict run's new inputs call forget_inputs). An output of one element
    // (a sum) costs a pass over all n inputs, and every call samples it: at n = 2^26 that was a second of harness work
    // per call.
    std::pair<double, double> expected_at(const std::vector<float>& a, const std::vector<float>& b,
                                          size_t element) const {
        if (const auto it = expected_.find(element); it != expected_.end()) return it->second;
        double magnitude = 0;
        const double ref = op_.expected(a.data(), b.data(), shape_, element, magnitude);
        return expected_.emplace(element, std::pair<double, double>{ref, magnitude}).first->second;
    }

    const OperationDef& op_;
    Shape shape_;
    double tolerance_;
    uint64_t seed_;
    OperandGeometry geometry_;
    mutable std::unordered_map<size_t, std::pair<double, double>> expected_;
};

// The first element of c that still holds the call's fill, as the row's reason; "" when there is none.
// Runs before the reference, so an unwritten element is named as such whatever the fill was.
std::string find_unwritten(const float* c, size_t count, const OutputFill& fill, int64_t n) {
    for (size_t i = 0; i < count; ++i) {
        uint32_t word;
        std::memcpy(&word, &c[i], sizeof word);
        if (still_holds_fill(fill, i, word))
            return "unwritten element at " + position(i, n) + ": " + fill_description(fill) +
                   " (never written, or C was read although beta = 0)";
    }
    return "";
}

// extra.variant: what a kernel that chooses per shape says it runs (ABI 1.2). The text is the plugin's claim,
// recorded as one printable line; a kernel that names nothing leaves it out, a failing description is noted.
void describe_variant(const OperationDef& op, const kreg_kernel_info& info, const Job& job, void* instance,
                      const CallOperands& operands, RecordExtras& extra) {
    char buffer[512] = {};
    const kreg_status status =
        op.describe_variant(info, instance, job.shape, job.dtype, operands, buffer, sizeof buffer);
    buffer[sizeof buffer - 1] = '\0';
    if (status == KREG_STATUS_UNSUPPORTED) return;
    const std::string text = printable_utf8(buffer, sizeof buffer);
    extra.variant =
        status == KREG_STATUS_OK ? text : std::string("not described: ") + kreg_status_name(status) + ": " + text;
}

// The first job of a process that times on a backend wanting it waits for the clocks (ClockSettle).
bool take_first_clock_settle() {
    static bool settled = false;
    return !std::exchange(settled, true);
}

// A and B, and the bands around C, after a checked call of a sweep (the first, every scanned and the last call;
// strict runs check them after every call): a kernel that writes into its inputs or just outside C fails wherever
// it does so, not only when graded.
void check_inputs_and_bands(MeasureBackend& backend, int set, const std::string& label) {
    if (const std::string change = backend.inputs_changed(set); !change.empty())
        throw StrictViolation{RowStatus::failed, label + ": " + change};
    if (const std::string oob = backend.guard_damage(set); !oob.empty())
        throw StrictViolation{RowStatus::failed, label + ": " + oob};
}

// One job through the protocol (pipeline.hpp): what its checked call, warm-ups and timed calls share, what is
// done before and after each call, and what the record gets at the end.
// The call's i-th size: the value of the operation's i-th shape key (common/operations.def), 0 past them.
int64_t size_of_call(const Job& job, std::size_t i) {
    const std::vector<int64_t> sizes = key_values(job.operation, job.shape);
    return i < sizes.size() ? sizes[i] : 0;
}

struct PipelineRun {
    PipelineRun(const Job& job, const LoadedKernel& kernel, MeasureBackend& backend, Record& record,
                CallChannel* channel)
        : job(job),
          kernel(kernel),
          backend(backend),
          record(record),
          channel(channel),
          settings(job.settings),
          info(*kernel.info),
          op(operation_def(job.operation)),
          geometry(op.geometry(job.shape)),
          m(size_of_call(job, 0)),
          n(size_of_call(job, 1)),
          k(size_of_call(job, 2)),
          strict(settings.strict || settings.checked_outside),
          check(strict || settings.verify),
          sets(strict ? kStrictBufferSets : 1),
          // Exact operations are compared bit for bit: their tolerance is 0.
          tolerance(op.exact() ? 0.0 : settings.tolerance.value_or(op.default_tolerance(job.shape, job.dtype))),
          verify_seed(job.seed ^ (job.id * 0x9e3779b97f4a7c15ULL)),
          scanner(op, job.shape, tolerance, verify_seed),
          limit(job) {}

    // The buffers and the first inputs, and what the record says of the kernel before any call.
    void set_up();
    // Outside the timed region, before every call.
    void prepare(const CallSite& site);
    // Full verification of the host copy c.
    void verify_full(const std::string& label, uint64_t seed);
    void check_inputs(const std::string& label) { check_inputs_and_bands(backend, set, label); }
    // Right after every call (and after the timer stopped): wait for it, then check what it left.
    void inspect(const CallSite& site, std::optional<double> measured_ms);
    // The checked call, then the sampler's warm-ups and timed calls; throws KernelFailed or StrictViolation.
    void run_calls();
    // The calls, and how the row ends when one of them fails.
    void run();
    // Timings, statistics and the sampling's evidence of a row whose calls all passed.
    void record_results();

    const Job& job;
    const LoadedKernel& kernel;
    MeasureBackend& backend;
    Record& record;
    CallChannel* channel;
    const RunSettings& settings;
    const kreg_kernel_info& info;
    const OperationDef& op;
    const OperandGeometry geometry;
    // model_global_bytes' m, n, k: the call's first three sizes (abi.h; GEMM's M, N, K, a transpose's M, N, 0,
    // M, N and the tile edge of a block transpose).
    const int64_t m, n, k;
    const bool strict;
    const bool check;
    const int sets;
    // Host side: the current call's inputs as the reference sees them, and a copy of its C.
    std::vector<float> a, b, c;
    CallOperands args;
    const double tolerance;
    const uint64_t verify_seed;
    const CallScan scanner;

    CallLimit limit;
    StrictEvidence evidence;
    uint64_t call_number = 0;  // 0: the checked call, then warm-ups, then timed calls
    int set = 0;
    CallSite current{CallSite::Role::checked, 0};
    int scanned_calls = 0;
    double sampled_worst = 0;
    // C's fill of the current call (verify/output_fill.hpp): from the checker's seed for the call when
    // there is a channel, else from entropy the kernel cannot have seen before the call.
    std::random_device fill_entropy;
    OutputFill fill;
    bool first_call_finite = false;
    uint64_t previous_call_seed = 0;  // checked outside: the seed the checker issued for the last call
    SamplingOutcome outcome;
};

void PipelineRun::set_up() {
    backend.allocate(job, sets, strict);
    a.resize(geometry.a_count);
    b.resize(geometry.b_count);
    c.resize(geometry.c_count);
    if (!strict) {
        // Two streams per job: A and B differ, and every job of a plan draws from its own pair; the same
        // on every backend, so a job's inputs do not depend on where it runs.
        fill_uniform(a.data(), a.size(), job.seed, 2 * job.id);
        fill_uniform(b.data(), b.size(), job.seed, 2 * job.id + 1);
        op.plant_special_values(a, job.seed ^ job.id);
        backend.fill_inputs(0, a, b);
    }
    args = backend.operands(0);
    backend.describe(record, args);
    describe_variant(op, info, job, kernel.instance, args, record.extra);
    if (info.model_global_bytes != nullptr) {
        // The SDK's trampoline answers a negative value when the author's model threw: no model then.
        const double model = info.model_global_bytes(m, n, k, static_cast<kreg_dtype>(job.dtype));
        if (std::isfinite(model) && model >= 0) record.extra.model_bytes = model;
    }
    if (check) record.tolerance = tolerance;
}

void PipelineRun::prepare(const CallSite& site) {
    current = site;
    std::optional<uint64_t> call_seed;
    // Checked outside, what does not depend on the call's inputs is done before its seed is asked for:
    // outside the grader's window, which then holds little more than the call (grade/timing_claims.hpp).
    // C's fill is then drawn from the previous call's seed (checked_fill_seed), which the checker knows too.
    const bool before_seed = channel != nullptr && !geometry.in_place;
    auto fill_c = [&](uint64_t fill_seed) {
        fill = backend.poison_output(set, call_output_fill(call_number, fill_seed, first_call_finite));
        if (call_number == 0) first_call_finite = fill.finite;
    };
    const uint64_t channel_fill_seed = checked_fill_seed(call_number, job.seed, previous_call_seed);
    if (before_seed) {
        set = int(call_number % uint64_t(sets));
        fill_c(channel_fill_seed);
        backend.before_call();
    }
    if (strict) {
        set = int(call_number % uint64_t(sets));
        if (channel != nullptr) {
            call_seed = channel->seed_for_call(call_number);
            fill_call_inputs(job, *call_seed, a.data(), b.data());
        } else {
            fill_uniform(a.data(), a.size(), job.seed, strict_input_stream(job.id, call_number, 0));
            fill_uniform(b.data(), b.size(), job.seed, strict_input_stream(job.id, call_number, 1));
            op.plant_special_values(a, job.seed ^ strict_input_stream(job.id, call_number, 0));
        }
        backend.fill_inputs(set, a, b);
        scanner.forget_inputs();
    }
    if (call_seed) previous_call_seed = *call_seed;
    if (!before_seed)
        fill_c(channel != nullptr ? channel_fill_seed : (uint64_t(fill_entropy()) << 32) ^ fill_entropy());
    if (site.role != CallSite::Role::checked && !settings.warm_cache) backend.flush_caches();
    backend.synchronize("preparing the " + site.label() + " of " + record.kernel, strict);
    args = backend.operands(set);
    if (strict && !before_seed) backend.before_call();
    limit.arm();
    if (channel != nullptr) channel->call_starts();
}

void PipelineRun::verify_full(const std::string& label, uint64_t seed) {
    if (!geometry.in_place)
        if (const std::string why = find_unwritten(c.data(), c.size(), fill, geometry.c_cols); !why.empty()) {
            if (strict) ++evidence.calls_verified;
            throw StrictViolation{RowStatus::wrong_result, label + ": " + why};
        }
    const VerifyResult v = op.verify(a.data(), b.data(), c.data(), job.shape, tolerance, seed);
    if (strict) ++evidence.calls_verified;
    if (std::isfinite(v.max_rel_err))
        record.max_rel_err = record.max_rel_err ? std::max(*record.max_rel_err, v.max_rel_err) : v.max_rel_err;
    if (v.sampled) record.extra.verify_sampled = true;
    if (!v.passed) throw StrictViolation{RowStatus::wrong_result, label + ": " + v.reason};
}

void PipelineRun::inspect(const CallSite& site, std::optional<double> measured_ms) {
    if (channel != nullptr) channel->call_returned();
    backend.synchronize("after the " + site.label() + " of " + record.kernel + (strict ? ", whole device" : ""),
                        strict);
    limit.disarm();
    const uint64_t number = call_number++;
    if (!strict) {
        if (site.role == CallSite::Role::checked) {
            if (check) {
                backend.copy_output(set, c.data());
                check_inputs(site.label());
                verify_full(site.label(), verify_seed);
            }
            return;
        }
        if (!check) return;
        const std::vector<size_t> elements = scanner.elements(number);
        const std::string why =
            scanner.judge(backend.scan_output(set, fill, elements), fill, elements, a, b, sampled_worst);
        check_inputs(site.label());
        ++scanned_calls;
        if (!why.empty()) throw StrictViolation{RowStatus::wrong_result, site.label() + ": " + why};
        return;
    }
    // Strict: C first (work finishing after the call returned is not seen), then everything else.
    backend.copy_output(set, c.data());
    ++evidence.calls;
    // The checker checks C, outside this process; its window on the call ends here, before the checks below.
    if (channel != nullptr) {
        channel->hand_over(number, c.data(), c.size(), measured_ms);
        ++evidence.calls_exported;
    }
    backend.after_call(evidence);
    check_inputs(site.label());
    if (channel != nullptr) return;
    verify_full(site.label(), verify_seed + number);
}

void PipelineRun::run_calls() {
    const CallSite checked{CallSite::Role::checked, 0};
    prepare(checked);
    backend.call(args);
    inspect(checked, std::nullopt);

    backend.before_sampling();
    SampleHooks hooks;
    hooks.before_call = [this](const CallSite& site) { prepare(site); };
    hooks.after_call = [&](const CallSite& site, double ms) {
        const bool timed = site.role == CallSite::Role::timed;
        if (timed && strict) backend.after_timed_call(ms, evidence);
        inspect(site, timed ? std::optional<double>(ms) : std::nullopt);
    };
    ClockSettle settle;
    settle.enabled = !strict && backend.wants_clock_settle() && take_first_clock_settle();
    Timer& timer = backend.timer(strict);
    record.samples_ms = sample(
        settings, timer, [&] { backend.call(args); }, hooks, settle, &outcome);
    if (!strict) {
        // Work the kernel hid on another stream is waited for (and its faults surface) before the
        // last output is read.
        current = CallSite{CallSite::Role::timed, int(record.samples_ms.size()) - 1};
        limit.arm();
        backend.synchronize("after the timed calls of " + record.kernel + ", whole device", true);
        limit.disarm();
        if (check) {
            backend.copy_output(set, c.data());
            check_inputs("last timed call");
            verify_full("last timed call", verify_seed);
        }
    }
}

void PipelineRun::run() {
    if (strict) backend.start_strict(evidence);
    try {
        run_calls();
    } catch (const KernelFailed& e) {
        if (strict) {
            evidence.failed_at = current.label();
            backend.end_strict();
            record.extra.anticheat = evidence.facts();
        }
        record.status = RowStatus::failed;
        record.reason = current.label() + ": " + e.message;
        return;
    } catch (const StrictViolation& v) {
        if (strict) {
            evidence.failed_at = current.label();
            backend.end_strict();
            record.extra.anticheat = evidence.facts();
        }
        record.status = v.status;
        record.reason = v.reason;
        record.samples_ms.clear();
        return;
    } catch (...) {
        if (strict) {
            backend.end_strict();
            record.extra.anticheat = evidence.facts();
        }
        throw;
    }
    if (strict) {
        backend.end_strict();
        record.extra.anticheat = evidence.facts();
        if (const std::string why = backend.timing_violation(evidence); !why.empty()) {
            record.status = RowStatus::failed;
            record.reason = why;
            return;
        }
    }
    record_results();
}

void PipelineRun::record_results() {
    backend.timing_facts(record);
    // Again after the calls: a kernel that chooses in its first calls (cuBLASLt's timed heuristic, issue 25) names
    // its choice only then. Not in strict runs, whose window on the plugin's code closed with end_strict.
    if (!strict) describe_variant(op, info, job, kernel.instance, args, record.extra);
    if (!strict && check)
        record.extra.call_checks =
            CallChecks{{"first call", "last timed call"}, scanned_calls, int(kSampledElements), sampled_worst};
    SamplingEvidence sampling;
    sampling.stop = outcome.stop;
    sampling.confidence = 0.95;
    if (outcome.interval.exists) sampling.relative_half_width = outcome.relative_half_width;
    const StoppingRule rule = StoppingRule::from(settings);
    if (rule.noise_target > 0) sampling.noise_target = rule.noise_target;
    if (rule.time_cap_s) sampling.time_cap_s = *rule.time_cap_s;
    if (outcome.min_span_s > 0) sampling.min_span_s = outcome.min_span_s;
    sampling.span_s = outcome.span_s;
    if (outcome.settle_calls > 0)
        sampling.clock_settle = ClockSettleFacts{outcome.settle_calls, outcome.settle_s, outcome.settled};
    record.extra.sampling = std::move(sampling);
    record.stats = compute_stats(record.samples_ms);
    // The operation's rate (operations.def): FLOPs per second, or for data movement the bytes that must move.
    if (record.stats->median_ms > 0)
        rate_of(record) = work_rate(job.operation, job.shape, job.dtype, record.stats->median_ms);
    record.status = RowStatus::ok;
    record.reason.clear();
}

}  // namespace

void run_pipeline(const Job& job, const LoadedKernel& kernel, MeasureBackend& backend, Record& record,
                  CallChannel* channel) {
    PipelineRun run(job, kernel, backend, record, channel);
    run.set_up();
    run.run();
}

}  // namespace kreg
