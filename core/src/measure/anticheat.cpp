#include "measure/anticheat.hpp"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

namespace kreg {
namespace {

std::string format_ms(double ms) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3g", ms);
    return buffer;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const size_t mid = values.size() / 2;
    return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

std::string element_text(const unsigned char* p, size_t element_bytes) {
    char buffer[48];
    if (element_bytes == 4) {
        float value;
        std::memcpy(&value, p, sizeof value);
        std::snprintf(buffer, sizeof buffer, "%.9g", double(value));
    } else if (element_bytes == 2) {
        uint16_t bits;
        std::memcpy(&bits, p, sizeof bits);
        std::snprintf(buffer, sizeof buffer, "bits 0x%04x", unsigned(bits));
    } else {
        std::snprintf(buffer, sizeof buffer, "byte 0x%02x", unsigned(p[0]));
    }
    return buffer;
}

}  // namespace

uint64_t strict_input_stream(uint64_t job_id, uint64_t call, int which) {
    const uint64_t operand = which == 0 ? 0 : 1;
    if (call == 0) return 2 * job_id + operand;
    // Top bit: disjoint from every ordinary stream 2 id + {0, 1} of a plan of fewer than 2^62 jobs.
    // Job in bits 62..32, call in 31..1, operand in bit 0: unique while job < 2^31 and call < 2^31.
    return (uint64_t(1) << 63) | ((job_id & 0x7fffffffULL) << 32) | ((call & 0x7fffffffULL) << 1) | operand;
}

std::string describe_input_change(const char* name, const void* expected, const void* got, size_t count,
                                  size_t element_bytes, int64_t cols) {
    const auto* want = static_cast<const unsigned char*>(expected);
    const auto* have = static_cast<const unsigned char*>(got);
    if (std::memcmp(want, have, count * element_bytes) == 0) return "";
    size_t first = count, changed = 0;
    for (size_t i = 0; i < count; ++i) {
        if (std::memcmp(want + i * element_bytes, have + i * element_bytes, element_bytes) != 0) {
            if (first == count) first = i;
            ++changed;
        }
    }
    const int64_t c = std::max<int64_t>(1, cols);
    return std::string("kernel modified its input ") + name + ": element (" + std::to_string(int64_t(first) / c) +
           ", " + std::to_string(int64_t(first) % c) + ") was " +
           element_text(want + first * element_bytes, element_bytes) + ", now " +
           element_text(have + first * element_bytes, element_bytes) + " (" + std::to_string(changed) + " of " +
           std::to_string(count) + " elements changed)";
}

int count_threads() {
    DIR* dir = opendir("/proc/self/task");
    if (dir == nullptr) return -1;
    int count = 0;
    while (const dirent* entry = readdir(dir)) {
        if (entry->d_name[0] != '.') ++count;
    }
    closedir(dir);
    return count;
}

bool wait_for_threads(int target, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const int now = count_threads();
        if (now < 0 || now <= target) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void TimingCrossCheck::add(double event_ms, double wall_ms) {
    event_ms_.push_back(event_ms);
    wall_ms_.push_back(wall_ms);
    if (mismatched(event_ms, wall_ms)) {
        ++mismatched_;
        bad_event_ms_.push_back(event_ms);
        bad_wall_ms_.push_back(wall_ms);
    }
}

// Two mismatched calls at least (where there are two): grading's correctness runs time two calls, and one
// host thread preempted for a quarter of a millisecond failed an honest kernel there (on the H200).
bool TimingCrossCheck::escaped() const {
    return mismatched_ > 0 && mismatched_ >= std::min(2, calls()) && 2 * mismatched_ >= calls();
}

std::string TimingCrossCheck::reason() const {
    if (!escaped()) return "";
    return "work escaped the harness stream: event time " + format_ms(median(bad_event_ms_)) + " ms vs wall time " +
           format_ms(median(bad_wall_ms_)) + " ms (" + std::to_string(mismatched_) + " of " + std::to_string(calls()) +
           " timed calls)";
}

size_t tile_guard_bytes(int64_t ldc) {
    const size_t tile = 256;
    return std::max(size_t(1) << 20, (tile * size_t(std::max<int64_t>(ldc, 1)) + tile) * sizeof(float));
}

std::string describe_guard_damage(const uint32_t* before, const uint32_t* after, size_t elements) {
    return describe_guard_damage(before, elements, after, elements);
}

std::string describe_guard_damage(const uint32_t* before, size_t before_elements, const uint32_t* after,
                                  size_t after_elements) {
    size_t changed = 0;
    std::string nearest;  // the changed element nearest C: bands are scanned outwards from C
    for (size_t i = 0; i < std::max(before_elements, after_elements); ++i) {
        if (i < before_elements && before[before_elements - 1 - i] != kGuardBits && changed++ == 0)
            nearest = std::to_string(i + 1) + " element(s) before the start of C";
        if (i < after_elements && after[i] != kGuardBits && changed++ == 0)
            nearest = "element " + std::to_string(i) + " past the end of C";
    }
    if (changed == 0) return "";
    return "kernel wrote outside C: " + nearest + " (" + std::to_string(changed) + " of " +
           std::to_string(before_elements + after_elements) + " guard elements changed)";
}

TimingCrossCheckFacts TimingCrossCheck::facts() const {
    return {escaped(), mismatched_, median(event_ms_), median(wall_ms_), kSlackMs};
}

AnticheatEvidence StrictEvidence::facts() const {
    AnticheatEvidence e;
    e.strict = true;
    e.calls = calls;
    e.calls_verified = calls_verified;
    e.calls_exported = calls_exported;
    e.every_call_checked = calls > 0 && calls_verified + calls_exported == calls;
    e.fresh_inputs = e.fresh_buffers = e.input_checksums = true;
    e.buffer_sets = kStrictBufferSets;
    if (!failed_at.empty()) e.failed_at = failed_at;
    e.device_wide_sync = device_wide_sync;
    if (threads_left_running) {
        e.threads_left_running = *threads_left_running;
        e.max_threads_left = max_threads_left;
    }
    if (guard_band_elements > 0) e.guard_band_elements = guard_band_elements;
    if (guard_page_bytes > 0) e.guard_page_bytes = guard_page_bytes;
    if (timing) e.timing = timing->facts();
    e.off_stream_calls = off_stream_calls;
    e.outliving_calls = outliving_calls;
    return e;
}

}  // namespace kreg
