#include "platform/guard_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

namespace kreg::platform {

size_t page_size() {
    static const size_t page = size_t(sysconf(_SC_PAGESIZE));
    return page;
}

void* reserve_inaccessible(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

bool make_read_write(void* at, size_t bytes) { return mprotect(at, bytes, PROT_READ | PROT_WRITE) == 0; }

void release(void* base, size_t bytes) { munmap(base, bytes); }

}  // namespace kreg::platform
