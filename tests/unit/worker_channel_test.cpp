// The worker's end of a checked job's calls (worker/channel.hpp) and its per-call watchdog
// (pipeline/call_watchdog.hpp): what keeps the harness's own work out of the grader's window on a call.
#include "pipeline/call_watchdog.hpp"
#include "worker/channel.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kreg {
namespace {

// One line from a socket, and the descriptor that came with it (-1 if none).
std::string receive_line(int socket, int& fd) {
    std::string line;
    fd = -1;
    for (;;) {
        char byte;
        iovec iov{&byte, 1};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        if (::recvmsg(socket, &msg, 0) != 1) return line;
        if (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr && c->cmsg_type == SCM_RIGHTS)
            std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        if (byte == '\n') return line;
        line += byte;
    }
}

struct Ends {
    int request[2] = {-1, -1};  // parent writes [1], worker reads [0]
    int reply[2] = {-1, -1};    // worker writes [0], parent reads [1]
    Ends() {
        EXPECT_EQ(::pipe(request), 0);
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, reply), 0);
    }
    ~Ends() {
        for (int fd : {request[0], request[1], reply[0], reply[1]})
            if (fd >= 0) ::close(fd);
    }
    void answer(const nlohmann::json& message) const {
        const std::string line = message.dump() + "\n";
        ASSERT_EQ(::write(request[1], line.data(), line.size()), ssize_t(line.size()));
    }
};

TEST(ParentCallChannel, HandOverWaitsUntilTheParentHoldsTheOutput) {
    Ends ends;
    WorkerChannel channel(ends.request[0], ends.reply[0]);
    ParentCallChannel calls(channel, "n:1");
    const std::vector<float> c = {1.5f, -2.0f, 3.25f};
    std::atomic<bool> returned{false};
    std::string error;
    std::thread worker([&] {
        try {
            calls.hand_over(0, c.data(), c.size(), 0.5);
        } catch (const std::exception& e) {
            error = e.what();
        }
        returned = true;
    });
    int fd = -1;
    const nlohmann::json output = nlohmann::json::parse(receive_line(ends.reply[1], fd));
    EXPECT_EQ(output["op"], "output");
    EXPECT_EQ(output["call"], 0);
    ASSERT_GE(fd, 0);
    float held[3] = {};
    EXPECT_EQ(::pread(fd, held, sizeof held, 0), ssize_t(sizeof held));
    EXPECT_EQ(held[2], 3.25f);
    EXPECT_EQ(::fcntl(fd, F_GET_SEALS) & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW),
              F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW);
    ::close(fd);
    // Nothing more happens in the worker until the parent says it holds the output.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(returned.load());
    ends.answer({{"op", "output_held"}, {"id", "n:1"}, {"call", 0}});
    worker.join();
    EXPECT_TRUE(returned.load());
    EXPECT_EQ(error, "");
}

TEST(ParentCallChannel, AnAnswerForAnotherCallOrRequestIsFatal) {
    for (const nlohmann::json& answer :
         {nlohmann::json{{"op", "output_held"}, {"id", "n:1"}, {"call", 1}},
          nlohmann::json{{"op", "output_held"}, {"id", "n:2"}, {"call", 0}},
          nlohmann::json{{"op", "call_seed"}, {"id", "n:1"}, {"call", 0}, {"seed", 7}}}) {
        Ends ends;
        WorkerChannel channel(ends.request[0], ends.reply[0]);
        ParentCallChannel calls(channel, "n:1");
        const float c[1] = {1.0f};
        ends.answer(answer);
        EXPECT_THROW(calls.hand_over(0, c, 1, std::nullopt), WorkerFatal) << answer.dump();
    }
}

TEST(OutputMemfd, PreparedBeforeTheCallSealedWithItsOutput) {
    const std::vector<float> c(5000, 0.25f);
    OutputMemfd prepared = OutputMemfd::create(c.size(), 7);
    EXPECT_TRUE(prepared.fits(c.size(), 7));
    EXPECT_FALSE(prepared.fits(c.size(), 8));
    EXPECT_FALSE(prepared.fits(c.size() + 1, 7));
    const int fd = std::move(prepared).seal(c.data(), c.size(), 7);
    EXPECT_FALSE(prepared.fits(c.size(), 7));  // the descriptor is given up
    std::vector<float> held(c.size());
    EXPECT_EQ(::pread(fd, held.data(), held.size() * sizeof(float), 0), ssize_t(held.size() * sizeof(float)));
    EXPECT_EQ(held, c);
    EXPECT_NE(::fcntl(fd, F_GET_SEALS) & F_SEAL_WRITE, 0);
    EXPECT_LT(::pwrite(fd, c.data(), sizeof(float), 0), 0);  // sealed: nothing can change what the parent checks
    ::close(fd);
}

TEST(OutputMemfd, AWritableMappingOfItMadeMeanwhileFailsTheSeal) {
    // What a plugin could do during the call with the descriptor it finds: map it to change it later.
    const std::vector<float> c(1024, 1.0f);
    OutputMemfd prepared = OutputMemfd::create(c.size(), 3);
    int fd = -1;
    for (int candidate = 3; candidate < 1024 && fd < 0; ++candidate)
        if (::fcntl(candidate, F_GET_SEALS) >= 0) fd = candidate;  // a memfd that allows sealing
    ASSERT_GE(fd, 0);
    void* map = ::mmap(nullptr, c.size() * sizeof(float), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(map, MAP_FAILED);
    EXPECT_THROW((void)std::move(prepared).seal(c.data(), c.size(), 3), std::runtime_error);
    ::munmap(map, c.size() * sizeof(float));
}

TEST(CallWatchdog, ACallOverItsLimitEndsTheProcessAfterManyArmsAndDisarms) {
    EXPECT_EXIT(
        {
            for (int i = 0; i < 200; ++i) {
                arm_call_watchdog(0.2, "call " + std::to_string(i));
                disarm_call_watchdog();
            }
            arm_call_watchdog(0.2, "the last call");
            std::this_thread::sleep_for(std::chrono::seconds(5));
            std::exit(0);
        },
        ::testing::ExitedWithCode(kCallTimeoutExitCode), "the last call exceeded the per-call time limit of 0.2 s");
}

TEST(CallWatchdog, AShorterLimitAfterALongerOneWakesItEarlier) {
    EXPECT_EXIT(
        {
            arm_call_watchdog(60, "a slow call");
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its thread now waits for 60 s
            disarm_call_watchdog();
            arm_call_watchdog(0.05, "a quick call");
            std::this_thread::sleep_for(std::chrono::seconds(5));
            std::exit(0);
        },
        ::testing::ExitedWithCode(kCallTimeoutExitCode), "a quick call exceeded");
}

TEST(CallWatchdog, ADisarmedWatchdogEndsNothing) {
    EXPECT_EXIT(
        {
            arm_call_watchdog(0.05, "a call");
            disarm_call_watchdog();
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kreg
