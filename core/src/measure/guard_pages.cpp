#include "measure/guard_pages.hpp"

#include "measure/anticheat.hpp"

#include "platform/fault_watch.hpp"
#include "platform/guard_memory.hpp"

#include <algorithm>
#include <atomic>
#include <new>
#include <stdexcept>
#include <utility>

namespace kreg {
namespace {

size_t page_bytes() { return platform::page_size(); }

size_t round_up(size_t bytes, size_t unit) { return (bytes + unit - 1) / unit * unit; }

// ---- What the fault handler knows: plain atomics, the only state it may read ----------------------------

constexpr int kMaxWatched = 32;  // buffers one watch can cover (the runner has 3 per operand set)

struct WatchedRegion {
    // Faults: [leading_begin, leading_end) and [c_end, trailing_end). c_begin: for the message only.
    std::atomic<uintptr_t> leading_begin{0}, leading_end{0}, c_begin{0}, c_end{0}, trailing_end{0};
    std::atomic<const char*> name{"C"};
};
WatchedRegion g_regions[kMaxWatched];
std::atomic<int> g_region_count{0};
std::atomic<bool> g_watch_active{false};

// Async-signal-safe output: platform::write_stderr only, numbers formatted by hand.
void write_number(uintptr_t value) {
    char digits[24];
    int i = sizeof digits;
    digits[--i] = '\0';
    do {
        digits[--i] = char('0' + value % 10);
        value /= 10;
    } while (value != 0 && i > 0);
    platform::write_stderr(digits + i);
}

const char* access_verb(platform::FaultAccess access) {
    switch (access) {
        case platform::FaultAccess::write:
            return "wrote";
        case platform::FaultAccess::read:
            return "read";
        case platform::FaultAccess::unknown:
            break;
    }
    return "touched";
}

// Runs in the fault's context (platform/fault_watch.hpp): reads the atomics above, writes one line.
bool explain_fault(uintptr_t address, platform::FaultAccess access) {
    const int count = std::min(g_region_count.load(), kMaxWatched);
    for (int i = 0; i < count; ++i) {
        const WatchedRegion& r = g_regions[i];
        const bool leading = address >= r.leading_begin.load() && address < r.leading_end.load();
        const bool trailing = address >= r.c_end.load() && address < r.trailing_end.load();
        if (!leading && !trailing) continue;
        platform::write_stderr("kreg: the kernel ");
        platform::write_stderr(access_verb(access));
        if (trailing) {
            platform::write_stderr(" past the end of ");
            platform::write_stderr(r.name.load());
            platform::write_stderr(" (guard page at +");
            write_number(address - r.c_end.load());
        } else {
            platform::write_stderr(" before the start of ");
            platform::write_stderr(r.name.load());
            platform::write_stderr(" (guard page at -");
            write_number(r.c_begin.load() - address);
        }
        platform::write_stderr(" bytes)\n");
        return true;
    }
    return false;
}

}  // namespace

size_t far_guard_bytes(size_t buffer_bytes, size_t at_least) {
    return std::max({size_t(64) << 20, buffer_bytes, at_least});
}

GuardedFloats::GuardedFloats(size_t count, size_t min_band, size_t guard_bytes, const char* name)
    : name_(name), count_(count) {
    const size_t page = page_bytes();
    const size_t guard = round_up(std::max(guard_bytes, page), page);
    const size_t body = round_up((count + min_band) * sizeof(float), page);
    mapped_ = guard + body + guard;
    void* p = platform::reserve_inaccessible(mapped_);
    if (p == nullptr) throw std::bad_alloc();
    base_ = static_cast<unsigned char*>(p);
    if (!platform::make_read_write(base_ + guard, body)) {
        platform::release(base_, mapped_);
        throw std::bad_alloc();
    }
    c_ = reinterpret_cast<float*>(base_ + guard + body) - count;
    band_ = reinterpret_cast<uint32_t*>(base_ + guard);
    band_elements_ = size_t(reinterpret_cast<uint32_t*>(c_) - band_);
    fill_band();
}

GuardedFloats::~GuardedFloats() {
    if (base_ != nullptr) platform::release(base_, mapped_);
}

GuardedFloats& GuardedFloats::operator=(GuardedFloats&& other) noexcept {
    swap(other);  // other frees what this held
    return *this;
}

void GuardedFloats::swap(GuardedFloats& other) noexcept {
    std::swap(name_, other.name_);
    std::swap(base_, other.base_);
    std::swap(mapped_, other.mapped_);
    std::swap(band_, other.band_);
    std::swap(band_elements_, other.band_elements_);
    std::swap(c_, other.c_);
    std::swap(count_, other.count_);
}

GuardedFloats::GuardedFloats(GuardedFloats&& other) noexcept
    : name_(other.name_),
      base_(std::exchange(other.base_, nullptr)),
      mapped_(std::exchange(other.mapped_, 0)),
      band_(std::exchange(other.band_, nullptr)),
      band_elements_(std::exchange(other.band_elements_, 0)),
      c_(std::exchange(other.c_, nullptr)),
      count_(std::exchange(other.count_, 0)) {}

void GuardedFloats::fill_band() { std::fill(band_, band_ + band_elements_, kGuardBits); }

GuardPageWatch::GuardPageWatch(const std::vector<const GuardedFloats*>& buffers) {
    // A second watch would save the first one's handler as "previous" and hand stray faults to itself.
    if (g_watch_active.exchange(true)) throw std::logic_error("a GuardPageWatch is already active");
    int n = 0;
    for (const GuardedFloats* b : buffers) {
        if (n == kMaxWatched) break;
        WatchedRegion& r = g_regions[n++];
        r.leading_begin = reinterpret_cast<uintptr_t>(b->leading_begin());
        r.leading_end = reinterpret_cast<uintptr_t>(b->band());
        r.c_begin = reinterpret_cast<uintptr_t>(b->data());
        r.c_end = reinterpret_cast<uintptr_t>(b->data() + b->size());
        r.trailing_end = reinterpret_cast<uintptr_t>(b->trailing_end());
        r.name = b->name();
    }
    g_region_count = n;

    platform::install_fault_explainer(explain_fault);
}

GuardPageWatch::~GuardPageWatch() {
    platform::remove_fault_explainer();
    g_region_count = 0;
    g_watch_active = false;
}

}  // namespace kreg
