// The child the platform tests start: one mode a way a worker can behave (answer, exit, crash on a guard
// page, hang, start a process of its own and hang, write a line too long, eat memory, keep a channel on stdio).
//   platform_child echo | exit <code> | fault | hang | grandchild | long-line | memory <MiB> | stdio-channel
#include "platform/child_process.hpp"
#include "platform/fault_watch.hpp"
#include "platform/file_io.hpp"
#include "platform/guard_memory.hpp"
#include "platform/host.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace kreg::platform;

unsigned char* g_guard_begin = nullptr;
size_t g_guard_bytes = 0;

bool explain(uintptr_t address, FaultAccess access) {
    const auto at = reinterpret_cast<uintptr_t>(g_guard_begin);
    if (address < at || address >= at + g_guard_bytes) return false;
    write_stderr(access == FaultAccess::write ? "platform_child: explained a write to the guard page\n"
                                              : "platform_child: explained another access to the guard page\n");
    return true;
}

[[noreturn]] void hang() {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

int fault() {
    const size_t page = page_size();
    auto* base = static_cast<unsigned char*>(reserve_inaccessible(2 * page));
    if (base == nullptr || !make_read_write(base, page)) {
        std::cerr << "platform_child: no guard memory\n";
        return 2;
    }
    base[page - 1] = 1;  // the last accessible byte: fine
    g_guard_begin = base + page;
    g_guard_bytes = page;
    install_fault_explainer(explain);
    std::cerr << "platform_child: writing one byte past the accessible page" << std::endl;
    *static_cast<volatile unsigned char*>(base + page) = 1;
    std::cerr << "platform_child: the write did not fault\n";
    return 4;
}

int memory(long mib) {
    std::vector<std::vector<char>> blocks;
    try {
        for (long i = 0; i < mib; ++i) blocks.emplace_back(size_t(1) << 20, char(i));
    } catch (const std::bad_alloc&) {
        std::cout << "out of memory after " << blocks.size() << " MiB" << std::endl;
        return 3;
    }
    std::cout << "allocated " << mib << " MiB" << std::endl;
    return 0;
}

// A worker's channel over its standard streams: what it prints afterwards (a plugin's printf, a write to the
// stdout handle) goes to stderr; only what it writes on the reply end reaches the parent's channel.
int stdio_channel() {
    const StdioChannel ends = take_stdio_channel();
    std::printf("a plugin's printf\n");
    std::fflush(stdout);
    std::cout << "a plugin's cout" << std::endl;
    char request[256];
    const long n = read_some(ends.request_fd, request, sizeof request);
    if (n <= 0) return 6;
    const std::string reply = "reply to " + std::string(request, size_t(n));
    return write_some(ends.reply_fd, reply.data(), reply.size()) == long(reply.size()) ? 0 : 7;
}

}  // namespace

int main(int argc, char** argv) {
    end_process_on_unhandled_fault();
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "echo") {
        std::cout << "hello " << process_id() << std::endl;
        std::string line;
        while (std::getline(std::cin, line)) {
            if (line == "exit") return 0;
            std::cout << "echo: " << line << std::endl;
        }
        return 1;
    }
    if (mode == "exit" && argc > 2) {
        std::cerr << "platform_child: exiting with " << argv[2] << std::endl;
        return std::atoi(argv[2]);
    }
    if (mode == "fault") return fault();
    if (mode == "hang") {
        std::cout << "hanging" << std::endl;
        hang();
    }
    if (mode == "grandchild") {
        ChildLimits in_my_group;
        in_my_group.own_process_group = false;
        ChildProcess grandchild = ChildProcess::start(executable_path(), {"hang"}, in_my_group);
        std::string line;
        if (grandchild.read_line(line, 30) != ChildProcess::Read::line) return 5;
        std::cout << "grandchild " << grandchild.pid() << std::endl;
        hang();
    }
    if (mode == "long-line") {
        const std::string chunk(4096, 'x');
        for (size_t written = 0; written <= kMaxChildLineBytes + chunk.size(); written += chunk.size())
            std::cout << chunk;
        std::cout.flush();
        hang();
    }
    if (mode == "memory" && argc > 2) return memory(std::atol(argv[2]));
    if (mode == "stdio-channel") return stdio_channel();
    std::cerr << "usage: platform_child echo | exit <code> | fault | hang | grandchild | long-line | memory <MiB> | "
                 "stdio-channel\n";
    return 64;
}
