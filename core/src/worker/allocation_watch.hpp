// The worker's own sight of an allocation refused under RLIMIT_DATA (issue 22: a cap reached is memory_limit
// however the memory was asked for). This process's malloc, calloc, realloc, posix_memalign, aligned_alloc,
// memalign, valloc, pvalloc and sbrk are the runner's (allocation_watch.cpp): the executable's definitions come first
// in every later lookup, so a plugin's calls, operator new, std::vector's growth and the harness's own
// buffers all pass through them. Each forwards to glibc's allocator and, when the request is refused, counts
// it and keeps the largest size. What asks the kernel directly (a raw mmap or brk system call, which the
// static audit cannot see) is not seen here; with a cgroup, memory.events sees every way.
//
// Where the cap is a cgroup's, this is not used: the worker then has no RLIMIT_DATA and nothing is refused.
// A refusal seen here is the worker's claim (EndCause::memory_refused): a plugin could raise the count
// itself, and so turn its own failure into memory_limit, which is no better (docs/GRADING.md, "Outcomes").
#pragma once

#include <cstddef>
#include <cstdint>

namespace kreg {

struct AllocationRefusals {
    uint64_t count = 0;  // requests refused since the last reset
    size_t largest = 0;  // the largest of them, bytes
};

AllocationRefusals allocation_refusals();
void reset_allocation_refusals();

}  // namespace kreg
