// Grading mode (RunSettings::strict): the pieces the CPU and CUDA job runners share. A grade must rest
// on what the harness saw, so each check here also leaves evidence in the row (extra.anticheat).
//
// What strict mode guarantees a plugin sees, call after call (checked call, warm-ups, timed calls):
//   - the same kreg_gemm_args layout, the same stream, freshly drawn A and B (a stream of the input
//     generator no other call uses) in a buffer set other than the previous call's, and a poisoned C.
//     A result cached by pointer or by content is therefore stale on the next call;
//   - its output is verified after every call, so misbehaving on the Nth call only is caught;
//   - A and B are compared with what the harness wrote, so a kernel that writes its inputs fails.
// The CUDA runner also waits for the whole device when it stops the timer and cross-checks the event
// time against the host clock (TimingCrossCheck); the CPU runner copies C out the moment the call
// returns and counts the threads the call left behind.
#pragma once

#include "common/record_extras.hpp"
#include "common/types.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// Buffer sets strict mode rotates through: consecutive calls never share an A, B or C pointer.
inline constexpr int kStrictBufferSets = 3;

// Guard bands: strict runs place bands of this sentinel word (a NaN pattern no kernel produces by
// arithmetic) next to C and check them after every call, so a write outside C is caught even when it
// lands in memory the process owns. The CUDA runner has a band on each side of C (tile_guard_bytes
// long); the CPU runner one before C, between C and an inaccessible region, and an inaccessible region
// right after C (guard_pages.hpp), so there a write past the end faults instead.
inline constexpr uint32_t kGuardBits = 0x7fa5a5a5;

// Bytes of guard on each side of a C with leading dimension ldc (fp32 elements): max(1 MiB, 256 rows of
// C plus 256 columns), so an unpredicated 256 x 256 tile written past C's last row or last column lands
// in the guard, not beyond it. The CUDA runner's value bands and the CPU runner's inaccessible regions
// (guard_pages.hpp) are this long.
size_t tile_guard_bytes(int64_t ldc);

// "" when every word of both bands is kGuardBits. Otherwise "kernel wrote outside C: <where> (<n> of
// <2 * elements> guard elements changed)", where names the changed element nearest C: "element 3 past
// the end of C" or "2 element(s) before the start of C". before ends where C starts; after starts where
// C ends; each holds `elements` words.
std::string describe_guard_damage(const uint32_t* before, const uint32_t* after, size_t elements);
// The same with bands of different lengths; after may be null when after_elements is 0 (the CPU runner:
// past C's end lies an inaccessible page instead). Counts "of <before + after> guard elements".
std::string describe_guard_damage(const uint32_t* before, size_t before_elements, const uint32_t* after,
                                  size_t after_elements);

// Ends a strict job from inside the sampling loop (a hook throws it); the runner turns it into the
// row's status and reason.
struct StrictViolation {
    RowStatus status = RowStatus::failed;
    std::string reason;
};

// The fill_uniform stream of operand `which` (0 = A, 1 = B) for call number `call` of job `job_id`
// (0 = the checked call, then the warm-ups, then the timed calls). Call 0 draws the job's ordinary
// streams (2 id, 2 id + 1), so the checked call sees exactly the inputs it sees without strict; every
// later call draws a stream with the top bit set, which no ordinary job uses and no two calls share.
uint64_t strict_input_stream(uint64_t job_id, uint64_t call, int which);

// "" if got equals expected byte for byte. Otherwise "kernel modified its input <name>: ..." naming the
// first changed element as (row, col) of a matrix with `cols` columns, its old and new value (fp32) or
// bits (16-bit types), and how many of the `count` elements changed.
std::string describe_input_change(const char* name, const void* expected, const void* got, size_t count,
                                  size_t element_bytes, int64_t cols);

// Threads of this process right now (entries of /proc/self/task); -1 if that cannot be read.
int count_threads();

// Waits up to `timeout` for this process to be back to at most `target` threads; true if it is.
// Strict runs call it before freeing the buffers of a job whose kernel left threads running, so a
// thread that writes C late does not write into freed memory (a thread pool simply times out).
bool wait_for_threads(int target, std::chrono::milliseconds timeout);

// Cross-checks the CUDA event time of each timed call against the host's wall clock around the same
// call (launch through a device-wide synchronize). Work a kernel hides from the harness stream (its
// own stream, the legacy default stream) is missed by the events but not by the wall clock, so such a
// call's event time is a fraction of its wall time. A call is mismatched when
//     event_ms < wall_ms / 2 - kSlackMs
// (the slack absorbs launch and synchronize overhead, which dominate a tiny honest kernel's wall time).
// The row fails when at least half of its timed calls, and at least two of them (one, for a single
// call), are mismatched: one preempted host thread does not fail an honest kernel, not even in a run of
// two timed calls, and hiding work in fewer than half the calls cannot move the median.
class TimingCrossCheck {
public:
    static constexpr double kSlackMs = 0.05;

    static bool mismatched(double event_ms, double wall_ms) { return event_ms < 0.5 * wall_ms - kSlackMs; }

    void add(double event_ms, double wall_ms);
    int calls() const { return int(event_ms_.size()); }
    int mismatched_calls() const { return mismatched_; }
    // At least one timed call, and at least half of them mismatched.
    bool escaped() const;
    // "work escaped the harness stream: event time X ms vs wall time Y ms (n of N timed calls)", from
    // the medians of the mismatched calls; "" unless escaped().
    std::string reason() const;
    // What the row's evidence says of it (extra.anticheat's timing_* facts).
    TimingCrossCheckFacts facts() const;

private:
    std::vector<double> event_ms_, wall_ms_;
    std::vector<double> bad_event_ms_, bad_wall_ms_;
    int mismatched_ = 0;
};

// What a strict run did and saw; becomes extra.anticheat (facts()), so a grade's evidence can cite it.
struct StrictEvidence {
    int calls = 0;                             // calls made (checked + warm-up + timed)
    int calls_verified = 0;                    // outputs checked against the reference (including a failing one)
    int calls_exported = 0;                    // outputs handed to the checker outside this process (CallChannel)
    size_t guard_band_elements = 0;            // at least this many guard words before C (and after, on CUDA); 0: none
    size_t guard_page_bytes = 0;               // CPU: inaccessible bytes on each side of C (guard_pages.hpp); 0: none
    std::string failed_at;                     // the call a violation was found at ("timed call 4"), "" if none
    std::optional<bool> device_wide_sync;      // CUDA: the timer's stop waited for the whole device
    std::optional<bool> threads_left_running;  // CPU: some call returned with more threads than it began with
    int max_threads_left = 0;                  // CPU: the most threads one call left behind
    std::optional<TimingCrossCheck> timing;    // CUDA timed calls
    std::optional<int> off_stream_calls, outliving_calls;  // CUDA timed by CUPTI (extra.kernel_time)

    // The row's evidence (common/record_extras.hpp's AnticheatEvidence): the counts and facts above,
    // every_call_checked (each call's output was verified here or exported), and the fixed facts of
    // strict mode (fresh inputs and buffers, kStrictBufferSets sets, input checksums).
    AnticheatEvidence facts() const;
};

}  // namespace kreg
