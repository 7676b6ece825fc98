#include "platform/guard_memory.hpp"

#include <windows.h>

namespace kreg::platform {

size_t page_size() {
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return size_t(info.dwPageSize);
}

void* reserve_inaccessible(size_t bytes) { return VirtualAlloc(nullptr, bytes, MEM_RESERVE, PAGE_NOACCESS); }

bool make_read_write(void* at, size_t bytes) { return VirtualAlloc(at, bytes, MEM_COMMIT, PAGE_READWRITE) == at; }

void release(void* base, size_t) { VirtualFree(base, 0, MEM_RELEASE); }

}  // namespace kreg::platform
