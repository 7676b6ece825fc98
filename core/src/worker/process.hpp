// The parent side of a worker: start it, exchange JSON lines with a deadline, and explain how it ended.
//
// Everything a worker writes is a claim from the code it loaded (docs/GRADING.md). So the exchange is
// strict: every request carries an id made of a per-worker nonce and a sequence number, and every line
// the worker writes must be a JSON object of at most kMaxWorkerLineBytes, valid UTF-8, carrying the
// id of the request in flight. A line outside that — a stray byte between requests, a reply to another
// id, a line that is not JSON, a descriptor nobody asked for — is a protocol violation: the worker is
// killed on the spot and the exchange says so. Death is seen through the process itself (its reaper's
// report or a pidfd), not through EOF on a channel a child may hold open, and a stopped worker counts
// as dead.
#pragma once

#include "platform/process_id.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kreg {

class ConfinedProcess;
namespace platform {
class ChildProcess;
}

inline constexpr size_t kMaxWorkerLineBytes = size_t(1) << 20;

// How a worker process ended.
struct ExitInfo {
    std::optional<int> exit_code;
    std::optional<std::string> signal;   // "SIGSEGV"
    std::optional<std::string> stopped;  // "SIGSTOP": it was stopped, which counts as dead, and killed
    long max_rss_kib = 0;                // peak resident set, where known (0: unknown)
    std::string describe() const;        // "killed by SIGSEGV", "exited with code 3", "stopped by SIGSTOP; killed"
};

std::string signal_name(int signo);

// "" when message carries no field but those allowed; else the violation naming the first other one.
std::string unexpected_field(const nlohmann::json& message, std::initializer_list<const char*> allowed);

// How a confined worker is started (sandbox/confined_spawn.hpp).
struct WorkerConfinement {
    std::string scratch_dir;               // its working folder; removed by the caller
    uint64_t scratch_tmpfs_bytes = 0;      // > 0: a private tmpfs of this size over it, inside its namespaces
    std::vector<std::string> environment;  // its whole environment
    std::function<void(platform::ProcessId)> before_start;  // places the reaper (a cgroup) before anything runs
};

class WorkerProcess {
public:
    // Starts `exe args... --nonce N` with a request pipe (fd 3), a reply socket (fd 4, so that it can
    // pass descriptors), a captured stderr and stdin from /dev/null. Plain: in its own process group.
    // Confined: in its own namespaces and identity (sandbox/confined_spawn.hpp). Throws
    // std::runtime_error if the process cannot be started (or not confined as asked).
    static WorkerProcess start(const std::string& exe, const std::vector<std::string>& args,
                               const WorkerConfinement* confinement = nullptr);

    WorkerProcess();  // no process: running() is false
    WorkerProcess(WorkerProcess&& other) noexcept;
    WorkerProcess& operator=(WorkerProcess&& other) noexcept;
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;
    ~WorkerProcess();  // kills and reaps a worker still running, with everything it started

    enum class Outcome { reply, ended, timed_out, violation };
    struct Reply {
        Outcome outcome = Outcome::ended;
        nlohmann::json message;  // when outcome == reply
        ExitInfo exit;           // when ended, timed out or violation (after the kill)
        std::string violation;   // when outcome == violation: what the worker did
        // A stop was requested (worker/stop_request.hpp) while waiting: the worker was killed for it and
        // outcome is `ended`. Only a runner that installed the stop handlers ever sees this.
        bool interrupted = false;
    };

    // A message of the request in flight that is not its final reply (its op is one of the interim
    // ops): the handler may answer with send(). fd is the descriptor that came with the message, or -1;
    // the handler owns it. Returns "" to go on, or the violation that ends the worker.
    using InterimHandler = std::function<std::string(const nlohmann::json& message, int fd)>;
    struct Interim {
        std::set<std::string> ops;          // interim message ops
        std::set<std::string> ops_with_fd;  // of those, the ones that bring one descriptor
        InterimHandler handler;
    };

    // Sends request (unless null: then waits for the worker's hello) with a fresh id and waits up to
    // timeout_s for its final reply. On timeout or violation the worker and everything it started is
    // killed.
    Reply exchange(nlohmann::json request, double timeout_s, const Interim* interim = nullptr);
    // An answer to an interim message, with the id of the request in flight.
    bool send(nlohmann::json message);
    // Asks the worker to exit and reaps it (killing it if it does not go within grace_s).
    void stop(double grace_s = 2.0);

    bool running() const;
    // running(), after looking whether it ended since the last exchange (and reaping it if so).
    bool alive();
    // The process that runs the worker's code, numbered as this process's PID namespace numbers it (a confined
    // worker's program is its reaper's only child); -1 when it cannot be found.
    platform::ProcessId program_pid() const;
    // Its peak resident set (KiB) once it was reaped, else 0.
    long max_rss_kib() const { return exit_ ? exit_->max_rss_kib : 0; }
    const std::string& nonce() const { return nonce_; }
    const std::string& request_id() const { return request_id_; }
    // The last few KB the worker wrote to stderr (a crashing plugin's last words), as it wrote them.
    std::string stderr_tail() const { return stderr_tail_; }
    // What the confined spawn set up and could not ({"applied":[...],"unavailable":[...]}), or null.
    nlohmann::json confinement_report() const;

private:
    ExitInfo kill_and_reap();
    ExitInfo reap_if_dead(bool block);
    void close_fds();
    void drain_stderr();
    // Reads what is there on the reply socket into reply_buffer_ (descriptors into received_fds_).
    // Returns false at EOF or on error.
    bool read_reply_socket();
    Reply violation(std::string what);
    // exchange's steps: the complete lines read so far (the reply, a violation, or nullopt to go on waiting),
    // and one wait for the worker (false: the wait failed).
    std::optional<Reply> take_reply_lines(const Interim* interim, bool dead);
    bool wait_for_worker(double left, bool& dead);
    bool write_request(const nlohmann::json& message);

    platform::ProcessId pid_ = -1;               // plain workers
    std::unique_ptr<ConfinedProcess> confined_;  // confined workers (their reaper)
    int death_fd_ = -1;                          // pidfd, or the reaper's status pipe (not owned)
    int request_fd_ = -1;
    int reply_fd_ = -1;
    int stderr_fd_ = -1;
    std::string nonce_;
    uint64_t sequence_ = 0;
    std::string request_id_;
    std::string reply_buffer_;
    std::vector<int> received_fds_;
    std::string stderr_tail_;
    std::optional<ExitInfo> exit_;  // once reaped
    // Where descriptors cannot travel (Windows): the worker on the platform layer's child process, its channel
    // its stdin and stdout (worker/stdio_process.cpp); the members above are unused there.
    std::unique_ptr<platform::ChildProcess> child_;
};

}  // namespace kreg
