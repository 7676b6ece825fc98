// worker/allocation_watch.hpp: every way a C++ plugin asks the C library for memory passes the runner's
// allocator, and a request RLIMIT_DATA refuses is counted (with its size); one the limit allows is not. Each
// test sets RLIMIT_DATA in a forked child (tests/support/in_child.hpp): a limit cannot be raised again.
#include "worker/allocation_watch.hpp"

#include <gtest/gtest.h>

#include "in_child.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

namespace kreg {
namespace {

using test::in_child;
using test::kFail;
using test::kPass;

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kHeadroom = 64 * kMiB;  // RLIMIT_DATA: what the child holds now, plus this
constexpr size_t kTooMuch = 256 * kMiB;  // each way's request: four times the headroom

void* volatile escape = nullptr;  // the optimiser may not drop an allocation whose address escapes

uint64_t data_bytes_now() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmData:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
    return 0;
}

// In a child under RLIMIT_DATA: ask() makes one request of kTooMuch its way; it must be refused and seen,
// and a request of 1 MiB the same way afterwards must pass unseen.
void expect_seen(const char* way, const std::function<bool(size_t)>& ask) {
    const auto outcome = in_child([&](std::string& message) {
        const rlimit limit{data_bytes_now() + kHeadroom, data_bytes_now() + kHeadroom};
        if (::setrlimit(RLIMIT_DATA, &limit) != 0) return (message = "setrlimit failed"), kFail;
        reset_allocation_refusals();
        if (ask(kTooMuch)) return (message = std::string(way) + ": 256 MiB was granted under a 64 MiB headroom"), kFail;
        const AllocationRefusals refused = allocation_refusals();
        if (refused.count == 0) return (message = std::string(way) + ": the refusal was not seen"), kFail;
        // A single request asks kTooMuch; a vector's doubling is refused at its first size past the headroom.
        if (refused.largest < kHeadroom / 2)
            return (message = std::string(way) + ": the largest refusal reads " + std::to_string(refused.largest)),
                   kFail;
        reset_allocation_refusals();
        if (!ask(kMiB)) return (message = std::string(way) + ": 1 MiB was refused"), kFail;
        if (allocation_refusals().count != 0)
            return (message = std::string(way) + ": a granted request counted"), kFail;
        return kPass;
    });
    EXPECT_EQ(outcome.exit_code, kPass) << way << ": " << outcome.message;
}

TEST(AllocationWatch, SeesARefusalByEveryWayOfAsking) {
    expect_seen("malloc", [](size_t n) { return (escape = std::malloc(n)) != nullptr; });
    expect_seen("calloc", [](size_t n) { return (escape = std::calloc(n / 16, 16)) != nullptr; });
    expect_seen("realloc", [](size_t n) {
        void* small = std::malloc(16);
        void* grown = std::realloc(small, n);
        escape = grown ? grown : small;
        return grown != nullptr;
    });
    expect_seen("posix_memalign", [](size_t n) {
        void* p = nullptr;
        const int err = ::posix_memalign(&p, 4096, n);
        escape = p;
        return err == 0;
    });
    expect_seen("aligned_alloc", [](size_t n) { return (escape = std::aligned_alloc(4096, n)) != nullptr; });
    expect_seen("memalign", [](size_t n) { return (escape = ::memalign(64, n)) != nullptr; });
    expect_seen("valloc", [](size_t n) { return (escape = ::valloc(n)) != nullptr; });
    expect_seen("sbrk", [](size_t n) { return ::sbrk(intptr_t(n)) != reinterpret_cast<void*>(-1); });
    expect_seen("new[]", [](size_t n) {
        try {
            escape = new char[n];
            return true;
        } catch (const std::bad_alloc&) {
            return false;
        }
    });
    expect_seen("std::vector growth", [](size_t n) {
        try {
            auto* v = new std::vector<char>();
            escape = v;
            for (size_t size = 4096; size <= n; size *= 2) v->resize(size);
            return true;
        } catch (const std::bad_alloc&) {
            return false;
        }
    });
}

TEST(AllocationWatch, ResetForgetsEarlierRefusals) {
    const auto outcome = in_child([](std::string& message) {
        const rlimit limit{data_bytes_now() + kHeadroom, data_bytes_now() + kHeadroom};
        if (::setrlimit(RLIMIT_DATA, &limit) != 0) return (message = "setrlimit failed"), kFail;
        escape = std::malloc(kTooMuch);
        escape = std::malloc(2 * kTooMuch);
        const AllocationRefusals refused = allocation_refusals();
        if (refused.count != 2 || refused.largest != 2 * kTooMuch)
            return (message =
                        "count " + std::to_string(refused.count) + ", largest " + std::to_string(refused.largest)),
                   kFail;
        reset_allocation_refusals();
        if (allocation_refusals().count != 0 || allocation_refusals().largest != 0)
            return (message = "not reset"), kFail;
        return kPass;
    });
    EXPECT_EQ(outcome.exit_code, kPass) << outcome.message;
}

}  // namespace
}  // namespace kreg
