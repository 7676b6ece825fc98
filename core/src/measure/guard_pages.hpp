// CPU runs (every run, strict or not): C, and the storage of A and B (verify/padded_operand.hpp), each in
// a mapping of its own with large inaccessible regions on both sides (far_guard_bytes: at least 64 MiB,
// at least the buffer's own size; reserving address space costs nothing), so a write past C faults
// wherever it lands, instead of landing in memory the process owns. Earlier: C between inaccessible pages, so a write
// past either end of C faults at the instruction that makes it, instead of landing in memory the process owns (where a
// value band can only notice it afterwards, and only if it lands inside the band).
//
// One mapping per buffer, page aligned:
//
//   [ guard region, PROT_NONE ][ band: kGuardBits words ][ C: count floats ][ guard region, PROT_NONE ]
//                                >= min_band words         ends on a page boundary
//
// The band before C stays (anticheat.hpp's describe_guard_damage): a small underrun into it is reported
// as the row's reason without killing the worker; past the end of C there is no band, the first float
// past C is already inaccessible. C's start is aligned like its byte size modulo the page (16 bytes
// when the row length is a multiple of 4 floats, 32 when of 8), no less than a kernel could count on
// from malloc for such rows.
//
// A fault in a guard region is explained by GuardPageWatch: while one is alive, a SIGSEGV or SIGBUS
// whose address lies in a watched region writes one line to stderr,
//     kreg: the kernel wrote past the end of C (guard page at +N bytes)
//     kreg: the kernel wrote before the start of C (guard page at -N bytes)
// (N counted from C's end or start; A and B's mappings say "A's padding" or "B's padding" for C; "read" instead of
// "wrote" where the CPU says the access was a read), then restores the default action and returns, so the fault happens
// again and the worker dies of SIGSEGV: the parent reports a crashed row with that line in the worker's stderr tail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kreg {

class GuardedFloats {
public:
    // count floats of C, at least min_band guard words before it, guard regions of guard_bytes (rounded
    // up to whole pages; the runner passes tile_guard_bytes, anticheat.hpp) on both sides. Throws std::bad_alloc when
    // the mapping cannot be made. name: what the buffer is called in the fault's line (a string literal: the handler
    // reads it).
    GuardedFloats(size_t count, size_t min_band, size_t guard_bytes, const char* name = "C");
    ~GuardedFloats();
    GuardedFloats(GuardedFloats&& other) noexcept;
    GuardedFloats& operator=(GuardedFloats&& other) noexcept;
    GuardedFloats(const GuardedFloats&) = delete;
    GuardedFloats& operator=(const GuardedFloats&) = delete;

    float* data() const { return c_; }
    size_t size() const { return count_; }
    // The value band right before C (band_elements() >= min_band; the page slack is band too).
    uint32_t* band() const { return band_; }
    size_t band_elements() const { return band_elements_; }
    // Rewrites every band word with kGuardBits.
    void fill_band();

    // The inaccessible regions: [leading_begin, band()) and [data() + size(), trailing_end).
    const unsigned char* leading_begin() const { return base_; }
    const unsigned char* trailing_end() const { return base_ + mapped_; }
    const char* name() const { return name_; }

private:
    void swap(GuardedFloats& other) noexcept;

    const char* name_ = "C";
    unsigned char* base_ = nullptr;
    size_t mapped_ = 0;
    uint32_t* band_ = nullptr;
    size_t band_elements_ = 0;
    float* c_ = nullptr;
    size_t count_ = 0;
};

// Explains faults in the guard regions of `buffers` while alive (see the top of this file). Installs
// platform/fault_watch.hpp's handlers (POSIX: SIGSEGV and SIGBUS, SA_ONSTACK, with an alternate stack for the
// constructing thread; Windows: a vectored handler for access violations) and puts the previous ones back when
// destroyed. A fault anywhere else is handed to the previous action. One
// watch at a time; the buffers must outlive it.
// The inaccessible region on each side of a buffer of buffer_bytes: max(64 MiB, buffer_bytes, at_least),
// so a write that misses the buffer by less than its own size (or 64 MiB) faults.
size_t far_guard_bytes(size_t buffer_bytes, size_t at_least);

class GuardPageWatch {
public:
    explicit GuardPageWatch(const std::vector<const GuardedFloats*>& buffers);
    ~GuardPageWatch();
    GuardPageWatch(const GuardPageWatch&) = delete;
    GuardPageWatch& operator=(const GuardPageWatch&) = delete;
};

}  // namespace kreg
