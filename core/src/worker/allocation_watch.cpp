#include "worker/allocation_watch.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>

// glibc's own allocator under its exported names (the documented way to wrap malloc: "Replacing malloc" in
// the glibc manual; free and malloc_usable_size stay glibc's, they take what these return).
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* old, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);
void* __sbrk(intptr_t increment);
}

namespace kreg {
namespace {

std::atomic<uint64_t> refused_count{0};
std::atomic<size_t> refused_largest{0};

// Lock-free and allocation-free: it runs inside malloc.
void note_refused(size_t size) {
    refused_count.fetch_add(1, std::memory_order_relaxed);
    size_t seen = refused_largest.load(std::memory_order_relaxed);
    while (size > seen && !refused_largest.compare_exchange_weak(seen, size, std::memory_order_relaxed)) {
    }
}

void* watched(void* p, size_t size) {
    if (p == nullptr && size > 0) note_refused(size);
    return p;
}

}  // namespace

AllocationRefusals allocation_refusals() {
    return {refused_count.load(std::memory_order_relaxed), refused_largest.load(std::memory_order_relaxed)};
}

void reset_allocation_refusals() {
    refused_count.store(0, std::memory_order_relaxed);
    refused_largest.store(0, std::memory_order_relaxed);
}

}  // namespace kreg

extern "C" {

void* malloc(size_t size) { return kreg::watched(__libc_malloc(size), size); }

void* calloc(size_t count, size_t size) {
    const size_t total = size != 0 && count > SIZE_MAX / size ? SIZE_MAX : count * size;  // overflow: refused anyway
    return kreg::watched(__libc_calloc(count, size), total);
}

void* realloc(void* old, size_t size) { return kreg::watched(__libc_realloc(old, size), size); }

void* memalign(size_t alignment, size_t size) { return kreg::watched(__libc_memalign(alignment, size), size); }

void* aligned_alloc(size_t alignment, size_t size) { return kreg::watched(__libc_memalign(alignment, size), size); }

int posix_memalign(void** out, size_t alignment, size_t size) {
    // glibc's checks: a power of two, a multiple of sizeof(void*).
    if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
    void* p = kreg::watched(__libc_memalign(alignment, size), size);
    if (p == nullptr && size > 0) return ENOMEM;
    *out = p;
    return 0;
}

void* valloc(size_t size) { return kreg::watched(__libc_valloc(size), size); }

void* pvalloc(size_t size) { return kreg::watched(__libc_pvalloc(size), size); }

// A plugin's own sbrk (glibc's malloc grows its heap through __sbrk, which does not pass here).
void* sbrk(intptr_t increment) {
    void* p = __sbrk(increment);
    if (p == reinterpret_cast<void*>(-1) && increment > 0) kreg::note_refused(size_t(increment));
    return p;
}

}  // extern "C"
