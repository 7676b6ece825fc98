// The CUDA backend of the measurement pipeline. What is CUDA-specific:
//   - the harness owns the stream (non-blocking) and every buffer; RAII frees them on every path;
//   - a kernel fault is a sticky error that ruins the context: it becomes WorkerFatal, the worker
//     reports the row as crashed and exits; any other CUDA error fails the row only;
//   - the reference sees the inputs exactly as the kernel does: bf16/fp16 operands are rounded on the
//     host first;
//   - poison is written with cuMemsetD32Async (fill_device_words, cuda/device_fill.hpp), L2 is flushed by
//     overwriting twice its size, and C is scanned after every call on the device (cuda_kernels.cu), so
//     only a few words travel back;
//   - timed calls are timed by CUPTI's kernel records where CUPTI works (cuda/cupti_timer.hpp; settings.timer
//     auto or cupti): the sample is the span of every kernel, memcpy and memset the call ran, on every
//     stream, by the GPU's clock; the device is idle before every call, so the window holds the call's work
//     only. Plain events beside it (launch gap included) and the host's wall clock around a device-wide wait
//     are kept too: the row shows both times, and strict runs cross-check the events as before;
//   - otherwise (settings.timer events, or CUPTI unavailable: extra.timer_fallback says why) timed calls are
//     timed with events while the stream is held (HeldStreamTimer below): the launch's host overhead is
//     not in the sample, and is reported on its own (extra.launch_overhead_ms);
//   - strict runs timed by events use CudaEventTimer::Wait::device instead, whose host wall clock around a
//     device-wide wait is what TimingCrossCheck compares the event time with.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX: ranges for --profile

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/cupti_timer.hpp"
#include "cuda/device_fill.hpp"
#include "cuda/event_timer.hpp"
#include "cuda/fenced_device_buffer.hpp"
#include "cuda/host_convert.hpp"
#include "cuda/resources.hpp"
#include "measure/anticheat.hpp"
#include "measure/stats.hpp"
#include "pipeline/cuda_kernels.hpp"
#include "pipeline/job_runner.hpp"
#include "pipeline/pipeline.hpp"
#include "verify/random_fill.hpp"

namespace kreg {
namespace {

// Turns the error a wait returned (or a launch error the kernel left unchecked) into the row's end:
// sticky -> WorkerFatal (the context is gone), anything else -> KernelFailed (this row only).
void raise_pending(cudaError_t waited, const std::string& when) {
    const cudaError_t last = cudaGetLastError();  // also clears a non-sticky launch error
    const cudaError_t e = waited != cudaSuccess ? waited : last;
    if (e == cudaSuccess) return;
    const std::string message = cuda_error_text(e) + " (" + when + ")";
    if (is_sticky(e)) throw WorkerFatal::cuda(message);
    throw KernelFailed{message};
}

// Writes the call's NaN (verify/output_fill.hpp) over count floats on stream, so verification can tell
// "never written" from "computed NaN". Returns the poison actually written: kPoisonBits, or the all-ones
// fallback when the driver entry point is missing (the scan must look for the same word).
uint32_t poison_device(float* data, size_t count, uint32_t word, cudaStream_t stream) {
    return fill_device_words(data, count, word, stream, "poisoning C");
}

size_t element_bytes(DType dtype) { return dtype == DType::bf16 || dtype == DType::fp16 ? 2 : 4; }

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

// {"launch": {...}, "attributes": {...}} from the kernel's describe_launch and cudaFuncGetAttributes.
// Informational: a kernel that cannot describe itself still runs; the reason is recorded instead.
void describe_launch(const kreg_kernel_info& info, void* instance, const OperationDef& op, const Shape& shape,
                     DType dtype, const CallOperands& operands, RecordExtras& extra) {
    kreg_launch_info launch{};
    launch.struct_size = sizeof(kreg_launch_info);
    char error[512] = {};
    const kreg_status status = op.describe_launch(info, instance, shape, dtype, operands, launch, error, sizeof error);
    error[sizeof error - 1] = '\0';
    if (status != KREG_STATUS_OK) {
        if (status != KREG_STATUS_UNSUPPORTED) extra.launch_error = std::string(status_name(status)) + ": " + error;
        return;
    }
    extra.launch = LaunchInfo{{launch.grid[0], launch.grid[1], launch.grid[2]},
                              {launch.block[0], launch.block[1], launch.block[2]},
                              launch.dynamic_shared_bytes};
    if (launch.device_function == nullptr) return;
    cudaFuncAttributes attr{};
    const cudaError_t e = cudaFuncGetAttributes(&attr, launch.device_function);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (is_sticky(e)) throw CudaError(e, cuda_error_text(e) + "; from cudaFuncGetAttributes");
        extra.attributes_error = cuda_error_text(e);
        return;
    }
    extra.attributes = KernelAttributes{attr.numRegs,        attr.sharedSizeBytes,    attr.maxDynamicSharedSizeBytes,
                                        attr.localSizeBytes, attr.maxThreadsPerBlock, attr.ptxVersion,
                                        attr.binaryVersion};
}

// Pinned host memory mapped into the device: the flag the hold kernel spins on, and its verdict.
class MappedFlags {
public:
    MappedFlags() {
        void* host = nullptr;
        KREG_RUNNER_CUDA_CHECK(cudaHostAlloc(&host, 2 * sizeof(int32_t), cudaHostAllocMapped));
        host_ = static_cast<volatile int32_t*>(host);
        void* device = nullptr;
        KREG_RUNNER_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
        device_ = static_cast<int32_t*>(device);
    }
    ~MappedFlags() {
        if (host_ != nullptr) (void)cudaFreeHost(const_cast<int32_t*>(host_));
    }
    MappedFlags(const MappedFlags&) = delete;
    MappedFlags& operator=(const MappedFlags&) = delete;
    volatile int32_t* host() const { return host_; }
    int32_t* device() const { return device_; }

private:
    volatile int32_t* host_ = nullptr;  // [0]: release, [1]: state (0 spinning, 1 released, 2 timed out)
    int32_t* device_ = nullptr;
};

// Times one launch with events while the stream is held (the nvbench blocking_kernel): start() queues
// the hold kernel and the start event; the call queues its launch behind them; stop_ms() queues the stop
// event, then releases the hold and waits. The GPU runs start event, kernel, stop event back to back,
// so the sample is the kernel's time on the GPU, and the host's launch overhead (the wall time of the
// call, measured here too) is reported apart.
//
// Deadlock guard: a plugin that waits for its own launch inside run_gemm (a stream synchronize) would
// wait for the held stream forever; the hold kernel gives up after kHoldTimeout, the sample is taken
// as it comes (it then contains the wait), and the rest of the job is timed without holding (start
// event recorded before the launch, as before this timer existed). hold_timeouts() counts those.
class HeldStreamTimer final : public Timer {
public:
    static constexpr double kHoldTimeoutS = 1.0;

    HeldStreamTimer(cudaStream_t stream, std::optional<double> call_timeout_s) : stream_(stream) {
        // Inside the per-call limit, so a plugin that synchronizes costs a timeout, not the worker.
        double timeout_s = kHoldTimeoutS;
        if (call_timeout_s) timeout_s = std::min(timeout_s, *call_timeout_s / 4);
        timeout_ns_ = uint64_t(timeout_s * 1e9);
    }
    void start() override {
        if (hold_) {
            flags_.host()[0] = 0;
            flags_.host()[1] = 0;
            std::atomic_thread_fence(std::memory_order_seq_cst);
            KREG_RUNNER_CUDA_CHECK(launch_hold_stream(flags_.device(), flags_.device() + 1, timeout_ns_, stream_));
        }
        KREG_RUNNER_CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
        launch_begin_ = std::chrono::steady_clock::now();
    }
    ~HeldStreamTimer() override { release(); }  // before the flags are freed
    double stop_ms() override {
        const auto launch_end = std::chrono::steady_clock::now();
        launch_ms_.push_back(std::chrono::duration<double, std::milli>(launch_end - launch_begin_).count());
        KREG_RUNNER_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
        release();
        KREG_RUNNER_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
        if (hold_ && flags_.host()[1] == 2) {
            ++hold_timeouts_;
            hold_ = false;
        }
        float ms = 0;
        KREG_RUNNER_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
        return double(ms);
    }
    std::string name() const override { return "cuda_event"; }

    // Lets a waiting hold kernel go. Also called when a call failed between start() and stop_ms(), so
    // that the wait for the failed call does not sit out the hold's timeout.
    void release() {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        flags_.host()[0] = 1;
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }

    const std::vector<double>& launch_ms() const { return launch_ms_; }
    int hold_timeouts() const { return hold_timeouts_; }
    double timeout_s() const { return double(timeout_ns_) * 1e-9; }

private:
    cudaStream_t stream_;
    uint64_t timeout_ns_ = 0;
    bool hold_ = true;
    int hold_timeouts_ = 0;
    MappedFlags flags_;
    Event start_, stop_;
    std::chrono::steady_clock::time_point launch_begin_{};
    std::vector<double> launch_ms_;
};

class CudaBackend final : public MeasureBackend {
public:
    CudaBackend(const Job& job, const LoadedKernel& kernel, cudaStream_t stream, int l2_bytes)
        : info_(*kernel.info),
          instance_(kernel.instance),
          op_(operation_def(job.operation)),
          who_(kernel.info->name != nullptr ? kernel.info->name : job.kernel),
          profile_name_(job.kernel),
          profile_(job.settings.profile),
          warm_cache_(job.settings.warm_cache),
          stream_(stream),
          l2_bytes_(l2_bytes),
          held_timer_(stream, job.settings.call_timeout_s),
          strict_timer_(stream, CudaEventTimer::Wait::device) {
        if (job.settings.timer == TimerChoice::events) return;
        if (job.settings.profile)
            timer_fallback_ = "CUPTI not used: --profile runs for a profiler, which owns CUPTI";
        else
            cupti_timer_ = CuptiTimer::open(stream, timer_fallback_);
        if (!cupti_timer_ && job.settings.timer == TimerChoice::cupti)
            throw KernelFailed{"--timer cupti: " + timer_fallback_};
    }

    // What the row's `timer` says, and why CUPTI was not used where it was wanted ("" if it was, or was not wanted).
    const char* timer_name() const { return cupti_timer_ ? "cupti" : "cuda_event"; }
    const std::string& timer_fallback() const { return timer_fallback_; }

    void allocate(const Job& job, int sets, bool guarded) override {
        shape_ = job.shape;
        dtype_ = job.dtype;
        esize_ = element_bytes(job.dtype);
        geometry_ = op_.geometry(job.shape);
        const OperandGeometry& g = geometry_;
        c_count_ = g.c_count;
        // Every run: C in a mapping of its own (cuda/fenced_device_buffer.hpp), the band before it
        // tile_guard_bytes(ldc) long (at least 1 MiB: an unpredicated 256 x 256 tile written before C's first
        // row lands in it), the slack after C (< 256 bytes) guard words too, and past that unmapped address
        // space (max(256 MiB, the chunk)) where any access faults. Written once here: a write into a band
        // ends the job, so they never need rewriting. Without the virtual memory API: cudaMalloc with a
        // band of the same length after C too (c_fallback_reason_).
        guard_floats_ = (tile_guard_bytes(g.c_cols) / sizeof(float) + 63) / 64 * 64;
        (void)guarded;
        int device = 0;
        KREG_RUNNER_CUDA_CHECK(cudaGetDevice(&device));
        const std::vector<uint32_t> guard_words(guard_floats_, kGuardBits);
        for (int i = 0; i < sets; ++i) {
            sets_.push_back(
                {PaddedDeviceOperand(g.a_count, esize_, g.a_cols, kPadBeforeABits, kPadAfterABits, stream_),
                 PaddedDeviceOperand(g.b_count, esize_, g.b_cols, kPadBeforeBBits, kPadAfterBBits, stream_),
                 FencedDeviceBuffer(guard_floats_ * sizeof(float), c_count_ * sizeof(float), size_t(256) << 20, device),
                 DeviceBuffer(), DeviceBuffer()});
            const Set& set = sets_.back();
            c_fallback_reason_ = set.c.fallback_reason();
            const size_t bytes = guard_floats_ * sizeof(uint32_t);
            KREG_RUNNER_CUDA_CHECK(
                cudaMemcpyAsync(set.c.band(), guard_words.data(), bytes, cudaMemcpyHostToDevice, stream_));
            KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(set.c.after(), guard_words.data(), set.c.after_bytes(),
                                                   cudaMemcpyHostToDevice, stream_));
        }
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream_));  // guard_words is read by the copies
        // Flushing L2 means overwriting more than all of it; twice its size leaves no line of A, B or C.
        if (!warm_cache_) flush_ = DeviceBuffer(std::max<size_t>(2 * size_t(l2_bytes_), size_t(1) << 20));
        scan_counts_ = DeviceBuffer(sizeof(DeviceScanCounts));
        scan_at_ = DeviceBuffer(kSampledElements * sizeof(unsigned long long));
        first_difference_ = DeviceBuffer(2 * sizeof(unsigned long long));
        scan_samples_ = DeviceBuffer(kSampledElements * sizeof(float));
    }
    void fill_inputs(int set, std::vector<float>& a, std::vector<float>& b) override {
        to_device_bytes(a, dtype_, a_bytes_);
        to_device_bytes(b, dtype_, b_bytes_);
        Set& s = sets_[size_t(set)];
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(s.a.get(), a_bytes_.data(), a_bytes_.size(), cudaMemcpyHostToDevice, stream_));
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(s.b.get(), b_bytes_.data(), b_bytes_.size(), cudaMemcpyHostToDevice, stream_));
        // A pristine device copy of each, for inputs_changed's comparison on the device.
        if (s.pristine_a.bytes() != a_bytes_.size()) s.pristine_a = DeviceBuffer(a_bytes_.size());
        if (s.pristine_b.bytes() != b_bytes_.size()) s.pristine_b = DeviceBuffer(b_bytes_.size());
        if (!a_bytes_.empty())
            KREG_RUNNER_CUDA_CHECK(
                cudaMemcpyAsync(s.pristine_a.get(), a_bytes_.data(), a_bytes_.size(), cudaMemcpyHostToDevice, stream_));
        if (!b_bytes_.empty())
            KREG_RUNNER_CUDA_CHECK(
                cudaMemcpyAsync(s.pristine_b.get(), b_bytes_.data(), b_bytes_.size(), cudaMemcpyHostToDevice, stream_));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host bytes are rewritten by the next call
    }
    OutputFill poison_output(int set, const OutputFill& fill) override {
        const Set& s = sets_[size_t(set)];
        if (geometry_.in_place) {  // C starts as A (fp32: the only dtype of the in-place operations)
            KREG_RUNNER_CUDA_CHECK(
                cudaMemcpyAsync(c_of(s), s.a.get(), c_count_ * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
            return fill;
        }
        OutputFill written = fill;
        if (fill.finite)
            KREG_RUNNER_CUDA_CHECK(
                launch_finite_fill(reinterpret_cast<uint32_t*>(c_of(s)), c_count_, fill.key, stream_));
        else
            written.nan_word = poison_device(c_of(s), c_count_, fill.nan_word, stream_);
        return written;
    }
    void flush_caches() override {
        // After the poison, so C's freshly written lines are evicted too. A changing value keeps the
        // memset from being a no-op a clever driver could skip.
        if (flush_.bytes() > 0)
            KREG_RUNNER_CUDA_CHECK(cudaMemsetAsync(flush_.get(), flush_value_++, flush_.bytes(), stream_));
    }
    void synchronize(const std::string& when, bool device_wide) override {
        // CUPTI's window takes every record of the device: it must be idle before the call starts, so that
        // nothing of a previous call (or a plugin's leftover work) is in it.
        if (cupti_timer_) device_wide = true;
        const cudaError_t waited = device_wide ? cudaDeviceSynchronize() : cudaStreamSynchronize(stream_);
        // C lies between unmapped pages: an illegal address is most likely an access outside C. Decided on
        // the error code, never on text (the row's cause stays the typed cuda_error of raise_pending).
        const bool fenced_fault = waited == cudaErrorIllegalAddress && c_fallback_reason_.empty();
        raise_pending(waited, fenced_fault ? when +
                                                 "; C lies between unmapped pages, so an access outside C (or "
                                                 "outside the inputs and their padding) faults"
                                           : when);
    }
    void copy_output(int set, float* c) override {
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(c, c_of(sets_[size_t(set)]), c_count_ * sizeof(float), cudaMemcpyDeviceToHost, stream_));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    std::string inputs_changed(int set) override {
        const Set& s = sets_[size_t(set)];
        // On the device first (after every checked call of a sweep too: big inputs stay there); only a
        // change is copied back, to be described.
        unsigned long long first[2] = {~0ULL, ~0ULL};
        const struct {
            const void* got;
            const DeviceBuffer& pristine;
        } compared[] = {{s.a.get(), s.pristine_a}, {s.b.get(), s.pristine_b}};
        for (int i = 0; i < 2; ++i) {
            if (compared[i].pristine.bytes() == 0) continue;
            KREG_RUNNER_CUDA_CHECK(launch_first_difference(
                static_cast<const unsigned char*>(compared[i].got), compared[i].pristine.as<unsigned char>(),
                compared[i].pristine.bytes(), first_difference_.as<unsigned long long>() + i, stream_));
        }
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(first, first_difference_.get(), sizeof first, cudaMemcpyDeviceToHost, stream_));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream_));
        if ((compared[0].pristine.bytes() == 0 || first[0] == ~0ULL) &&
            (compared[1].pristine.bytes() == 0 || first[1] == ~0ULL))
            return "";
        a_back_.resize(s.a.bytes());
        b_back_.resize(s.b.bytes());
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(a_back_.data(), s.a.get(), s.a.bytes(), cudaMemcpyDeviceToHost, stream_));
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(b_back_.data(), s.b.get(), s.b.bytes(), cudaMemcpyDeviceToHost, stream_));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream_));
        const struct {
            const char* name;
            const std::vector<unsigned char>& expected;
            const std::vector<unsigned char>& got;
            int64_t cols;
        } inputs[] = {{"A", a_bytes_, a_back_, geometry_.a_cols}, {"B", b_bytes_, b_back_, geometry_.b_cols}};
        for (const auto& input : inputs) {
            std::string change = describe_input_change(input.name, input.expected.data(), input.got.data(),
                                                       input.expected.size() / esize_, esize_, input.cols);
            if (!change.empty()) return change;
        }
        return "";
    }
    std::string guard_damage(int set) override {
        const Set& s = sets_[size_t(set)];
        const size_t after_words = s.c.after_bytes() / sizeof(uint32_t);
        std::vector<uint32_t> before(guard_floats_), after(after_words);
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(before.data(), s.c.band(), guard_floats_ * sizeof(uint32_t),
                                               cudaMemcpyDeviceToHost, stream_));
        if (after_words > 0)
            KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(after.data(), s.c.after(), after_words * sizeof(uint32_t),
                                                   cudaMemcpyDeviceToHost, stream_));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream_));
        return describe_guard_damage(before.data(), guard_floats_, after.data(), after_words);
    }
    OutputScan scan_output(int set, const OutputFill& fill, const std::vector<size_t>& sample_at) override {
        const int count = int(std::min<size_t>(sample_at.size(), kSampledElements));
        at_host_.assign(sample_at.begin(), sample_at.begin() + count);
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(scan_at_.get(), at_host_.data(),
                                               size_t(count) * sizeof(unsigned long long), cudaMemcpyHostToDevice,
                                               stream_));
        KREG_RUNNER_CUDA_CHECK(launch_scan_c(reinterpret_cast<const uint32_t*>(c_of(sets_[size_t(set)])), c_count_,
                                             fill, scan_counts_.as<DeviceScanCounts>(),
                                             scan_at_.as<unsigned long long>(), scan_samples_.as<float>(), count,
                                             stream_));
        DeviceScanCounts counts{};
        OutputScan scan;
        scan.samples.resize(size_t(count));
        KREG_RUNNER_CUDA_CHECK(
            cudaMemcpyAsync(&counts, scan_counts_.get(), sizeof counts, cudaMemcpyDeviceToHost, stream_));
        KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(scan.samples.data(), scan_samples_.get(), size_t(count) * sizeof(float),
                                               cudaMemcpyDeviceToHost, stream_));
        KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream_));
        scan.unwritten = size_t(counts.unwritten);
        scan.first_unwritten = size_t(counts.first_unwritten);
        scan.non_finite = size_t(counts.non_finite);
        scan.first_non_finite = size_t(counts.first_non_finite);
        if (scan.non_finite > 0) {  // its bits say where it came from, as far as they can
            KREG_RUNNER_CUDA_CHECK(cudaMemcpyAsync(&scan.first_non_finite_value,
                                                   c_of(sets_[size_t(set)]) + scan.first_non_finite, sizeof(float),
                                                   cudaMemcpyDeviceToHost, stream_));
            KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream_));
        }
        return scan;
    }
    CallOperands operands(int set) override {
        const Set& s = sets_[size_t(set)];
        CallOperands o;
        o.a = s.a.get();
        o.b = s.b.get();
        o.c = c_of(s);
        o.stream = stream_;
        return o;
    }
    void call(const CallOperands& operands) override {
        // --profile: one NVTX range per sampled launch, named after the kernel, for ncu/nsys to target.
        const bool range = profile_ && sampling_;
        if (range) nvtxRangePushA(profile_name_.c_str());
        const std::string message = op_.call(info_, instance_, shape_, dtype_, operands);
        if (range) nvtxRangePop();
        if (!message.empty()) {
            // A kernel that reports a fault it caught (an illegal address, say) still leaves the
            // context broken: that is the worker's end, not only this row's.
            held_timer_.release();
            const cudaError_t e = cudaStreamSynchronize(stream_);
            (void)cudaGetLastError();
            if (is_sticky(e)) throw WorkerFatal::cuda(cuda_error_text(e) + " (" + who_ + ": " + message + ")");
            throw KernelFailed{message};
        }
    }
    Timer& timer(bool strict) override {
        if (cupti_timer_) return *cupti_timer_;  // waits for the whole device, and reads the wall clock, always
        if (strict) return strict_timer_;
        return held_timer_;
    }

    bool wants_clock_settle() const override { return true; }
    void before_sampling() override {
        sampling_ = true;
        // Persisting L2 lines the checked call set aside would make the timed calls' inputs look cached.
        const cudaError_t reset = cudaCtxResetPersistingL2Cache();
        if (reset != cudaSuccess && reset != cudaErrorNotSupported) KREG_RUNNER_CUDA_CHECK(reset);
        (void)cudaGetLastError();
    }
    void describe(Record& record, const CallOperands& operands) override {
        describe_launch(info_, instance_, op_, shape_, dtype_, operands, record.extra);
        // Which defence against writes outside C this row had (after allocate(): the sets exist).
        record.extra.c_fence = c_fallback_reason_.empty() ? "unmapped_pages" : "guard_band";
        if (!c_fallback_reason_.empty()) record.extra.c_fence_fallback = c_fallback_reason_;
    }
    void start_strict(StrictEvidence& evidence) override {
        evidence.device_wide_sync = true;
        evidence.timing.emplace();
        evidence.guard_band_elements = guard_floats_;
        if (cupti_timer_) evidence.off_stream_calls = evidence.outliving_calls = 0;  // until a timed call says more
    }
    void after_timed_call(double ms, StrictEvidence& evidence) override {
        if (cupti_timer_) {
            // The cross-check compares the harness stream's events with the wall clock, as it does when events
            // time the row: what it catches is unchanged. CUPTI also names the work off the harness stream,
            // which its samples count.
            if (evidence.timing) evidence.timing->add(cupti_timer_->last_event_ms(), cupti_timer_->last_wall_ms());
            const KernelTimeEvidence seen = tally_kernel_windows(cupti_timer_->windows(), {});
            evidence.off_stream_calls = seen.off_stream_calls;
            evidence.outliving_calls = seen.outliving_calls;
            return;
        }
        if (evidence.timing) evidence.timing->add(ms, strict_timer_.last_wall_ms());
    }
    std::string timing_violation(const StrictEvidence& evidence) override {
        return evidence.timing && evidence.timing->escaped() ? evidence.timing->reason() : "";
    }
    void timing_facts(Record& record) override {
        record.extra.warm_cache = warm_cache_;
        if (!warm_cache_) record.extra.l2_flush_bytes = flush_.bytes();
        if (cupti_timer_) {
            // The timed calls are the timer's last ones: clock-settling calls (sampler.hpp) came before them.
            const size_t timed = record.samples_ms.size();
            const auto last = [timed](const auto& all) {
                return std::vector<typename std::decay_t<decltype(all)>::value_type>(
                    all.end() - std::min(timed, all.size()), all.end());
            };
            record.extra.timing_method = "cupti";
            record.extra.kernel_time =
                tally_kernel_windows(last(cupti_timer_->windows()), last(cupti_timer_->event_ms()));
            const std::vector<double> launch = last(cupti_timer_->launch_ms());
            if (!launch.empty()) record.extra.launch_overhead_ms = compute_stats(launch).median_ms;
            return;
        }
        const std::vector<double>& launch = held_timer_.launch_ms();
        if (launch.empty()) return;  // strict: timed by strict_timer_
        // The samples exclude the launch; its host cost, per timed call, is here.
        record.extra.timing_method = held_timer_.hold_timeouts() == 0 ? "held_stream" : "held_stream_until_timeout";
        record.extra.launch_overhead_ms = compute_stats(launch).median_ms;
        if (held_timer_.hold_timeouts() > 0) {
            record.extra.hold_timeouts = held_timer_.hold_timeouts();
            record.extra.hold_timeout_s = held_timer_.timeout_s();
        }
    }

private:
    struct Set {
        PaddedDeviceOperand a, b;  // NaN padding around each: a read outside them is diagnosed (verify_gemm.hpp)
        FencedDeviceBuffer c;
        DeviceBuffer pristine_a, pristine_b;  // what fill_inputs wrote, on the device
    };
    float* c_of(const Set& s) const { return s.c.c(); }

    const kreg_kernel_info& info_;
    void* instance_;
    const OperationDef& op_;
    OperandGeometry geometry_;
    std::string who_, profile_name_;
    bool profile_, warm_cache_;
    cudaStream_t stream_;
    int l2_bytes_;
    Shape shape_;
    DType dtype_ = DType::fp32;
    size_t esize_ = 4, c_count_ = 0, guard_floats_ = 0;
    std::string c_fallback_reason_;  // "" when C lies between unmapped pages (FencedDeviceBuffer)
    std::vector<Set> sets_;
    DeviceBuffer flush_, scan_counts_, scan_at_, scan_samples_, first_difference_;
    unsigned char flush_value_ = 0;
    bool sampling_ = false;
    std::vector<unsigned char> a_bytes_, b_bytes_, a_back_, b_back_;  // what was written, what came back
    std::vector<unsigned long long> at_host_;
    HeldStreamTimer held_timer_;
    CudaEventTimer strict_timer_;
    std::unique_ptr<CuptiTimer> cupti_timer_;  // null: timed by held_timer_ / strict_timer_
    std::string timer_fallback_;
};

}  // namespace

Record run_cuda_gemm_job(const Job& job, const LoadedKernel& kernel, CallChannel* channel) {
    JobStart start = start_job(job, kernel, Backend::cuda, "cuda_event");
    if (!start.usable) return start.record;
    Record record = std::move(start.record);
    if (job.settings.checked_outside && channel == nullptr) {
        record.reason = "checked_outside needs a channel";
        return record;
    }
    record.extra.device = job.settings.device;
    try {
        KREG_RUNNER_CUDA_CHECK(cudaSetDevice(job.settings.device));
        int l2_bytes = 0;
        KREG_RUNNER_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, job.settings.device));
        Stream stream;
        CudaBackend backend(job, kernel, stream.get(), l2_bytes);
        record.timer = backend.timer_name();
        if (!backend.timer_fallback().empty()) record.extra.timer_fallback = backend.timer_fallback();
        run_pipeline(job, kernel, backend, record, job.settings.checked_outside ? channel : nullptr);
        return record;
    } catch (const KernelFailed& e) {
        record.reason = e.message;
    } catch (const CudaError& e) {
        if (e.sticky()) throw WorkerFatal::cuda(e.what());
        record.reason = e.what();
    } catch (const std::bad_alloc&) {
        record.reason = "out of host memory for the operands of " + to_string(job.shape);
    }
    // Timings of a row that did not end ok must not be read as a result.
    record.status = RowStatus::failed;
    record.stats.reset();
    record.gflops.reset();
    record.gbps.reset();
    return record;
}

}  // namespace kreg
