// Address space with inaccessible pages around a buffer (measure/guard_pages.hpp): reserved without
// access, then the buffer's pages made readable and writable. POSIX: mmap(PROT_NONE) and mprotect;
// Windows: VirtualAlloc(MEM_RESERVE, PAGE_NOACCESS) and VirtualAlloc(MEM_COMMIT, PAGE_READWRITE).
#pragma once

#include <cstddef>

namespace kreg::platform {

size_t page_size();
// bytes (a multiple of page_size()) of address space nothing may touch; nullptr when it cannot be had.
void* reserve_inaccessible(size_t bytes);
// Makes [at, at + bytes) (page aligned, inside a reservation) readable and writable; false on failure.
bool make_read_write(void* at, size_t bytes);
// Gives back a whole reservation (the pointer and size reserve_inaccessible was called with).
void release(void* base, size_t bytes);

}  // namespace kreg::platform
