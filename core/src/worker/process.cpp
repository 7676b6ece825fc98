#include "worker/process.hpp"

#include "platform/child_process.hpp"  // WorkerProcess::child_, unused here (worker/stdio_process.cpp)
#include "common/elapsed.hpp"
#include "sandbox/confined_spawn.hpp"
#include "worker/stop_request.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kreg {
namespace {

constexpr size_t kStderrTailBytes = 8192;
constexpr int kChildRequestFd = 3;
constexpr int kChildReplyFd = 4;
constexpr int kMaxDescriptorsPerRead = 8;
// How often a plain worker is checked for having stopped (a confined one is watched by its reaper).
constexpr int kLivenessTickMs = 100;

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

std::string random_nonce() {
    uint64_t value = 0;
    if (::getrandom(&value, sizeof value, 0) != ssize_t(sizeof value))
        value = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^ uint64_t(::getpid()) << 32;
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

// A printable excerpt of a line for a violation's reason.
std::string excerpt(const std::string& line) {
    std::string out;
    for (unsigned char c : line.substr(0, 120)) out += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
    if (line.size() > 120) out += "...";
    return out;
}

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

}  // namespace

std::string signal_name(int signo) {
    if (const char* abbrev = ::sigabbrev_np(signo)) return std::string("SIG") + abbrev;
    return "signal " + std::to_string(signo);
}

std::string ExitInfo::describe() const {
    if (stopped) return "stopped by " + *stopped + " (a stopped worker counts as dead); killed";
    if (signal) return "killed by " + *signal;
    if (exit_code) return "exited with code " + std::to_string(*exit_code);
    return "ended";
}

WorkerProcess::WorkerProcess() = default;

WorkerProcess WorkerProcess::start(const std::string& exe, const std::vector<std::string>& args,
                                   const WorkerConfinement* confinement) {
    int request[2], err[2], reply[2];
    if (::pipe2(request, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("cannot create worker pipes: ") + std::strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("cannot create worker pipes: ") + std::strerror(errno));
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, reply) != 0)
        throw std::runtime_error(std::string("cannot create the worker's reply socket: ") + std::strerror(errno));
    // The child's ends above every descriptor number they are moved to.
    int child_request = dup_high(request[0]);
    int child_reply = dup_high(reply[1]);
    int child_err = dup_high(err[1]);

    WorkerProcess w;
    w.nonce_ = random_nonce();
    w.request_fd_ = request[1];
    w.reply_fd_ = reply[0];
    w.stderr_fd_ = err[0];
    ::fcntl(w.stderr_fd_, F_SETFL, O_NONBLOCK);
    ::fcntl(w.reply_fd_, F_SETFL, O_NONBLOCK);

    std::vector<std::string> argv_storage{exe};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    argv_storage.insert(argv_storage.end(), {"--nonce", w.nonce_});
    auto close_child_ends = [&] {
        close_fd(child_request);
        close_fd(child_reply);
        close_fd(child_err);
    };

    if (confinement) {
        Confinement c;
        c.executable = exe;
        c.argv = argv_storage;
        c.environment = confinement->environment;
        c.working_dir = confinement->scratch_dir;
        c.working_dir_tmpfs_bytes = confinement->scratch_tmpfs_bytes;
        c.fds = {{child_err, STDERR_FILENO}, {child_request, kChildRequestFd}, {child_reply, kChildReplyFd}};
        try {
            w.confined_ = std::make_unique<ConfinedProcess>(ConfinedProcess::start(c, confinement->before_start));
        } catch (...) {
            close_child_ends();
            throw;
        }
        close_child_ends();
        w.death_fd_ = w.confined_->status_fd();
        return w;
    }

    std::vector<char*> argv;
    for (auto& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const pid_t pid = ::fork();
    if (pid < 0) {
        close_child_ends();
        throw std::runtime_error(std::string("cannot start a worker (fork): ") + std::strerror(errno));
    }
    if (pid == 0) {
        // Child: only async-signal-safe calls until exec.
        ::setpgid(0, 0);
        if (dev_null >= 0) ::dup2(dev_null, STDIN_FILENO);
        ::dup2(child_err, STDERR_FILENO);
        ::dup2(child_request, kChildRequestFd);
        ::dup2(child_reply, kChildReplyFd);
        ::close_range(kChildReplyFd + 1, ~0U, 0);  // nothing else of the runner's leaks into the worker
        ::execv(exe.c_str(), argv.data());
        const char msg[] = "kreg worker: exec failed\n";
        (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also from the parent, so the group exists before any kill
    close_child_ends();
    if (dev_null >= 0) ::close(dev_null);
    w.pid_ = pid;
    w.death_fd_ = int(::syscall(SYS_pidfd_open, pid, 0));  // -1 on kernels before 5.3: the tick covers it
    return w;
}

platform::ProcessId WorkerProcess::program_pid() const {
    if (!confined_) return pid_;
    const platform::ProcessId reaper = confined_->reaper();
    // The reaper starts nothing but the program (and nothing in the namespace can fork past it: a child's
    // parent inside is the program or pid 1, and the program cannot fork under seccomp stage 2).
    std::ifstream children("/proc/" + std::to_string(reaper) + "/task/" + std::to_string(reaper) + "/children");
    platform::ProcessId child = -1;
    if (children >> child) return child;
    // Kernels without CONFIG_PROC_CHILDREN: the process whose parent is the reaper.
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        const size_t close = line.rfind(')');  // the command may hold spaces and parentheses
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 1));
        std::string state;
        platform::ProcessId parent = -1;
        if (rest >> state >> parent && parent == reaper) return std::stoll(name);
    }
    return -1;
}

WorkerProcess::WorkerProcess(WorkerProcess&& o) noexcept { *this = std::move(o); }

WorkerProcess& WorkerProcess::operator=(WorkerProcess&& o) noexcept {
    if (this != &o) {
        if (running()) kill_and_reap();
        close_fds();
        pid_ = std::exchange(o.pid_, -1);
        confined_ = std::move(o.confined_);
        death_fd_ = std::exchange(o.death_fd_, -1);
        request_fd_ = std::exchange(o.request_fd_, -1);
        reply_fd_ = std::exchange(o.reply_fd_, -1);
        stderr_fd_ = std::exchange(o.stderr_fd_, -1);
        nonce_ = std::move(o.nonce_);
        sequence_ = o.sequence_;
        request_id_ = std::move(o.request_id_);
        reply_buffer_ = std::move(o.reply_buffer_);
        received_fds_ = std::move(o.received_fds_);
        stderr_tail_ = std::move(o.stderr_tail_);
        exit_ = std::move(o.exit_);
    }
    return *this;
}

WorkerProcess::~WorkerProcess() {
    if (running()) kill_and_reap();
    close_fds();
}

bool WorkerProcess::running() const { return !exit_ && (pid_ > 0 || confined_); }

bool WorkerProcess::alive() {
    if (running()) reap_if_dead(false);
    return running();
}

nlohmann::json WorkerProcess::confinement_report() const {
    if (!confined_) return nullptr;
    return {{"applied", confined_->applied()}, {"unavailable", confined_->unavailable()}};
}

void WorkerProcess::close_fds() {
    if (pid_ > 0 || !confined_) close_fd(death_fd_);  // a pidfd is ours; the reaper's pipe is not
    death_fd_ = -1;
    for (int* fd : {&request_fd_, &reply_fd_, &stderr_fd_}) close_fd(*fd);
    for (int fd : received_fds_) ::close(fd);
    received_fds_.clear();
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
    if (exit_) return *exit_;
    if (confined_) {
        const ConfinedExit end = confined_->kill_and_reap();
        ExitInfo info =
            end.known ? exit_info_from(end.wait_status) : ExitInfo{std::nullopt, std::string("SIGKILL"), {}, 0};
        if (end.stopped_by) info.stopped = signal_name(end.stopped_by);
        info.max_rss_kib = end.max_rss_kib;
        exit_ = info;
    } else if (pid_ > 0) {
        ::kill(-pid_, SIGKILL);  // the whole group: anything the plugin started goes too
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        ::kill(-pid_, SIGKILL);
        exit_ = exit_info_from(status);
    } else {
        exit_ = ExitInfo{};
    }
    drain_stderr();
    return *exit_;
}

ExitInfo WorkerProcess::reap_if_dead(bool block) {
    if (exit_) return *exit_;
    if (confined_) {
        pollfd pfd{death_fd_, POLLIN, 0};
        if (block || ::poll(&pfd, 1, 0) > 0) {
            const ConfinedExit end = confined_->wait(block ? 1.0 : 0.5);
            ExitInfo info =
                end.known ? exit_info_from(end.wait_status) : ExitInfo{std::nullopt, std::string("SIGKILL"), {}, 0};
            if (end.stopped_by) info.stopped = signal_name(end.stopped_by);
            info.max_rss_kib = end.max_rss_kib;
            exit_ = info;
            drain_stderr();
        }
        return exit_.value_or(ExitInfo{});
    }
    if (pid_ <= 0) return ExitInfo{};
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, (block ? 0 : WNOHANG) | WUNTRACED);
    if (r != pid_) return ExitInfo{};
    if (WIFSTOPPED(status)) {  // a stopped worker counts as dead
        const std::string stopped = signal_name(WSTOPSIG(status));
        kill_and_reap();
        exit_->stopped = stopped;
        return *exit_;
    }
    ::kill(-pid_, SIGKILL);  // stragglers left in its group
    exit_ = exit_info_from(status);
    drain_stderr();
    return *exit_;
}

bool WorkerProcess::read_reply_socket() {
    for (;;) {
        char chunk[65536];
        iovec iov{chunk, sizeof chunk};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxDescriptorsPerRead)];
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        const ssize_t n = ::recvmsg(reply_fd_, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
            const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; ++i) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                received_fds_.push_back(fd);
            }
        }
        if (msg.msg_flags & MSG_CTRUNC) received_fds_.push_back(-1);  // more than we take: a violation later
        if (n <= 0) return false;
        reply_buffer_.append(chunk, size_t(n));
        if (reply_buffer_.size() > 2 * kMaxWorkerLineBytes || received_fds_.size() > size_t(kMaxDescriptorsPerRead))
            return true;  // the caller sees the violation
    }
}

WorkerProcess::Reply WorkerProcess::violation(std::string what) {
    Reply reply;
    reply.outcome = Outcome::violation;
    reply.violation = std::move(what);
    reply.exit = kill_and_reap();
    return reply;
}

bool WorkerProcess::write_request(const nlohmann::json& message) {
    const std::string line = message.dump() + "\n";
    size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(request_fd_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;  // EPIPE: the worker is gone (SIGPIPE is ignored by the runner)
        done += size_t(n);
    }
    return true;
}

bool WorkerProcess::send(nlohmann::json message) {
    if (!running()) return false;
    message["id"] = request_id_;
    return write_request(message);
}

// Every complete line of reply_buffer_, in order: interim messages go to their handler; the reply (or a
// violation) ends the exchange, nullopt while no reply came yet.
std::optional<WorkerProcess::Reply> WorkerProcess::take_reply_lines(const Interim* interim, bool dead) {
    for (size_t newline; (newline = reply_buffer_.find('\n')) != std::string::npos;) {
        const std::string line = reply_buffer_.substr(0, newline);
        reply_buffer_.erase(0, newline + 1);
        if (line.size() > kMaxWorkerLineBytes)
            return violation("wrote a line of " + std::to_string(line.size()) + " bytes (the limit is " +
                             std::to_string(kMaxWorkerLineBytes) + ")");
        nlohmann::json message;
        try {
            message = nlohmann::json::parse(line);  // rejects invalid UTF-8 too
        } catch (const nlohmann::json::exception&) {
            return violation("wrote a line that is not JSON (or not UTF-8): \"" + excerpt(line) + "\"");
        }
        if (!message.is_object() || !message.contains("op") || !message["op"].is_string())
            return violation("wrote a line that is not a protocol message: \"" + excerpt(line) + "\"");
        const auto id = message.find("id");
        if (id == message.end() || !id->is_string() || *id != request_id_)
            return violation("wrote a message for another request (id " +
                             (id == message.end() ? std::string("missing") : id->dump()) + ", expected \"" +
                             request_id_ + "\"): \"" + excerpt(line) + "\"");
        const std::string op = message["op"].get<std::string>();
        if (interim && interim->ops.count(op)) {
            int fd = -1;
            if (interim->ops_with_fd.count(op) && !received_fds_.empty()) {
                fd = received_fds_.front();
                received_fds_.erase(received_fds_.begin());
            }
            if (std::string why = interim->handler(message, fd); !why.empty()) return violation(why);
            continue;
        }
        if (!received_fds_.empty()) return violation("passed a descriptor no message asked for");
        if (!reply_buffer_.empty()) return violation("wrote more after its reply: \"" + excerpt(reply_buffer_) + "\"");
        message.erase("id");
        Reply reply;
        reply.outcome = Outcome::reply;
        reply.message = std::move(message);
        if (dead) reply.exit = exit_.value_or(ExitInfo{});
        return reply;
    }
    return std::nullopt;
}

// Waits up to left seconds (at most a liveness tick) for the worker to write or end, reading what it wrote and
// what it said on stderr; dead once it has ended (or closed its channel and been killed). False when the wait
// itself failed.
bool WorkerProcess::wait_for_worker(double left, bool& dead) {
    pollfd fds[3] = {{reply_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}, {death_fd_, POLLIN, 0}};
    const int wait_ms = int(std::min(left * 1000.0 + 1, double(kLivenessTickMs)));
    const int ready = ::poll(fds, death_fd_ >= 0 ? 3 : 2, wait_ms);
    if (ready < 0 && errno != EINTR) return false;
    if (fds[1].revents & (POLLIN | POLLHUP)) drain_stderr();
    bool channel_closed = false;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) channel_closed = !read_reply_socket();
    // Death comes from the process, not from EOF on a channel a child of it may hold open.
    if (reap_if_dead(false), exit_) {
        read_reply_socket();  // a last reply it wrote before ending still counts
        drain_stderr();
        dead = true;
    } else if (channel_closed) {
        // It closed its end of the channel; give it a moment to end so that its status is its own.
        for (int i = 0; i < 50 && !exit_; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            reap_if_dead(false);
        }
        if (!exit_) kill_and_reap();
        dead = true;
    }
    return true;
}

WorkerProcess::Reply WorkerProcess::exchange(nlohmann::json request, double timeout_s, const Interim* interim) {
    Reply reply;
    if (!running()) {
        reply.exit = exit_.value_or(ExitInfo{});
        return reply;
    }
    const auto start = std::chrono::steady_clock::now();
    // Between two requests a worker has nothing to say: whatever arrived since the last reply is out
    // of protocol (a plugin's thread writing onto the channel), and so is anything it wrote after it.
    // (The hello is the one line a worker writes unasked.)
    read_reply_socket();
    if (!request.is_null() && !reply_buffer_.empty())
        return violation("wrote " + std::to_string(reply_buffer_.size()) + " bytes outside any request: \"" +
                         excerpt(reply_buffer_) + "\"");
    if (!received_fds_.empty()) return violation("passed a descriptor outside any request");

    if (request.is_null()) {
        request_id_ = nonce_ + ":0";  // the hello
    } else {
        request_id_ = nonce_ + ":" + std::to_string(++sequence_);
        request["id"] = request_id_;
        if (!write_request(request)) {
            reply.exit = kill_and_reap();
            return reply;
        }
    }

    bool dead = false;
    for (;;) {
        // One descriptor travels with one message: a pile of them would fill the grader's own table.
        if (received_fds_.size() > size_t(kMaxDescriptorsPerRead))
            return violation("passed " + std::to_string(received_fds_.size()) + " descriptors no message asked for");
        if (std::optional<Reply> done = take_reply_lines(interim, dead)) return *done;
        if (reply_buffer_.size() > kMaxWorkerLineBytes)
            return violation("wrote more than " + std::to_string(kMaxWorkerLineBytes) + " bytes without a line end");
        if (dead) {
            reply.outcome = Outcome::ended;
            reply.exit = exit_.value_or(ExitInfo{});
            return reply;
        }

        if (stop_requested()) {  // SIGINT/SIGTERM (worker/stop_request.hpp): the worker goes first
            reply.outcome = Outcome::ended;
            reply.interrupted = true;
            reply.exit = kill_and_reap();
            return reply;
        }
        const double left = timeout_s - seconds_since(start);
        if (left <= 0) {
            reply.outcome = Outcome::timed_out;
            reply.exit = kill_and_reap();
            return reply;
        }
        if (!wait_for_worker(left, dead)) {
            reply.exit = kill_and_reap();
            return reply;
        }
    }
}

void WorkerProcess::stop(double grace_s) {
    if (running()) {
        const Reply r = exchange({{"op", "exit"}}, grace_s);
        if (r.outcome == Outcome::reply) {
            for (int i = 0; i < 100 && running(); ++i) {  // a clean exit, briefly
                reap_if_dead(false);
                if (running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        if (running()) kill_and_reap();
    }
    close_fds();
}

}  // namespace kreg
