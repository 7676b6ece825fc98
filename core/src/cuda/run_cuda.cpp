// run_cuda_gemm_job: one job on a CUDA kernel, from seeded inputs to a complete Record.
//
// The same order as the CPU runner (worker/run_cpu.cpp): one checked call verified before anything is
// timed; every timed launch gets a freshly poisoned C (and, unless warm_cache, a flushed L2) outside
// the timed region; the last timed output is verified again. What is CUDA-specific:
//   - the harness owns the stream (non-blocking) and every buffer; RAII frees them on every path;
//   - a kernel fault is a sticky error that ruins the context: it becomes WorkerFatal, the worker
//     reports the row as crashed and exits; any other CUDA error fails the row only;
//   - after the timed loop the whole device is synchronized, so work a kernel hid on another stream
//     is waited for (and its faults surface) before the output is checked;
//   - the reference is the fp64 one of verify_gemm (full up to 2^31 multiply-adds, sampled above), on
//     the inputs exactly as the kernel sees them: bf16/fp16 operands are rounded on the host first.
// settings.strict (grading) runs run_strict instead of that loop: fresh inputs in a rotated buffer set
// before every call, a device-wide wait and a check of C, A, B and the guard bands around C after every
// call, and each timed call cross-checked against the host clock (measure/anticheat.hpp).
// settings.checked_outside: the same loop, with each call's input seed taken from the CallChannel and
// each call's C (copied back after the device-wide wait) handed to it instead of verified here.
// settings.call_timeout_s limits each call from its launch until the wait for it returns (CallLimit).
#include "worker/job_runner.hpp"

#include "cuda/cuda_check.hpp"
#include "cuda/event_timer.hpp"
#include "cuda/host_convert.hpp"
#include "cuda/resources.hpp"
#include "measure/anticheat.hpp"
#include "measure/output_export.hpp"
#include "measure/sampler.hpp"
#include "measure/stats.hpp"
#include "verify/random_fill.hpp"
#include "verify/verify_gemm.hpp"
#include "worker/call_watchdog.hpp"

#include <cuda.h>  // types of cuMemsetD32Async only; the function is fetched through the runtime
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX: ranges for --profile

#include <algorithm>
#include <functional>
#include <cmath>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace kreg {
namespace {

// A failure of this row only (kernel status, non-sticky CUDA error), carried out of the sampling loop.
struct KernelFailed {
    std::string message;
};

// Turns the error a wait returned (or a launch error the kernel left unchecked) into the row's end:
// sticky -> WorkerFatal (the context is gone), anything else -> KernelFailed (this row only).
void raise_pending(cudaError_t waited, const std::string& when) {
    const cudaError_t last = cudaGetLastError();  // also clears a non-sticky launch error
    const cudaError_t e = waited != cudaSuccess ? waited : last;
    if (e == cudaSuccess) return;
    const std::string message = cuda_error_text(e) + " (" + when + ")";
    if (is_sticky(e)) throw WorkerFatal(message);
    throw KernelFailed{message};
}

// Waits for everything queued on the harness stream and surfaces what the kernel left behind.
void settle_stream(cudaStream_t stream, const std::string& when) { raise_pending(cudaStreamSynchronize(stream), when); }

// Waits for the whole device: work a kernel hid on another stream is waited for too.
void settle_device(const std::string& when) { raise_pending(cudaDeviceSynchronize(), when); }

// Writes the project's poison NaN (kPoisonBits) over count floats on stream, so verification can tell
// "never written" from "computed NaN". cuMemsetD32Async is reached through the runtime's driver entry
// point (no link against libcuda); if that fails, an all-ones byte memset (also a NaN) does instead.
using MemsetD32AsyncFn = CUresult (*)(CUdeviceptr, unsigned int, size_t, CUstream);
MemsetD32AsyncFn memset_d32_async() {
    static const MemsetD32AsyncFn fn = [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult query{};
        if (cudaGetDriverEntryPointByVersion("cuMemsetD32Async", &p, 12000, cudaEnableDefault, &query) != cudaSuccess ||
            query != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            return MemsetD32AsyncFn(nullptr);
        }
        return reinterpret_cast<MemsetD32AsyncFn>(p);
    }();
    return fn;
}

void poison_device(float* data, size_t count, cudaStream_t stream) {
    if (const MemsetD32AsyncFn fn = memset_d32_async()) {
        const CUresult r = fn(reinterpret_cast<CUdeviceptr>(data), kPoisonBits, count, stream);
        if (r == CUDA_SUCCESS) return;
        // Driver and runtime error codes coincide for the errors that matter here (700-series faults).
        const cudaError_t e = static_cast<cudaError_t>(r);
        if (is_sticky(e)) throw CudaError(e, cuda_error_text(e) + "; from cuMemsetD32Async (poisoning C)");
    }
    KREG_RUNNER_CUDA_CHECK(cudaMemsetAsync(data, 0xFF, count * sizeof(float), stream));
}


// settings.call_timeout_s on a CUDA kernel. A launch returns at once, so the limit is armed before a
// launch and disarmed once the wait for that launch has returned; a kernel that never ends keeps the
// wait blocked until the watchdog ends the worker (worker/call_watchdog.hpp), and the parent records a
// timeout. Disarmed on every way out of the job by the destructor, so an early exit never leaves it
// armed for the next job.
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

size_t element_bytes(DType dtype) { return dtype == DType::bf16 || dtype == DType::fp16 ? 2 : 4; }

// Uploads host fp32 operand values as the dtype's device representation; for 16-bit types the host
// values are rounded in place to what the kernel will see.
DeviceBuffer upload_operand(std::vector<float>& host, DType dtype, cudaStream_t stream) {
    DeviceBuffer device(host.size() * element_bytes(dtype));
    if (dtype == DType::bf16 || dtype == DType::fp16) {
        const std::vector<uint16_t> bits =
            dtype == DType::bf16 ? round_to_bf16(host.data(), host.size()) : round_to_fp16(host.data(), host.size());
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(device.get(), bits.data(), device.bytes(), cudaMemcpyHostToDevice, stream));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream));  // bits dies at return
    } else {
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(device.get(), host.data(), device.bytes(), cudaMemcpyHostToDevice, stream));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    return device;
}

// {"launch": {...}, "attributes": {...}} from the kernel's describe_launch and cudaFuncGetAttributes.
// Informational: a kernel that cannot describe itself still runs; the reason is recorded instead.
void describe_launch(const kreg_kernel_info& info, void* instance, const kreg_gemm_args& args, nlohmann::json& extra) {
    if (info.describe_launch == nullptr) return;
    kreg_launch_info launch{};
    launch.struct_size = sizeof(kreg_launch_info);
    char error[512] = {};
    const kreg_status status = info.describe_launch(instance, &args, &launch, error, sizeof error);
    error[sizeof error - 1] = '\0';
    if (status != KREG_STATUS_OK) {
        if (status != KREG_STATUS_UNSUPPORTED) extra["launch_error"] = std::string(status_name(status)) + ": " + error;
        return;
    }
    extra["launch"] = {{"grid", {launch.grid[0], launch.grid[1], launch.grid[2]}},
                       {"block", {launch.block[0], launch.block[1], launch.block[2]}},
                       {"dynamic_smem", launch.dynamic_shared_bytes}};
    if (launch.device_function == nullptr) return;
    cudaFuncAttributes attr{};
    const cudaError_t e = cudaFuncGetAttributes(&attr, launch.device_function);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (is_sticky(e)) throw CudaError(e, cuda_error_text(e) + "; from cudaFuncGetAttributes");
        extra["attributes_error"] = cuda_error_text(e);
        return;
    }
    extra["attributes"] = {{"registers", attr.numRegs},
                           {"static_shared_bytes", attr.sharedSizeBytes},
                           {"max_dynamic_shared_bytes", attr.maxDynamicSharedSizeBytes},
                           {"local_bytes", attr.localSizeBytes},
                           {"max_threads_per_block", attr.maxThreadsPerBlock},
                           {"ptx_version", attr.ptxVersion},
                           {"binary_version", attr.binaryVersion}};
}

// One call of the plugin's run_gemm. A non-OK status fails the row, or ends the worker if the
// kernel's fault broke the context.
void call_kernel(const kreg_kernel_info& info, void* instance, const kreg_gemm_args& args, cudaStream_t s,
                 const std::string& who) {
    if (const std::string message = call_run_gemm(info, instance, args); !message.empty()) {
        // A kernel that reports a fault it caught (an illegal address, say) still leaves the
        // context broken: that is the worker's end, not only this row's.
        const cudaError_t e = cudaStreamSynchronize(s);
        (void)cudaGetLastError();
        if (is_sticky(e)) throw WorkerFatal(cuda_error_text(e) + " (" + who + ": " + message + ")");
        throw KernelFailed{message};
    }
}

// host fp32 operand values -> the bytes the kernel gets for dtype. 16-bit types round `values` in
// place, so the reference sees what the kernel sees.
void to_device_bytes(std::vector<float>& values, DType dtype, std::vector<unsigned char>& bytes) {
    if (dtype == DType::bf16 || dtype == DType::fp16) {
        const std::vector<uint16_t> bits = dtype == DType::bf16 ? round_to_bf16(values.data(), values.size())
                                                                : round_to_fp16(values.data(), values.size());
        bytes.resize(bits.size() * sizeof(uint16_t));
        std::memcpy(bytes.data(), bits.data(), bytes.size());
    } else {
        bytes.resize(values.size() * sizeof(float));
        std::memcpy(bytes.data(), values.data(), bytes.size());
    }
}

// settings.strict: the grading run of one job on the harness stream s. Leaves the outcome in record;
// what it saw goes to evidence. Throws like run_checked (CudaError, WorkerFatal). With a channel
// (settings.checked_outside) the inputs come from its seeds and the outputs go to it.
void run_strict_calls(const Job& job, const LoadedKernel& kernel, Record& record, cudaStream_t s, int l2_bytes,
                      StrictEvidence& evidence, CallChannel* channel) {
    const kreg_kernel_info& info = *kernel.info;
    const RunSettings& settings = job.settings;
    const int64_t m = job.shape.m, n = job.shape.n, k = job.shape.k;
    const std::string who = record.kernel;
    const size_t esize = element_bytes(job.dtype);

    // kStrictBufferSets device sets, so no call gets the previous call's pointers. Each C lies between
    // two guard bands, written once here: a write into one ends the job, so they never need rewriting.
    // Each band is tile_guard_bytes(ldc) long (at least 1 MiB): an unpredicated 256 x 256 tile written
    // past C's last row or last column lands in it rather than in some other allocation.
    const size_t guard_floats = tile_guard_bytes(n) / sizeof(float);
    struct DeviceOperands {
        DeviceBuffer a, b, c_with_guards;
        size_t guard_floats;
        float* c() const { return c_with_guards.as<float>() + guard_floats; }
        float* guard_after(size_t c_elements) const { return c() + c_elements; }
    };
    const size_t c_elements = size_t(m * n);
    const std::vector<uint32_t> guard_words(guard_floats, kGuardBits);
    std::vector<uint32_t> guard_before(guard_floats), guard_after(guard_floats);
    const size_t guard_bytes = guard_floats * sizeof(uint32_t);
    std::vector<DeviceOperands> sets;
    for (int i = 0; i < kStrictBufferSets; ++i) {
        sets.push_back({DeviceBuffer(size_t(m * k) * esize), DeviceBuffer(size_t(k * n) * esize),
                        DeviceBuffer((c_elements + 2 * guard_floats) * sizeof(float)), guard_floats});
        const DeviceOperands& set = sets.back();
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(set.c_with_guards.get(), guard_words.data(), guard_bytes, cudaMemcpyHostToDevice, s));
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(set.guard_after(c_elements), guard_words.data(), guard_bytes, cudaMemcpyHostToDevice, s));
    }
    KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(s));  // guard_words is read by the copies
    evidence.guard_band_elements = guard_floats;
    CallLimit limit(job);
    const DeviceBuffer flush(settings.warm_cache ? 0 : std::max<size_t>(2 * size_t(l2_bytes), size_t(1) << 20));
    // Host side: this call's inputs as fp32 (the reference's view) and as uploaded, and what came back.
    std::vector<float> a_ref(size_t(m * k)), b_ref(size_t(k * n)), c_out(size_t(m * n));
    std::vector<unsigned char> a_bytes, b_bytes, a_back(a_ref.size() * esize), b_back(b_ref.size() * esize);

    // Identical for every call but for the three pointers: the plugin cannot tell the calls apart.
    kreg_gemm_args args = gemm_args(job.shape, static_cast<kreg_dtype>(job.dtype));
    args.a = sets[0].a.get();
    args.b = sets[0].b.get();
    args.c = sets[0].c();
    args.stream = s;

    describe_launch(info, kernel.instance, args, record.extra);
    if (info.model_global_bytes != nullptr) record.extra["model_bytes"] = info.model_global_bytes(m, n, k, args.dtype);

    // Grading always verifies, whatever settings.verify says.
    const double tolerance = settings.tolerance.value_or(default_tolerance(job.dtype));
    record.tolerance = tolerance;
    const uint64_t verify_seed = job.seed ^ (job.id * 0x9e3779b97f4a7c15ULL);

    uint64_t call_number = 0;  // 0: the checked call, then warm-ups, then timed calls
    CallSite current{CallSite::Role::checked, 0};
    DeviceOperands* set = nullptr;
    unsigned char flush_value = 0;

    // Outside the timed region: fresh A and B (a stream no other call draws, or the channel's seed for
    // this call) uploaded into the next buffer set, C poisoned, L2 flushed (sampled calls, unless
    // warm_cache), then the device idle.
    auto prepare = [&](const CallSite& site) {
        current = site;
        set = &sets[size_t(call_number % kStrictBufferSets)];
        if (channel != nullptr) {
            fill_call_inputs(job, channel->seed_for_call(call_number), a_ref.data(), b_ref.data());
        } else {
            fill_uniform(a_ref.data(), a_ref.size(), job.seed, strict_input_stream(job.id, call_number, 0));
            fill_uniform(b_ref.data(), b_ref.size(), job.seed, strict_input_stream(job.id, call_number, 1));
        }
        to_device_bytes(a_ref, job.dtype, a_bytes);
        to_device_bytes(b_ref, job.dtype, b_bytes);
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(set->a.get(), a_bytes.data(), a_bytes.size(), cudaMemcpyHostToDevice, s));
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(set->b.get(), b_bytes.data(), b_bytes.size(), cudaMemcpyHostToDevice, s));
        poison_device(set->c(), c_out.size(), s);
        if (site.role != CallSite::Role::checked && !settings.warm_cache)
            KREG_RUNNER_CUDA_CHECK(cudaMemsetAsync(flush.get(), flush_value++, flush.bytes(), s));
        settle_device("preparing the " + site.label() + " of " + who);
        args.a = set->a.get();
        args.b = set->b.get();
        args.c = set->c();
        limit.arm();  // the call's limit runs from here to the end of the wait in inspect
    };
    // After the call and a device-wide wait (so hidden work is finished and its faults surface): the
    // inputs must be as uploaded, and C must match the reference on them, or go to the channel (with
    // measured_ms, the sample of a timed call).
    auto inspect = [&](const CallSite& site, std::optional<double> measured_ms) {
        settle_device("after the " + site.label() + " of " + who + ", whole device");
        limit.disarm();
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(c_out.data(), set->c(), c_out.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(guard_before.data(), set->c_with_guards.get(), guard_bytes, cudaMemcpyDeviceToHost, s));
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(guard_after.data(), set->guard_after(c_elements), guard_bytes, cudaMemcpyDeviceToHost, s));
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(a_back.data(), set->a.get(), set->a.bytes(), cudaMemcpyDeviceToHost, s));
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(b_back.data(), set->b.get(), set->b.bytes(), cudaMemcpyDeviceToHost, s));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(s));
        const uint64_t number = call_number++;
        ++evidence.calls;
        const struct {
            const char* name;
            const std::vector<unsigned char>& expected;
            const std::vector<unsigned char>& got;
            int64_t cols;
        } inputs[] = {{"A", a_bytes, a_back, k}, {"B", b_bytes, b_back, n}};
        for (const auto& input : inputs) {
            const std::string change = describe_input_change(input.name, input.expected.data(), input.got.data(),
                                                             input.expected.size() / esize, esize, input.cols);
            if (!change.empty()) throw StrictViolation{RowStatus::failed, site.label() + ": " + change};
        }
        if (const std::string oob = describe_guard_damage(guard_before.data(), guard_after.data(), guard_floats);
            !oob.empty())
            throw StrictViolation{RowStatus::failed, site.label() + ": " + oob};
        if (channel != nullptr) {  // the checker checks C, outside this process
            channel->hand_over(number, c_out.data(), c_out.size(), measured_ms);
            ++evidence.calls_exported;
            return;
        }
        const VerifyResult v =
            verify_gemm(a_ref.data(), b_ref.data(), c_out.data(), m, n, k, k, n, n, tolerance, verify_seed + number);
        ++evidence.calls_verified;
        if (std::isfinite(v.max_rel_err))
            record.max_rel_err = record.max_rel_err ? std::max(*record.max_rel_err, v.max_rel_err) : v.max_rel_err;
        if (v.sampled) record.extra["verify_sampled"] = true;
        if (!v.passed) throw StrictViolation{RowStatus::wrong_result, site.label() + ": " + v.reason};
    };
    auto call = [&] { call_kernel(info, kernel.instance, args, s, who); };

    evidence.device_wide_sync = true;
    evidence.timing.emplace();
    try {
        const CallSite checked{CallSite::Role::checked, 0};
        prepare(checked);
        call();
        inspect(checked, std::nullopt);

        // Persisting L2 lines an earlier job set aside would make this one's inputs look cached.
        const cudaError_t reset = cudaCtxResetPersistingL2Cache();
        if (reset != cudaSuccess && reset != cudaErrorNotSupported) KREG_RUNNER_CUDA_CHECK(reset);
        (void)cudaGetLastError();

        CudaEventTimer timer(s, CudaEventTimer::Wait::device);
        SampleHooks hooks;
        hooks.before_call = prepare;
        hooks.after_call = [&](const CallSite& site, double ms) {
            const bool timed = site.role == CallSite::Role::timed;
            if (timed) evidence.timing->add(ms, timer.last_wall_ms());
            inspect(site, timed ? std::optional<double>(ms) : std::nullopt);
        };
        const std::function<void()> timed_call = settings.profile ? std::function<void()>([&] {
            nvtxRangePushA(job.kernel.c_str());
            call();
            nvtxRangePop();
        })
                                                                  : std::function<void()>(call);
        record.samples_ms = sample(settings, timer, timed_call, hooks);
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
    record.extra["warm_cache"] = settings.warm_cache;
    if (!settings.warm_cache) record.extra["l2_flush_bytes"] = flush.bytes();
    if (evidence.timing->escaped()) {
        record.status = RowStatus::failed;
        record.reason = evidence.timing->reason();
        return;
    }
    record.stats = compute_stats(record.samples_ms);
    if (record.stats->median_ms > 0) record.gflops = job.shape.flops() / (record.stats->median_ms * 1e-3) / 1e9;
    record.status = RowStatus::ok;
    record.reason.clear();
}

// settings.strict: run_strict_calls, with its evidence in extra["anticheat"] on every way out.
void run_strict(const Job& job, const LoadedKernel& kernel, Record& record, cudaStream_t s, int l2_bytes,
                CallChannel* channel) {
    StrictEvidence evidence;
    try {
        run_strict_calls(job, kernel, record, s, l2_bytes, evidence, channel);
    } catch (...) {
        record.extra["anticheat"] = evidence.to_json();
        throw;
    }
    record.extra["anticheat"] = evidence.to_json();
}

// Everything after the pre-checks; throws CudaError / CublasError / KernelFailed / WorkerFatal.
void run_checked(const Job& job, const LoadedKernel& kernel, Record& record, CallChannel* channel) {
    const kreg_kernel_info& info = *kernel.info;
    const RunSettings& settings = job.settings;
    const int64_t m = job.shape.m, n = job.shape.n, k = job.shape.k;
    const std::string who = record.kernel;

    KREG_RUNNER_CUDA_CHECK(cudaSetDevice(settings.device));
    record.extra["device"] = settings.device;
    int l2_bytes = 0;
    KREG_RUNNER_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, settings.device));

    Stream stream;
    const cudaStream_t s = stream.get();
    if (settings.strict || settings.checked_outside) {
        run_strict(job, kernel, record, s, l2_bytes, settings.checked_outside ? channel : nullptr);
        return;
    }

    // Inputs: the same streams of the same generator as the CPU runner, so a job's A and B do not depend
    // on the backend it runs on.
    std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
    fill_uniform(a.data(), a.size(), job.seed, 2 * job.id);
    fill_uniform(b.data(), b.size(), job.seed, 2 * job.id + 1);
    const DeviceBuffer da = upload_operand(a, job.dtype, s);
    const DeviceBuffer db = upload_operand(b, job.dtype, s);
    const DeviceBuffer dc(c.size() * sizeof(float));
    // Flushing L2 means overwriting more than all of it; twice its size leaves no line of A, B or C.
    const DeviceBuffer flush(settings.warm_cache ? 0 : std::max<size_t>(2 * size_t(l2_bytes), size_t(1) << 20));

    kreg_gemm_args args = gemm_args(job.shape, static_cast<kreg_dtype>(job.dtype));
    args.a = da.get();
    args.b = db.get();
    args.c = dc.get();
    args.stream = s;

    describe_launch(info, kernel.instance, args, record.extra);
    if (info.model_global_bytes != nullptr) record.extra["model_bytes"] = info.model_global_bytes(m, n, k, args.dtype);

    auto call = [&] { call_kernel(info, kernel.instance, args, s, who); };

    const double tolerance = settings.tolerance.value_or(default_tolerance(job.dtype));
    const uint64_t verify_seed = job.seed ^ (job.id * 0x9e3779b97f4a7c15ULL);
    // Returns false (and marks the row wrong_result) if C on the device does not match the reference.
    auto check = [&](const char* when) {
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(c.data(), dc.get(), dc.bytes(), cudaMemcpyDeviceToHost, s));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(s));
        const VerifyResult v = verify_gemm(a.data(), b.data(), c.data(), m, n, k, k, n, n, tolerance, verify_seed);
        if (std::isfinite(v.max_rel_err))
            record.max_rel_err = record.max_rel_err ? std::max(*record.max_rel_err, v.max_rel_err) : v.max_rel_err;
        if (v.sampled) record.extra["verify_sampled"] = true;
        if (!v.passed) {
            record.status = RowStatus::wrong_result;
            record.reason = std::string(when) + ": " + v.reason;
        }
        return v.passed;
    };

    // The checked call.
    CallLimit limit(job);
    poison_device(dc.as<float>(), c.size(), s);
    settle_stream(s, "poisoning C before the first call");
    limit.arm();
    call();
    settle_stream(s, "after the first call of " + who);
    limit.disarm();
    if (settings.verify) {
        record.tolerance = tolerance;
        if (!check("first call")) return;
    }

    // Timing. Persisting L2 lines an earlier job set aside would make this one's inputs look cached.
    const cudaError_t reset = cudaCtxResetPersistingL2Cache();
    if (reset != cudaSuccess && reset != cudaErrorNotSupported) KREG_RUNNER_CUDA_CHECK(reset);
    (void)cudaGetLastError();
    unsigned char flush_value = 0;
    SampleHooks hooks;
    hooks.before_each = [&] {
        // A launch error the kernel did not check itself surfaces here, outside the timed region.
        raise_pending(cudaSuccess, "launching " + who);
        poison_device(dc.as<float>(), c.size(), s);
        // After the poison, so C's freshly written lines are evicted too. A changing value keeps the
        // memset from being a no-op a clever driver could skip.
        if (!settings.warm_cache)
            KREG_RUNNER_CUDA_CHECK(cudaMemsetAsync(flush.get(), flush_value++, flush.bytes(), s));
        limit.arm();
    };
    // A timed call's wait is the timer's stop; a warm-up call is waited for by the next call's stop
    // (still armed: each arm restarts the limit).
    hooks.after_call = [&](const CallSite& site, double) {
        if (site.role == CallSite::Role::timed) limit.disarm();
    };
    CudaEventTimer timer(s);
    // --profile: one NVTX range per timed launch, named after the kernel, for ncu/nsys to target.
    const std::function<void()> timed_call = settings.profile ? std::function<void()>([&] {
        nvtxRangePushA(job.kernel.c_str());
        call();
        nvtxRangePop();
    })
                                                              : std::function<void()>(call);
    try {
        record.samples_ms = sample(settings, timer, timed_call, hooks);
    } catch (const KernelFailed& e) {
        throw KernelFailed{e.message + " (while timing)"};
    }
    limit.arm();
    settle_device("after the timed calls of " + who + ", whole device");
    limit.disarm();
    if (settings.verify && !check("last timed call")) return;

    record.stats = compute_stats(record.samples_ms);
    if (record.stats->median_ms > 0) record.gflops = job.shape.flops() / (record.stats->median_ms * 1e-3) / 1e9;
    record.extra["warm_cache"] = settings.warm_cache;
    if (!settings.warm_cache) record.extra["l2_flush_bytes"] = flush.bytes();
    record.status = RowStatus::ok;
    record.reason.clear();
}

}  // namespace

Record run_cuda_gemm_job(const Job& job, const LoadedKernel& kernel, CallChannel* channel) {
    JobStart start = start_job(job, kernel, Backend::cuda, "cuda_event");
    if (!start.usable) return start.record;
    Record record = std::move(start.record);
    if (job.settings.checked_outside && channel == nullptr) {
        record.reason = "checked_outside needs a channel";
        return record;
    }

    try {
        run_checked(job, kernel, record, channel);
    } catch (const KernelFailed& e) {
        record.status = RowStatus::failed;
        record.reason = e.message;
    } catch (const CudaError& e) {
        if (e.sticky()) throw WorkerFatal(e.what());
        record.status = RowStatus::failed;
        record.reason = e.what();
    } catch (const CublasError& e) {
        record.status = RowStatus::failed;
        record.reason = e.what();
    } catch (const std::bad_alloc&) {
        record.status = RowStatus::failed;
        record.reason = "out of host memory for the operands of " + to_string(job.shape);
    }
    if (record.status != RowStatus::ok) {
        // Timings of a row that did not end ok must not be read as a result.
        record.stats.reset();
        record.gflops.reset();
    }
    return record;
}

}  // namespace kreg
