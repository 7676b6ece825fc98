#include "measure/guard_pages.hpp"

#include "measure/anticheat.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <stdexcept>
#include <utility>

namespace kreg {
namespace {

size_t page_bytes() {
    static const size_t page = size_t(sysconf(_SC_PAGESIZE));
    return page;
}

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

struct sigaction g_previous_segv, g_previous_bus;
stack_t g_previous_stack;

// 64 KiB of alternate signal stack: a kernel that faults after exhausting its stack is still explained.
alignas(16) unsigned char g_alt_stack[1 << 16];

// Async-signal-safe output: write(2) only, numbers formatted by hand.
void write_text(const char* text) {
    size_t length = 0;
    while (text[length] != '\0') ++length;
    while (length > 0) {
        const ssize_t n = write(STDERR_FILENO, text, length);
        if (n <= 0) return;
        text += n;
        length -= size_t(n);
    }
}

void write_number(uintptr_t value) {
    char digits[24];
    int i = sizeof digits;
    digits[--i] = '\0';
    do {
        digits[--i] = char('0' + value % 10);
        value /= 10;
    } while (value != 0 && i > 0);
    write_text(digits + i);
}

// "wrote", "read" or "touched": x86-64 reports in the page-fault error code whether it was a write.
const char* access_verb(void* context) {
#if defined(__x86_64__) && defined(REG_ERR)
    const auto* uc = static_cast<const ucontext_t*>(context);
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0 ? "wrote" : "read";
#else
    (void)context;
    return "touched";
#endif
}

void on_fault(int signo, siginfo_t* info, void* context) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
    const int count = std::min(g_region_count.load(), kMaxWatched);
    for (int i = 0; i < count; ++i) {
        const WatchedRegion& r = g_regions[i];
        const bool leading = address >= r.leading_begin.load() && address < r.leading_end.load();
        const bool trailing = address >= r.c_end.load() && address < r.trailing_end.load();
        if (!leading && !trailing) continue;
        write_text("kreg: the kernel ");
        write_text(access_verb(context));
        if (trailing) {
            write_text(" past the end of ");
            write_text(r.name.load());
            write_text(" (guard page at +");
            write_number(address - r.c_end.load());
        } else {
            write_text(" before the start of ");
            write_text(r.name.load());
            write_text(" (guard page at -");
            write_number(r.c_begin.load() - address);
        }
        write_text(" bytes)\n");
        // Returning re-executes the faulting instruction, which now meets the default action.
        signal(signo, SIG_DFL);
        return;
    }
    // Not ours: the action that was there before takes it, on the same re-execution.
    sigaction(signo, signo == SIGBUS ? &g_previous_bus : &g_previous_segv, nullptr);
    if (info->si_code <= 0) raise(signo);  // sent, not a fault: it would not happen again by itself
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
    void* p = mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<unsigned char*>(p);
    if (mprotect(base_ + guard, body, PROT_READ | PROT_WRITE) != 0) {
        munmap(base_, mapped_);
        throw std::bad_alloc();
    }
    c_ = reinterpret_cast<float*>(base_ + guard + body) - count;
    band_ = reinterpret_cast<uint32_t*>(base_ + guard);
    band_elements_ = size_t(reinterpret_cast<uint32_t*>(c_) - band_);
    fill_band();
}

GuardedFloats::~GuardedFloats() {
    if (base_ != nullptr) munmap(base_, mapped_);
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

    stack_t alt{};
    alt.ss_sp = g_alt_stack;
    alt.ss_size = sizeof g_alt_stack;
    sigaltstack(&alt, &g_previous_stack);
    struct sigaction action {};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &g_previous_segv);
    sigaction(SIGBUS, &action, &g_previous_bus);
}

GuardPageWatch::~GuardPageWatch() {
    sigaction(SIGSEGV, &g_previous_segv, nullptr);
    sigaction(SIGBUS, &g_previous_bus, nullptr);
    g_region_count = 0;
    g_watch_active = false;
    if ((g_previous_stack.ss_flags & SS_DISABLE) != 0) {
        stack_t off{};
        off.ss_flags = SS_DISABLE;
        sigaltstack(&off, nullptr);
    } else {
        sigaltstack(&g_previous_stack, nullptr);
    }
}

}  // namespace kreg
