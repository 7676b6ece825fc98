// What the GPU ran during one timed call, from the activity records CUPTI hands back (cuda/cupti_timer.hpp),
// as plain arithmetic over (kind, stream, start, end) so that it is tested without a GPU.
//
// A call's window opens at t0 (read right before the call, with the device idle) and closes at t1 (read once
// the device is idle again). Its records are those that ran in it, on every stream and context of the
// process: the harness's own work (poison, L2 flush, the output scan) is queued and finished outside the
// window, so everything inside is the call's. CUPTI places a GPU timestamp on the host's clock by a
// conversion that can be off by microseconds, so a record's edges are not held to t0 and t1 exactly: one that
// started up to kClockSkewNs before t0 and ended after it, or started by t1 and ended after it, is the
// call's (the device was idle at t0 and at t1, so nothing real straddles either).
#pragma once

#include <cstdint>
#include <vector>

#include "common/record_extras.hpp"

namespace kreg {

// One activity record, in CUPTI's nanosecond timestamps.
struct GpuActivity {
    enum class Kind { kernel, memcpy, memset };
    Kind kind = Kind::kernel;
    uint32_t context = 0;  // CUPTI's context id
    uint32_t stream = 0;   // CUPTI's stream id, unique within the context
    uint64_t start_ns = 0, end_ns = 0;
};

// A stream as CUPTI names it: the harness's, found from its cudaStream_t (cuptiGetStreamIdEx), so no plugin
// can make its own work look like the harness's.
struct ActivityStream {
    uint32_t context = 0, stream = 0;
};

// The timestamps of one call: t0 right before it, returned_ns when it returned to the host, t1 once the
// device was idle again (t0 <= returned_ns <= t1).
struct CallWindow {
    uint64_t t0_ns = 0, returned_ns = 0, t1_ns = 0;
};

// How far a record's converted timestamps may stand past the window's host-read edges and still be the
// call's. Seen on the H200 (docs/MEASUREMENT.md): cuda_gemv's second kernel, its deterministic sum of partials
// ending a few microseconds before the device-wide wait returned, left out of most calls of a row (its CUPTI
// time 17 % short, its event time unchanged), and cuda_small_tile's first kernel left out in one sweep.
// The harness's last work before a call, the L2 flush (tens of microseconds), ends before t0 and starts
// further than this before it.
inline constexpr uint64_t kClockSkewNs = 20000;

// Whether a record belongs to the window (with the tolerance above); a record with end < start never does.
bool in_window(const GpuActivity& record, const CallWindow& window);

// One call's GPU work.
struct KernelWindow {
    int records = 0;           // activities in the window (0: nothing the GPU ran was seen)
    double span_ms = 0;        // first start to last end, over every stream: the sample
    double kernel_sum_ms = 0;  // the kernels' durations added up (overlap counted twice)
    int kernels = 0, memcpys = 0, memsets = 0;
    int streams = 0;           // distinct (context, stream) pairs
    int off_stream = 0;        // activities not on the harness stream
    double off_stream_ms = 0;  // their durations added up
    // Work off the harness stream that was still running after the call had returned and the harness
    // stream's last activity had ended: what an event timer on the harness stream never sees. outlived_ms
    // is how long it ran past the later of those two moments.
    bool outlived = false;
    double outlived_ms = 0;
    // The part of [the call's return, t1] that no record covers: once the call has returned all its work is queued,
    // so the device runs it back to back and only the final synchronisation is idle (a few microseconds).
    double idle_after_return_ms = 0;
    // Records of this call that CUPTI delivered only after the window had closed (found when the next call's
    // window opened): the call's sample may have been short by them.
    int late_records = 0;
};

// The window's records and their arithmetic. Records outside the window (in_window: the harness's work
// before and after the call, delivered by the same flush) are left out; so is a record with end < start.
KernelWindow summarize_window(const std::vector<GpuActivity>& records, const CallWindow& window,
                              ActivityStream harness);

// Whether a window's records can be all of its call's GPU work: none is missing where the device must have been
// busy, after the call returned with everything queued (idle_after_return_ms at most kLostRecordGapMs). Seen on
// the H200 in one tuning sweep: cuda_small_tile at 896-2048^3 (partial products, then their sum) had in most
// timed calls only the summing kernel's record, 0.012 ms of a call that took 0.45 ms between its events, and read
// 13-29x cuBLAS; a second sweep of the same build had both records in every call (the cause was not found).
// Such a call is timed by its events instead (the caller counts it among the calls without records). Host work
// inside a call (cuBLAS's, before it launches) leaves the device idle before the return, which is not judged.
inline constexpr double kLostRecordGapMs = 0.05;
bool records_account_for_events(const KernelWindow& w);

// The timed calls' windows and the event times measured beside them -> extra.kernel_time (medians of the
// per-call values, counts of the calls with off-stream or outliving work). event_ms may be empty.
KernelTimeEvidence tally_kernel_windows(const std::vector<KernelWindow>& windows, const std::vector<double>& event_ms);

}  // namespace kreg
