// Tests of steps a process cannot undo (filters, namespaces, rlimits, cgroup moves) run them in a forked
// child: the body returns kPass, kFail or kSkip and writes what it saw into a message that travels back
// on a pipe; the parent asserts on the outcome.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <exception>
#include <functional>
#include <string>

namespace kreg::test {

constexpr int kPass = 0;
constexpr int kFail = 1;
constexpr int kSkip = 77;

struct ChildOutcome {
    int exit_code = -1;  // -1 when killed by a signal
    int signal = 0;
    std::string message;
    pid_t pid = -1;  // the child, reaped
};

inline ChildOutcome in_child(const std::function<int(std::string&)>& body) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {-1, 0, "pipe failed", -1};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(pipe_fds[0]);
        std::string message;
        int code = kFail;
        try {
            code = body(message);
        } catch (const std::exception& e) {
            message += std::string("exception: ") + e.what();
        }
        (void)!::write(pipe_fds[1], message.data(), message.size());
        ::_exit(code);
    }
    ::close(pipe_fds[1]);
    ChildOutcome outcome;
    outcome.pid = pid;
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(pipe_fds[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) outcome.message.append(chunk, size_t(n));
    ::close(pipe_fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
    return outcome;
}

}  // namespace kreg::test

// The child passed; a child that skipped makes the test skip with its message.
#define EXPECT_CHILD_PASSES(outcome_expr)                                                                          \
    do {                                                                                                           \
        const ::kreg::test::ChildOutcome outcome_ = (outcome_expr);                                                \
        if (outcome_.exit_code == ::kreg::test::kSkip) GTEST_SKIP() << outcome_.message;                           \
        EXPECT_EQ(outcome_.signal, 0) << "child killed by signal " << outcome_.signal << "\n" << outcome_.message; \
        EXPECT_EQ(outcome_.exit_code, ::kreg::test::kPass) << outcome_.message;                                    \
    } while (0)
