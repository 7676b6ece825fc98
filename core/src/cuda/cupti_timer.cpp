#include "cuda/cupti_timer.hpp"

#include <cuda.h>   // CUcontext, CUstream: cuStreamGetCtx is fetched through the runtime, as device_fill.hpp does
#include <cupti.h>  // declarations and record layouts only: the functions come from dlopen
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_check.hpp"

#ifndef KREG_CUPTI_LIBRARY
#define KREG_CUPTI_LIBRARY "libcupti.so"
#endif

namespace kreg {
namespace {

constexpr size_t kBufferBytes = size_t(1) << 20;  // per CUPTI buffer; a timed call fills a few hundred bytes

// The activity kinds a call's GPU work can show up as. CONCURRENT_KERNEL, unlike KERNEL, does not serialise
// kernels; MEMCPY2 is peer-to-peer copies, taken where CUPTI offers it (a single-GPU call has none).
const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMCPY2};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);

// The process's one CUPTI activity session: libcupti opened once, its callbacks registered once, the kinds
// enabled while some timer is open, and the records CUPTI delivers kept until a timer takes them.
class CuptiSession {
public:
    static CuptiSession& instance() {
        static CuptiSession session;  // never destroyed before CUPTI's own atexit flush could call back
        return session;
    }

    // "" when usable, else why not (without the "CUPTI unavailable: " prefix).
    const std::string& unavailable() const { return unavailable_; }

    // Enables the kinds for the first open timer. "" or the error.
    std::string acquire() {
        std::lock_guard<std::mutex> lock(users_mutex_);
        if (users_ == 0) {
            for (CUpti_ActivityKind kind : kKinds)
                if (const CUptiResult r = enable_(kind); r != CUPTI_SUCCESS && kind != CUPTI_ACTIVITY_KIND_MEMCPY2) {
                    std::string why = "cuptiActivityEnable(" + std::to_string(int(kind)) + "): " + result_text(r);
                    for (CUpti_ActivityKind k : kKinds) (void)disable_(k);
                    return why;
                }
        }
        ++users_;
        return "";
    }
    void release() {
        std::lock_guard<std::mutex> lock(users_mutex_);
        if (users_ == 0 || --users_ > 0) return;
        for (CUpti_ActivityKind kind : kKinds) (void)disable_(kind);
        (void)flush_all_(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        std::lock_guard<std::mutex> records(records_mutex_);
        records_.clear();
    }

    uint64_t timestamp() {
        uint64_t t = 0;
        check(get_timestamp_(&t), "cuptiGetTimestamp");
        return t;
    }
    uint64_t dropped() {
        std::lock_guard<std::mutex> lock(records_mutex_);
        return dropped_;
    }

    // Every record delivered since the last take, after a forced flush: the caller has waited for the
    // device, so every record of its call is complete, and a buffer that also holds an unfinished record of
    // someone else's (a plugin's thread still launching) must not hold the call's records back.
    std::vector<GpuActivity> flush_and_take() {
        check(flush_all_(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
        std::lock_guard<std::mutex> lock(records_mutex_);
        return std::exchange(records_, {});
    }

    // The harness stream as CUPTI's records name it.
    ActivityStream identify(cudaStream_t stream) {
        using StreamGetCtxFn = CUresult (*)(CUstream, CUcontext*);
        void* entry = nullptr;
        cudaDriverEntryPointQueryResult query{};
        if (cudaGetDriverEntryPointByVersion("cuStreamGetCtx", &entry, 12000, cudaEnableDefault, &query) !=
                cudaSuccess ||
            query != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            throw std::runtime_error("the driver's cuStreamGetCtx cannot be reached");
        }
        CUcontext context = nullptr;
        if (reinterpret_cast<StreamGetCtxFn>(entry)(stream, &context) != CUDA_SUCCESS)
            throw std::runtime_error("cuStreamGetCtx failed for the harness stream");
        ActivityStream id;
        check(get_context_id_(context, &id.context), "cuptiGetContextId");
        check(get_stream_id_(context, stream, 0, &id.stream), "cuptiGetStreamIdEx");
        return id;
    }

    // Called by CUPTI with a full (or flushed) buffer, maybe from its own thread.
    void take(CUcontext context, uint32_t stream, uint8_t* buffer, size_t valid) {
        std::vector<GpuActivity> parsed;
        CUpti_Activity* record = nullptr;
        while (next_record_(buffer, valid, &record) == CUPTI_SUCCESS) {
            if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
                const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
                parsed.push_back({GpuActivity::Kind::kernel, k->contextId, k->streamId, k->start, k->end});
            } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
                const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
                parsed.push_back({GpuActivity::Kind::memcpy, m->contextId, m->streamId, m->start, m->end});
            } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
                const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
                parsed.push_back({GpuActivity::Kind::memcpy, m->contextId, m->streamId, m->start, m->end});
            } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
                const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
                parsed.push_back({GpuActivity::Kind::memset, m->contextId, m->streamId, m->start, m->end});
            }
        }
        size_t dropped = 0;
        (void)dropped_records_(context, stream, &dropped);
        std::lock_guard<std::mutex> lock(records_mutex_);
        records_.insert(records_.end(), parsed.begin(), parsed.end());
        dropped_ += dropped;
    }

private:
    CuptiSession() {
        // A profiler (ncu, nsys, or anything else injected into the CUDA driver) owns CUPTI: the timer
        // steps aside rather than fight it for the activity buffers, and the profiler's replays would make
        // the times meaningless anyway.
        if (const char* injected = std::getenv("CUDA_INJECTION64_PATH"); injected != nullptr && *injected != '\0') {
            unavailable_ =
                std::string("a profiler is attached (CUDA_INJECTION64_PATH=") + injected + ") and owns CUPTI";
            return;
        }
        const char* override_path = std::getenv("KREG_CUPTI_LIBRARY");
        std::string path = override_path != nullptr && *override_path != '\0' ? override_path : KREG_CUPTI_LIBRARY;
        library_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (library_ == nullptr) {
            const char* e = ::dlerror();
            unavailable_ = "dlopen(" + path + "): " + (e != nullptr ? e : "failed");
            // The toolkit may sit elsewhere on this machine than where the runner was built: its soname,
            // through the loader's path, unless a library was named explicitly.
            const std::string soname = "libcupti.so." + std::to_string(CUPTI_API_VERSION / 10000);
            if (override_path != nullptr && *override_path != '\0') return;
            library_ = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (library_ == nullptr) return;
            unavailable_.clear();
            path = soname;
        }
        if (!bind(get_version_, "cuptiGetVersion") || !bind(result_string_, "cuptiGetResultString") ||
            !bind(enable_, "cuptiActivityEnable") || !bind(disable_, "cuptiActivityDisable") ||
            !bind(register_callbacks_, "cuptiActivityRegisterCallbacks") ||
            !bind(flush_all_, "cuptiActivityFlushAll") || !bind(next_record_, "cuptiActivityGetNextRecord") ||
            !bind(dropped_records_, "cuptiActivityGetNumDroppedRecords") ||
            !bind(get_timestamp_, "cuptiGetTimestamp") || !bind(get_context_id_, "cuptiGetContextId") ||
            !bind(get_stream_id_, "cuptiGetStreamIdEx"))
            return;
        // The records are read with this header's layouts (CUpti_ActivityKernel10, ...): another library
        // version may lay them out differently.
        uint32_t version = 0;
        if (get_version_(&version) != CUPTI_SUCCESS || version != CUPTI_API_VERSION) {
            unavailable_ = path + " is CUPTI API version " + std::to_string(version) +
                           ", the runner was built against " + std::to_string(CUPTI_API_VERSION);
            return;
        }
        if (const CUptiResult r = register_callbacks_(buffer_requested, buffer_completed); r != CUPTI_SUCCESS)
            unavailable_ = "cuptiActivityRegisterCallbacks: " + result_text(r);
    }

    template <class Fn>
    bool bind(Fn& fn, const char* name) {
        fn = reinterpret_cast<Fn>(::dlsym(library_, name));
        if (fn == nullptr && unavailable_.empty()) unavailable_ = std::string("libcupti has no ") + name;
        return fn != nullptr;
    }
    std::string result_text(CUptiResult r) const {
        const char* text = nullptr;
        if (result_string_ != nullptr && result_string_(r, &text) == CUPTI_SUCCESS && text != nullptr) return text;
        return "CUPTI error " + std::to_string(int(r));
    }
    void check(CUptiResult r, const char* call) const {
        if (r != CUPTI_SUCCESS) throw std::runtime_error(std::string(call) + ": " + result_text(r));
    }

    void* library_ = nullptr;  // never closed: CUPTI's threads and atexit handlers live in it
    std::string unavailable_;
    decltype(&cuptiGetVersion) get_version_ = nullptr;
    decltype(&cuptiGetResultString) result_string_ = nullptr;
    decltype(&cuptiActivityEnable) enable_ = nullptr;
    decltype(&cuptiActivityDisable) disable_ = nullptr;
    decltype(&cuptiActivityRegisterCallbacks) register_callbacks_ = nullptr;
    decltype(&cuptiActivityFlushAll) flush_all_ = nullptr;
    decltype(&cuptiActivityGetNextRecord) next_record_ = nullptr;
    decltype(&cuptiActivityGetNumDroppedRecords) dropped_records_ = nullptr;
    decltype(&cuptiGetTimestamp) get_timestamp_ = nullptr;
    decltype(&cuptiGetContextId) get_context_id_ = nullptr;
    decltype(&cuptiGetStreamIdEx) get_stream_id_ = nullptr;

    std::mutex users_mutex_;
    int users_ = 0;
    std::mutex records_mutex_;
    std::vector<GpuActivity> records_;
    uint64_t dropped_ = 0;
};

// CUPTI asks for a buffer when it writes a record and has none, which can be inside a timed call (a plugin
// that launches hundreds of kernels fills one): the buffers it hands back are kept and given out again, so a
// request there costs a lock, not an allocation and its page faults.
class BufferPool {
public:
    static BufferPool& instance() {
        static BufferPool pool;  // never destroyed: CUPTI's atexit flush may still hand buffers back
        return pool;
    }
    uint8_t* get() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!free_.empty()) {
                uint8_t* b = free_.back();
                free_.pop_back();
                return b;
            }
        }
        // CUPTI wants 8-byte alignment; aligned_alloc's size must be a multiple of it (kBufferBytes is).
        return static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    }
    void put(uint8_t* buffer) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (free_.size() < kKept) {
            free_.push_back(buffer);
            return;
        }
        std::free(buffer);
    }

private:
    static constexpr size_t kKept = 8;
    std::mutex mutex_;
    std::vector<uint8_t*> free_;
};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = BufferPool::instance().get();
    *size = *buffer != nullptr ? kBufferBytes : 0;
    *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t /*size*/, size_t valid) {
    if (buffer == nullptr) return;
    CuptiSession::instance().take(context, stream, buffer, valid);
    BufferPool::instance().put(buffer);
}

void prime(CuptiSession& session, cudaStream_t stream, DeviceBuffer& primer) {
    // The forced flush handed CUPTI's buffer over; CUPTI asks for the next one at its next record, which
    // would be the call's launch: the events of a 20 us cuBLAS call then read 0.36 ms on the H200 (4 MiB
    // allocated and set up inside the window; 2026-12-03). A 4-byte memset takes that request here, and the
    // window opens 2 x kClockSkewNs after it ended, so the memset's record is not the call's (in_window).
    if (primer.get() == nullptr) primer = DeviceBuffer(4);
    KREG_RUNNER_CUDA_CHECK(cudaMemsetAsync(primer.get(), 0, 4, stream));
    KREG_RUNNER_CUDA_CHECK(cudaStreamSynchronize(stream));
    const uint64_t primed = session.timestamp();
    while (session.timestamp() < primed + 2 * kClockSkewNs) {
    }
}

}  // namespace

std::unique_ptr<CuptiTimer> CuptiTimer::open(cudaStream_t stream, std::string& why_not) {
    CuptiSession& session = CuptiSession::instance();
    if (!session.unavailable().empty()) {
        why_not = "CUPTI unavailable: " + session.unavailable();
        return nullptr;
    }
    if (std::string e = session.acquire(); !e.empty()) {
        why_not = "CUPTI unavailable: " + e;
        return nullptr;
    }
    try {
        return std::unique_ptr<CuptiTimer>(new CuptiTimer(stream, session.identify(stream)));
    } catch (const CudaError&) {
        session.release();
        throw;  // the runner's own CUDA call failed (an event): not CUPTI's problem, the row's
    } catch (const std::exception& e) {
        session.release();
        why_not = std::string("CUPTI unavailable: ") + e.what();
        return nullptr;
    }
}

CuptiTimer::CuptiTimer(cudaStream_t stream, ActivityStream harness) : stream_(stream), harness_(harness) {}

CuptiTimer::~CuptiTimer() { CuptiSession::instance().release(); }

void CuptiTimer::start() {
    CuptiSession& session = CuptiSession::instance();
    // The device is idle: what CUPTI hands over now ran before this call (the harness's poison and flush, the
    // previous call's output checks), so this window's flush holds only what ran after it. A record of the
    // previous timed call among them came after its window had closed: that call's sample may be short.
    const std::vector<GpuActivity> before = session.flush_and_take();
    if (!windows_.empty())
        for (const GpuActivity& r : before)
            if (in_window(r, last_window_)) ++windows_.back().late_records;
    prime(session, stream_, primer_);
    wall_start_ = std::chrono::steady_clock::now();
    dropped_at_start_ = session.dropped();
    t0_ns_ = session.timestamp();
    KREG_RUNNER_CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
}

double CuptiTimer::stop_ms() {
    CuptiSession& session = CuptiSession::instance();
    const uint64_t returned_ns = session.timestamp();
    launch_ms_.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start_).count());
    KREG_RUNNER_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
    KREG_RUNNER_CUDA_CHECK(cudaDeviceSynchronize());
    last_wall_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start_).count();
    const uint64_t t1_ns = session.timestamp();
    float event_ms = 0;
    KREG_RUNNER_CUDA_CHECK(cudaEventElapsedTime(&event_ms, start_.get(), stop_.get()));
    event_ms_.push_back(double(event_ms));
    last_window_ = CallWindow{t0_ns_, returned_ns, t1_ns};
    KernelWindow window = summarize_window(session.flush_and_take(), last_window_, harness_);
    // Records lost in this window would make the span too short: the call is then timed by its events.
    if (session.dropped() != dropped_at_start_) window = KernelWindow{};
    // Records that cannot be the whole call (measure/kernel_window.hpp): the events time it, never a shorter span.
    if (!records_account_for_events(window)) window = KernelWindow{};
    windows_.push_back(window);
    return window.records > 0 ? window.span_ms : double(event_ms);
}

}  // namespace kreg
