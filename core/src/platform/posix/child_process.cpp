#include "platform/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace kreg::platform {

struct ChildProcess::State {
    pid_t pid = -1;
    bool own_group = true;  // kill_tree kills the group, else the child alone
    int in = -1, out = -1, err = -1;
    std::string out_buffer, err_tail;
    bool killed = false;
    std::optional<ChildExit> exit;
};

namespace {

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

std::string fault_name(int signo) {
    switch (signo) {
        case SIGSEGV:
            return "SIGSEGV";
        case SIGBUS:
            return "SIGBUS";
        case SIGABRT:
            return "SIGABRT";
        case SIGFPE:
            return "SIGFPE";
        case SIGILL:
            return "SIGILL";
        case SIGKILL:
            return "SIGKILL";
        case SIGTERM:
            return "SIGTERM";
        default:
            return "signal " + std::to_string(signo);
    }
}

// Appends what is there on fd (non-blocking read); false at EOF or on an error other than EAGAIN.
bool read_available(int fd, std::string& into) {
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    if (n == 0) return false;
    into.append(chunk, size_t(n));
    return true;
}

// After the child's end: what is left on fd, without waiting for a writer that may still hold it open.
void drain(int fd, std::string& into) {
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        into.append(chunk, size_t(n));
    }
}

void keep_tail(std::string& tail) {
    if (tail.size() > kStderrTailBytes) tail.erase(0, tail.size() - kStderrTailBytes);
}

}  // namespace

ChildProcess::ChildProcess() = default;
ChildProcess::ChildProcess(std::unique_ptr<State> state) : state_(std::move(state)) {}
ChildProcess::ChildProcess(ChildProcess&& other) noexcept = default;
ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        if (state_ && !state_->exit) {
            kill_tree();
            wait();
        }
        state_ = std::move(other.state_);
    }
    return *this;
}
ChildProcess::~ChildProcess() {
    if (state_ && !state_->exit) {
        kill_tree();
        wait();
    }
}

ChildProcess ChildProcess::start(const std::filesystem::path& exe, const std::vector<std::string>& args,
                                 const ChildLimits& limits) {
    int in[2], out[2], err[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
        throw std::runtime_error("cannot start '" + exe.string() + "': pipes: " + std::strerror(errno));
    const std::string program = exe.string();
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("cannot start '" + program + "': fork: " + std::strerror(errno));
    if (pid == 0) {
        // Only async-signal-safe calls until exec.
        if (limits.own_process_group) ::setpgid(0, 0);
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        if (limits.memory_bytes > 0) {
            const rlimit limit{rlim_t(limits.memory_bytes), rlim_t(limits.memory_bytes)};
            ::setrlimit(RLIMIT_AS, &limit);
        }
        ::execv(program.c_str(), argv.data());
        const char msg[] = "kreg: exec failed\n";
        (void)!::write(2, msg, sizeof(msg) - 1);
        ::_exit(127);
    }
    if (limits.own_process_group) ::setpgid(pid, pid);  // also from the parent: the group exists before any kill
    auto state = std::make_unique<State>();
    state->pid = pid;
    state->own_group = limits.own_process_group;
    state->in = in[1];
    state->out = out[0];
    state->err = err[0];
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    ::fcntl(state->out, F_SETFL, O_NONBLOCK);
    ::fcntl(state->err, F_SETFL, O_NONBLOCK);
    return ChildProcess(std::move(state));
}

bool ChildProcess::write_line(std::string_view line) {
    if (!state_ || state_->in < 0) return false;
    std::string text(line);
    text += '\n';
    std::string_view left = text;
    while (!left.empty()) {
        // MSG_NOSIGNAL does not exist for pipes: a child that closed its stdin gives EPIPE only with
        // SIGPIPE ignored, which the caller decides; a write to a dead reader fails either way.
        const ssize_t n = ::write(state_->in, left.data(), left.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        left.remove_prefix(size_t(n));
    }
    return true;
}

ChildProcess::Read ChildProcess::read_line(std::string& line, double timeout_s) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::duration<double>(timeout_s);
    State& s = *state_;
    for (;;) {
        const size_t newline = s.out_buffer.find('\n');
        if (newline != std::string::npos) {
            line = s.out_buffer.substr(0, newline);
            s.out_buffer.erase(0, newline + 1);
            return line.size() > kMaxChildLineBytes ? Read::too_long : Read::line;
        }
        if (s.out_buffer.size() > kMaxChildLineBytes) return Read::too_long;
        if (s.out < 0) return Read::closed;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        if (left <= 0) return Read::timed_out;
        pollfd fds[2] = {{s.out, POLLIN, 0}, {s.err, POLLIN, 0}};
        const int ready = ::poll(fds, s.err >= 0 ? 2 : 1, int(left));
        if (ready < 0 && errno != EINTR) return Read::closed;
        if (ready <= 0) continue;
        if (s.err >= 0 && fds[1].revents != 0) {
            if (!read_available(s.err, s.err_tail)) close_fd(s.err);
            keep_tail(s.err_tail);
        }
        if (fds[0].revents != 0 && !read_available(s.out, s.out_buffer)) close_fd(s.out);
    }
}

void ChildProcess::kill_tree() {
    if (!state_ || state_->exit || state_->pid <= 0) return;
    if (state_->own_group) ::kill(-state_->pid, SIGKILL);  // the whole group: anything the child started goes too
    ::kill(state_->pid, SIGKILL);
    state_->killed = true;
}

ChildExit ChildProcess::wait() {
    State& s = *state_;
    if (s.exit) return *s.exit;
    close_fd(s.in);
    int status = 0;
    while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (s.killed && s.own_group) ::kill(-s.pid, SIGKILL);  // stragglers left in its group
    if (s.err >= 0) drain(s.err, s.err_tail);
    keep_tail(s.err_tail);
    ChildExit exit;
    exit.killed = s.killed;
    if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status) && !(s.killed && WTERMSIG(status) == SIGKILL)) exit.fault = fault_name(WTERMSIG(status));
    close_fd(s.out);
    close_fd(s.err);
    s.exit = exit;
    return exit;
}

long ChildProcess::pid() const { return state_ ? long(state_->pid) : -1; }

std::string ChildProcess::stderr_tail() const { return state_ ? state_->err_tail : std::string(); }

}  // namespace kreg::platform
