// The parent side of a worker: start it, exchange JSON lines with a deadline, and explain how it ended.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace kreg {

// How a worker process ended.
struct ExitInfo {
    std::optional<int> exit_code;
    std::optional<std::string> signal;  // "SIGSEGV"
    std::string describe() const;       // "killed by SIGSEGV", "exited with code 3"
};

std::string signal_name(int signo);

class WorkerProcess {
public:
    // Starts `exe args...` with a request pipe, a reply pipe and a captured stderr, in its own process
    // group. Throws std::runtime_error if the process cannot be started.
    static WorkerProcess start(const std::string& exe, const std::vector<std::string>& args);

    WorkerProcess(WorkerProcess&& other) noexcept;
    WorkerProcess& operator=(WorkerProcess&& other) noexcept;
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;
    ~WorkerProcess();  // kills and reaps a worker still running

    enum class Outcome { reply, ended, timed_out };
    struct Reply {
        Outcome outcome = Outcome::ended;
        nlohmann::json message;  // when outcome == reply
        ExitInfo exit;           // when ended or timed out (after the kill)
    };

    // Sends request (unless null) and waits up to timeout_s for one reply line. On timeout the whole
    // process group is killed. A line that is not JSON counts as the worker ending.
    Reply exchange(const nlohmann::json& request, double timeout_s);
    // Asks the worker to exit and reaps it (killing it if it does not go within grace_s).
    void stop(double grace_s = 2.0);

    pid_t pid() const { return pid_; }
    // The last few KB the worker wrote to stderr (a crashing plugin's last words).
    std::string stderr_tail() const { return stderr_tail_; }

private:
    WorkerProcess() = default;
    ExitInfo kill_and_reap();
    ExitInfo reap();
    void close_fds();
    void drain_stderr();

    pid_t pid_ = -1;
    int request_fd_ = -1;
    int reply_fd_ = -1;
    int stderr_fd_ = -1;
    std::string reply_buffer_;
    std::string stderr_tail_;
};

}  // namespace kreg
