#include "measure/kernel_window.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "measure/stats.hpp"

namespace kreg {
namespace {

double ns_to_ms(uint64_t ns) { return double(ns) * 1e-6; }

double median_of(std::vector<double> values) { return values.empty() ? 0.0 : compute_stats(values).median_ms; }

}  // namespace

bool in_window(const GpuActivity& r, const CallWindow& window) {
    return r.end_ns >= r.start_ns && r.end_ns > window.t0_ns && r.start_ns + kClockSkewNs >= window.t0_ns &&
           r.start_ns <= window.t1_ns;
}

KernelWindow summarize_window(const std::vector<GpuActivity>& records, const CallWindow& window,
                              ActivityStream harness) {
    KernelWindow w;
    uint64_t first_start = 0, last_end = 0;
    uint64_t harness_last_end = 0;  // 0: no activity on the harness stream
    std::set<std::pair<uint32_t, uint32_t>> streams;
    std::vector<const GpuActivity*> off_stream;
    for (const GpuActivity& r : records) {
        if (!in_window(r, window)) continue;
        if (w.records == 0 || r.start_ns < first_start) first_start = r.start_ns;
        last_end = std::max(last_end, r.end_ns);
        ++w.records;
        switch (r.kind) {
            case GpuActivity::Kind::kernel:
                ++w.kernels;
                w.kernel_sum_ms += ns_to_ms(r.end_ns - r.start_ns);
                break;
            case GpuActivity::Kind::memcpy:
                ++w.memcpys;
                break;
            case GpuActivity::Kind::memset:
                ++w.memsets;
                break;
        }
        streams.insert({r.context, r.stream});
        if (r.context == harness.context && r.stream == harness.stream) {
            harness_last_end = std::max(harness_last_end, r.end_ns);
        } else {
            off_stream.push_back(&r);
            w.off_stream_ms += ns_to_ms(r.end_ns - r.start_ns);
        }
    }
    if (w.records == 0) return w;
    w.span_ms = ns_to_ms(last_end - first_start);
    // The union of the records over [returned, t1], by start: what it leaves uncovered is the idle time.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (const GpuActivity& r : records)
        if (in_window(r, window))
            busy.push_back({std::max(r.start_ns, window.returned_ns), std::max(r.end_ns, window.returned_ns)});
    std::sort(busy.begin(), busy.end());
    uint64_t covered_until = window.returned_ns, idle_ns = 0;
    for (const auto& [start, end] : busy) {
        if (start > covered_until) idle_ns += start - covered_until;
        covered_until = std::max(covered_until, end);
    }
    if (window.t1_ns > covered_until) idle_ns += window.t1_ns - covered_until;  // nothing when a record ends past t1
    w.idle_after_return_ms = ns_to_ms(idle_ns);
    w.streams = int(streams.size());
    w.off_stream = int(off_stream.size());
    // An event recorded on the harness stream after the call completes once the call has returned and the
    // stream's own work is done; off-stream work ending later is the work such a timer misses.
    const uint64_t seen_until = std::max(window.returned_ns, harness_last_end);
    for (const GpuActivity* r : off_stream)
        if (r->end_ns > seen_until) {
            w.outlived = true;
            w.outlived_ms = std::max(w.outlived_ms, ns_to_ms(r->end_ns - seen_until));
        }
    return w;
}

bool records_account_for_events(const KernelWindow& w) {
    return w.records > 0 && w.idle_after_return_ms <= kLostRecordGapMs;
}

KernelTimeEvidence tally_kernel_windows(const std::vector<KernelWindow>& windows, const std::vector<double>& event_ms) {
    KernelTimeEvidence e;
    e.calls = int(windows.size());
    std::vector<double> span, sum, kernels, memcpys, memsets, off_ms;
    for (const KernelWindow& w : windows) {
        if (w.late_records > 0) ++e.late_record_calls;
        if (w.records == 0) {
            ++e.calls_without_records;
            continue;
        }
        span.push_back(w.span_ms);
        sum.push_back(w.kernel_sum_ms);
        kernels.push_back(w.kernels);
        memcpys.push_back(w.memcpys);
        memsets.push_back(w.memsets);
        e.streams_max = std::max(e.streams_max, w.streams);
        if (w.off_stream > 0) {
            ++e.off_stream_calls;
            off_ms.push_back(w.off_stream_ms);
        }
        if (w.outlived) {
            ++e.outliving_calls;
            e.outlived_ms_max = std::max(e.outlived_ms_max, w.outlived_ms);
        }
    }
    e.span_ms_median = median_of(span);
    e.kernel_sum_ms_median = median_of(sum);
    e.kernels_median = median_of(kernels);
    e.memcpys_median = median_of(memcpys);
    e.memsets_median = median_of(memsets);
    e.off_stream_ms_median = median_of(off_ms);
    if (!event_ms.empty()) e.event_ms_median = median_of(event_ms);
    return e;
}

}  // namespace kreg
