#include "worker/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace kreg {
namespace {

constexpr size_t kStderrTailBytes = 8192;
constexpr int kChildRequestFd = 3;
constexpr int kChildReplyFd = 4;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ExitInfo exit_info_from(int status) {
    ExitInfo info;
    if (WIFEXITED(status)) info.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) info.signal = signal_name(WTERMSIG(status));
    return info;
}

int dup_high(int fd) {
    const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (high < 0) throw std::runtime_error(std::string("fcntl(F_DUPFD_CLOEXEC): ") + std::strerror(errno));
    ::close(fd);
    return high;
}

}  // namespace

std::string signal_name(int signo) {
    if (const char* abbrev = ::sigabbrev_np(signo)) return std::string("SIG") + abbrev;
    return "signal " + std::to_string(signo);
}

std::string ExitInfo::describe() const {
    if (signal) return "killed by " + *signal;
    if (exit_code) return "exited with code " + std::to_string(*exit_code);
    return "ended";
}

WorkerProcess WorkerProcess::start(const std::string& exe, const std::vector<std::string>& args) {
    int request[2], reply[2], err[2];
    if (::pipe2(request, O_CLOEXEC) != 0 || ::pipe2(reply, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("cannot create worker pipes: ") + std::strerror(errno));
    // Keep the child's ends away from the fd numbers they are moved to.
    const int child_request = dup_high(request[0]);
    const int child_reply = dup_high(reply[1]);
    const int child_err = dup_high(err[1]);
    const int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

    std::vector<std::string> argv_storage;
    argv_storage.push_back(exe);
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);

    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("cannot start a worker (fork): ") + std::strerror(errno));
    if (pid == 0) {
        // Child: only async-signal-safe calls until exec.
        ::setpgid(0, 0);
        if (dev_null >= 0) ::dup2(dev_null, STDIN_FILENO);
        ::dup2(child_err, STDERR_FILENO);
        ::dup2(child_request, kChildRequestFd);
        ::dup2(child_reply, kChildReplyFd);
        ::execv(exe.c_str(), argv.data());
        const char msg[] = "kreg worker: exec failed\n";
        (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also from the parent, so the group exists before any kill
    ::close(child_request);
    ::close(child_reply);
    ::close(child_err);
    if (dev_null >= 0) ::close(dev_null);

    WorkerProcess w;
    w.pid_ = pid;
    w.request_fd_ = request[1];
    w.reply_fd_ = reply[0];
    w.stderr_fd_ = err[0];
    ::fcntl(w.stderr_fd_, F_SETFL, O_NONBLOCK);
    return w;
}

WorkerProcess::WorkerProcess(WorkerProcess&& o) noexcept { *this = std::move(o); }

WorkerProcess& WorkerProcess::operator=(WorkerProcess&& o) noexcept {
    if (this != &o) {
        if (pid_ > 0) kill_and_reap();
        close_fds();
        pid_ = std::exchange(o.pid_, -1);
        request_fd_ = std::exchange(o.request_fd_, -1);
        reply_fd_ = std::exchange(o.reply_fd_, -1);
        stderr_fd_ = std::exchange(o.stderr_fd_, -1);
        reply_buffer_ = std::move(o.reply_buffer_);
        stderr_tail_ = std::move(o.stderr_tail_);
    }
    return *this;
}

WorkerProcess::~WorkerProcess() {
    if (pid_ > 0) kill_and_reap();
    close_fds();
}

void WorkerProcess::close_fds() {
    for (int* fd : {&request_fd_, &reply_fd_, &stderr_fd_})
        if (*fd >= 0) {
            ::close(*fd);
            *fd = -1;
        }
}

void WorkerProcess::drain_stderr() {
    if (stderr_fd_ < 0) return;
    char chunk[4096];
    for (;;) {
        const ssize_t n = ::read(stderr_fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        stderr_tail_.append(chunk, size_t(n));
        if (stderr_tail_.size() > kStderrTailBytes) stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
    }
}

ExitInfo WorkerProcess::kill_and_reap() {
    if (pid_ <= 0) return {};
    ::kill(-pid_, SIGKILL);  // the whole group: anything the plugin started goes too
    ::kill(pid_, SIGKILL);
    return reap();
}

ExitInfo WorkerProcess::reap() {
    if (pid_ <= 0) return {};
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    ::kill(-pid_, SIGKILL);  // stragglers left in the group
    pid_ = -1;
    drain_stderr();
    return r > 0 ? exit_info_from(status) : ExitInfo{};
}

WorkerProcess::Reply WorkerProcess::exchange(const nlohmann::json& request, double timeout_s) {
    Reply reply;
    if (pid_ <= 0) return reply;
    const auto start = std::chrono::steady_clock::now();
    if (!request.is_null()) {
        const std::string line = request.dump() + "\n";
        size_t done = 0;
        while (done < line.size()) {
            const ssize_t n = ::write(request_fd_, line.data() + done, line.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {  // EPIPE: the worker is gone (SIGPIPE is ignored by the runner)
                reply.exit = kill_and_reap();
                return reply;
            }
            done += size_t(n);
        }
    }
    for (;;) {
        const size_t newline = reply_buffer_.find('\n');
        if (newline != std::string::npos) {
            const std::string line = reply_buffer_.substr(0, newline);
            reply_buffer_.erase(0, newline + 1);
            try {
                reply.message = nlohmann::json::parse(line);
                reply.outcome = Outcome::reply;
            } catch (const nlohmann::json::exception&) {
                reply.outcome = Outcome::ended;
                stderr_tail_ += "\n[kreg] worker sent a line that is not JSON: " + line.substr(0, 200);
                reply.exit = kill_and_reap();
            }
            return reply;
        }
        const double left = timeout_s - seconds_since(start);
        if (left <= 0) {
            reply.outcome = Outcome::timed_out;
            reply.exit = kill_and_reap();
            return reply;
        }
        pollfd fds[2] = {{reply_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
        const int wait_ms = int(std::min(left * 1000.0 + 1, 1000.0));
        const int ready = ::poll(fds, 2, wait_ms);
        if (ready < 0 && errno != EINTR) {
            reply.exit = kill_and_reap();
            return reply;
        }
        if (fds[1].revents & (POLLIN | POLLHUP)) drain_stderr();
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char chunk[65536];
            const ssize_t n = ::read(reply_fd_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {  // EOF: the worker died or closed its end
                reply.outcome = Outcome::ended;
                // Give it a moment to finish dying so that the exit status is its own, not our kill.
                for (int i = 0; i < 50; ++i) {
                    int status = 0;
                    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
                    if (r == pid_) {
                        ::kill(-pid_, SIGKILL);
                        pid_ = -1;
                        drain_stderr();
                        reply.exit = exit_info_from(status);
                        return reply;
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
                reply.exit = kill_and_reap();
                return reply;
            }
            reply_buffer_.append(chunk, size_t(n));
        }
    }
}

void WorkerProcess::stop(double grace_s) {
    if (pid_ <= 0) return;
    const Reply r = exchange({{"op", "exit"}}, grace_s);
    if (pid_ > 0) {
        if (r.outcome == Outcome::reply) {
            // Wait briefly for a clean exit, then make sure.
            for (int i = 0; i < 100 && pid_ > 0; ++i) {
                int status = 0;
                if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                    pid_ = -1;
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        if (pid_ > 0) kill_and_reap();
    }
    close_fds();
}

}  // namespace kreg
