// The arithmetic of a CUPTI-timed call (measure/kernel_window.hpp) over hand-made activity records: which
// records are the call's, the span and sum, and the work off the harness stream or outliving the call.
#include "measure/kernel_window.hpp"

#include <gtest/gtest.h>

namespace kreg {
namespace {

using Kind = GpuActivity::Kind;
constexpr ActivityStream kHarness{1, 7};
// t0 = 1000 ns, the call returns at 1500 ns, the device is idle again at 100000 ns.
constexpr CallWindow kWindow{1000, 1500, 100000};

GpuActivity on(uint32_t stream, Kind kind, uint64_t start, uint64_t end) { return {kind, 1, stream, start, end}; }

TEST(KernelWindow, AnEmptyWindowHasNoRecordsAndNoSpan) {
    const KernelWindow w = summarize_window({}, kWindow, kHarness);
    EXPECT_EQ(w.records, 0);
    EXPECT_EQ(w.span_ms, 0);
    EXPECT_FALSE(w.outlived);
}

TEST(KernelWindow, RecordsOutsideTheWindowAreTheHarnessesAndLeftOut) {
    const std::vector<GpuActivity> records = {
        on(7, Kind::memset, 100, 900),        // the poison and the L2 flush, before t0
        on(7, Kind::kernel, 2000, 8000),      // the call's kernel
        on(7, Kind::kernel, 200000, 201000),  // the output scan, after t1 (delivered by the same flush)
        on(7, Kind::kernel, 5000, 4000),      // malformed: ends before it starts
    };
    const KernelWindow w = summarize_window(records, kWindow, kHarness);
    EXPECT_EQ(w.records, 1);
    EXPECT_EQ(w.kernels, 1);
    EXPECT_EQ(w.memsets, 0);
    EXPECT_DOUBLE_EQ(w.span_ms, 6000e-6);
    EXPECT_DOUBLE_EQ(w.kernel_sum_ms, 6000e-6);
    EXPECT_EQ(w.streams, 1);
    EXPECT_EQ(w.off_stream, 0);
}

// CUPTI's GPU timestamps reach the host's clock through a conversion that can be off by microseconds, and the
// device was idle at t0 and at t1, so a record straddling either edge is the call's, read on a skewed clock: its
// first kernel converted to start just before t0, its last ending just past t1 (cuda_gemv's reduction on the
// H200, left out before and its call read 17 % short). The harness's L2 flush, tens of microseconds long and
// done before t0, stays out even when its end is read a little late.
TEST(KernelWindow, ARecordStraddlingAnEdgeByClockSkewIsTheCallsTheHarnessFlushIsNot) {
    constexpr CallWindow window{100000, 101000, 140000};  // t0 100 us, returned at 101 us, idle at 140 us
    const std::vector<GpuActivity> records = {
        on(7, Kind::memset, 40000, 99000),    // poison and flush, ended before t0
        on(7, Kind::memset, 60000, 100400),   // a flush whose end reads 0.4 us past t0: started 40 us before
        on(7, Kind::kernel, 99500, 130000),   // the call's first kernel, its start read 0.5 us before t0
        on(7, Kind::kernel, 130500, 140600),  // its reduction, its end read 0.6 us after t1
        on(7, Kind::kernel, 140100, 141000),  // started after t1: not the call's
    };
    const KernelWindow w = summarize_window(records, window, kHarness);
    EXPECT_EQ(w.records, 2);
    EXPECT_EQ(w.kernels, 2);
    EXPECT_EQ(w.memsets, 0);
    EXPECT_DOUBLE_EQ(w.span_ms, (140600 - 99500) * 1e-6);
    EXPECT_DOUBLE_EQ(w.kernel_sum_ms, ((130000 - 99500) + (140600 - 130500)) * 1e-6);
    EXPECT_TRUE(records_account_for_events(w));
    EXPECT_FALSE(in_window(records[1], window));
    EXPECT_TRUE(in_window(on(7, Kind::kernel, 100000 - kClockSkewNs, 100001), window));
    EXPECT_FALSE(in_window(on(7, Kind::kernel, 100000 - kClockSkewNs - 1, 100001), window));
    EXPECT_FALSE(in_window(on(7, Kind::kernel, 99000, 100000), window));  // ends at t0: before the call
}

TEST(KernelWindow, TheTallyCountsCallsWhoseRecordsCameLate) {
    KernelWindow late;
    late.records = 1;
    late.span_ms = 0.02;
    late.late_records = 1;
    KernelWindow complete = late;
    complete.late_records = 0;
    const KernelTimeEvidence e = tally_kernel_windows({complete, late, complete}, {});
    EXPECT_EQ(e.late_record_calls, 1);
    EXPECT_EQ(e.calls, 3);
}

// The H200's cuda_small_tile at 2048^3: a call that returned at once (20 us), 0.45 ms of work, and only the
// reduction's record (0.440-0.452 ms): the device was idle for 0.42 ms after the return by the records, so records
// were lost and they do not time the call.
TEST(KernelWindow, RecordsThatLeaveTheDeviceIdleAfterTheReturnDoNotTimeTheCall) {
    const CallWindow window{0, 20000, 460000};
    const KernelWindow lost = summarize_window({on(7, Kind::kernel, 440000, 452000)}, window, kHarness);
    ASSERT_EQ(lost.records, 1);
    EXPECT_NEAR(lost.idle_after_return_ms, 0.420 + 0.008, 1e-9);
    EXPECT_FALSE(records_account_for_events(lost));
    // Both records: idle only for the final synchronisation.
    const KernelWindow whole =
        summarize_window({on(7, Kind::kernel, 21000, 439000), on(7, Kind::kernel, 440000, 452000)}, window, kHarness);
    EXPECT_NEAR(whole.idle_after_return_ms, 0.001 + 0.001 + 0.008, 1e-9);
    EXPECT_TRUE(records_account_for_events(whole));
    // cuBLAS at 256^3 on the H200: 60 us of host work before it launches, its two kernels done 10 us before t1.
    const KernelWindow host_first = summarize_window(
        {on(7, Kind::kernel, 40000, 48000), on(7, Kind::kernel, 49000, 52000)}, CallWindow{0, 60000, 70000}, kHarness);
    EXPECT_TRUE(records_account_for_events(host_first));
    EXPECT_FALSE(records_account_for_events(KernelWindow{}));
}

TEST(KernelWindow, SpanCoversEveryStreamAndTheSumAddsTheKernels) {
    // Two kernels overlapping on two streams and a memcpy after them: the span is first start to last end,
    // the sum counts the overlap twice and leaves the copy out.
    const std::vector<GpuActivity> records = {on(7, Kind::kernel, 2000, 6000), on(9, Kind::kernel, 4000, 10000),
                                              on(7, Kind::memcpy, 10000, 12000)};
    const KernelWindow w = summarize_window(records, kWindow, kHarness);
    EXPECT_EQ(w.records, 3);
    EXPECT_EQ(w.kernels, 2);
    EXPECT_EQ(w.memcpys, 1);
    EXPECT_DOUBLE_EQ(w.span_ms, 10000e-6);
    EXPECT_DOUBLE_EQ(w.kernel_sum_ms, 10000e-6);
    EXPECT_EQ(w.streams, 2);
    EXPECT_EQ(w.off_stream, 1);
    EXPECT_DOUBLE_EQ(w.off_stream_ms, 6000e-6);
    // The other stream's kernel ended before the harness stream's last activity: an event timer saw it out.
    EXPECT_FALSE(w.outlived);
}

TEST(KernelWindow, WorkThatOutlivesTheCallAndTheHarnessStreamIsNamed) {
    // The harness stream's work ends at 3000; the side stream's runs until 50000: 47000 ns unseen by events.
    const std::vector<GpuActivity> records = {on(7, Kind::kernel, 2000, 3000), on(9, Kind::kernel, 2500, 50000)};
    const KernelWindow w = summarize_window(records, kWindow, kHarness);
    EXPECT_TRUE(w.outlived);
    EXPECT_DOUBLE_EQ(w.outlived_ms, 47000e-6);
    EXPECT_DOUBLE_EQ(w.span_ms, 48000e-6);
}

TEST(KernelWindow, WithNothingOnTheHarnessStreamTheCallsReturnIsTheMark) {
    // A call that returns at 1500 after launching only on its own stream: everything after 1500 is unseen.
    const KernelWindow w = summarize_window({on(9, Kind::kernel, 1200, 9500)}, kWindow, kHarness);
    EXPECT_TRUE(w.outlived);
    EXPECT_DOUBLE_EQ(w.outlived_ms, 8000e-6);
    // Off-stream work the call waited for before it returned outlives nothing.
    const KernelWindow waited = summarize_window({on(9, Kind::kernel, 1100, 1400)}, kWindow, kHarness);
    EXPECT_EQ(waited.off_stream, 1);
    EXPECT_FALSE(waited.outlived);
}

TEST(KernelWindow, AStreamOfTheSameNumberInAnotherContextIsNotTheHarnesses) {
    const GpuActivity elsewhere{Kind::kernel, 2, 7, 2000, 3000};
    const KernelWindow w = summarize_window({elsewhere}, kWindow, kHarness);
    EXPECT_EQ(w.off_stream, 1);
    EXPECT_TRUE(w.outlived);
}

TEST(KernelWindow, TheTallyTakesMediansAndCountsTheCallsWithHiddenWork) {
    const std::vector<GpuActivity> honest = {on(7, Kind::kernel, 2000, 8000)};
    const std::vector<GpuActivity> hidden = {on(7, Kind::kernel, 2000, 3000), on(9, Kind::kernel, 2500, 60000)};
    const std::vector<KernelWindow> windows = {summarize_window(honest, kWindow, kHarness),
                                               summarize_window(hidden, kWindow, kHarness),
                                               summarize_window(honest, kWindow, kHarness), KernelWindow{}};
    const KernelTimeEvidence e = tally_kernel_windows(windows, {0.010, 0.011, 0.012, 0.013});
    EXPECT_EQ(e.calls, 4);
    EXPECT_EQ(e.calls_without_records, 1);
    EXPECT_DOUBLE_EQ(e.span_ms_median, 6000e-6);  // of the three calls with records
    EXPECT_DOUBLE_EQ(e.kernels_median, 1);
    EXPECT_EQ(e.streams_max, 2);
    EXPECT_EQ(e.off_stream_calls, 1);
    EXPECT_EQ(e.outliving_calls, 1);
    EXPECT_DOUBLE_EQ(e.outlived_ms_max, 57000e-6);
    EXPECT_DOUBLE_EQ(e.off_stream_ms_median, 57500e-6);
    ASSERT_TRUE(e.event_ms_median.has_value());
    EXPECT_DOUBLE_EQ(*e.event_ms_median, 0.0115);
    EXPECT_FALSE(tally_kernel_windows(windows, {}).event_ms_median.has_value());
}

}  // namespace
}  // namespace kreg
