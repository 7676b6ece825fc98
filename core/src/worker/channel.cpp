#include "worker/channel.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kreg {

bool WorkerChannel::read_line(std::string& line) {
    for (;;) {
        const size_t newline = buffer_.find('\n');
        if (newline != std::string::npos) {
            line = buffer_.substr(0, newline);
            buffer_.erase(0, newline + 1);
            return true;
        }
        char chunk[65536];
        const ssize_t n = ::read(request_fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buffer_.append(chunk, size_t(n));
    }
}

bool WorkerChannel::write_message(const nlohmann::json& message, int fd) {
    // Invalid UTF-8 from a plugin's message must not kill the reply: replace it.
    const std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    size_t done = 0;
    bool fd_sent = fd < 0;
    while (done < line.size()) {
        iovec iov{const_cast<char*>(line.data() + done), line.size() - done};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        if (!fd_sent) {
            msg.msg_control = control;
            msg.msg_controllen = sizeof control;
            cmsghdr* c = CMSG_FIRSTHDR(&msg);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int));
            std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
        }
        const ssize_t n = ::sendmsg(reply_fd_, &msg, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == ENOTSOCK && fd < 0) {  // --isolation none in tests: a plain pipe
            const ssize_t w = ::write(reply_fd_, line.data() + done, line.size() - done);
            if (w <= 0) return false;
            done += size_t(w);
            continue;
        }
        if (n <= 0) return false;
        fd_sent = true;
        done += size_t(n);
    }
    return true;
}

namespace {

[[noreturn]] void fail_output(int fd, const std::string& what, uint64_t call, const std::string& why) {
    ::close(fd);
    throw std::runtime_error(what + " the output of call " + std::to_string(call) + ": " + why);
}

void write_all(int fd, const char* bytes, size_t size, uint64_t call) {
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pwrite(fd, bytes + done, size - done, off_t(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail_output(fd, "writing", call, n < 0 ? std::strerror(errno) : "short write");
        done += size_t(n);
    }
}

}  // namespace

OutputMemfd OutputMemfd::create(size_t count, uint64_t call) {
    const std::string name = "kreg-call-" + std::to_string(call);
    const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
    // Its pages are allocated (and zeroed) here, so that filling it later only copies.
    const std::vector<char> zeros(std::min<size_t>(count * sizeof(float), size_t(1) << 20), 0);
    for (size_t done = 0; done < count * sizeof(float);) {
        const size_t n = std::min(zeros.size(), count * sizeof(float) - done);
        const ssize_t w = ::pwrite(fd, zeros.data(), n, off_t(done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail_output(fd, "preparing", call, w < 0 ? std::strerror(errno) : "short write");
        done += size_t(w);
    }
    return OutputMemfd(fd, count, call);
}

OutputMemfd::~OutputMemfd() {
    if (fd_ >= 0) ::close(fd_);
}

int OutputMemfd::seal(const float* c, size_t count, uint64_t call) && {
    const int fd = std::exchange(fd_, -1);
    if (count != count_ || call != call_) fail_output(fd, "sealing", call, "it was prepared for another call");
    write_all(fd, reinterpret_cast<const char*>(c), count * sizeof(float), call);
    if (::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        fail_output(fd, "sealing", call, std::strerror(errno));
    return fd;
}

int sealed_copy(const float* c, size_t count, uint64_t call) {
    return OutputMemfd::create(count, call).seal(c, count, call);
}

uint64_t ParentCallChannel::seed_for_call(uint64_t call) {
    // The grader's window on the call opens when it answers: the output's memfd is made before asking.
    if (output_count_) prepared_output_.emplace(OutputMemfd::create(*output_count_, call));
    if (!channel_.write_message({{"op", "next_call"}, {"id", id_}, {"call", call}}))
        throw WorkerFatal("the parent is gone (asking for the seed of call " + std::to_string(call) + ")");
    std::string line;
    if (!channel_.read_line(line))
        throw WorkerFatal("the parent is gone (waiting for the seed of call " + std::to_string(call) + ")");
    try {
        const nlohmann::json answer = nlohmann::json::parse(line);
        if (answer.at("op") != "call_seed" || answer.at("id") != id_ || answer.at("call") != call)
            throw std::runtime_error("unexpected answer");
        return answer.at("seed").get<uint64_t>();
    } catch (const std::exception& e) {
        throw WorkerFatal("the parent's answer for the seed of call " + std::to_string(call) +
                          " is malformed: " + e.what());
    }
}

namespace {

// The calling thread's: the process's clock is the tick-updated group timer once RLIMIT_CPU is set (the sandbox
// sets it), 4 ms coarse here. A kernel's other threads are not counted, which only makes the harness's share
// that a calibration derives from it larger, and a bound from that share lower.
std::optional<double> call_thread_cpu_ms() {
    timespec t{};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return std::nullopt;
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

}  // namespace

void ParentCallChannel::call_starts() {
    call_started_cpu_ms_ = call_thread_cpu_ms();
    call_cpu_ms_.reset();
}

void ParentCallChannel::call_returned() {
    const std::optional<double> now = call_thread_cpu_ms();
    if (call_started_cpu_ms_ && now) call_cpu_ms_ = std::max(0.0, *now - *call_started_cpu_ms_);
    call_started_cpu_ms_.reset();
}

void ParentCallChannel::hand_over(uint64_t call, const float* c, size_t count, std::optional<double> measured_ms) {
    std::optional<OutputMemfd> prepared = std::exchange(prepared_output_, std::nullopt);
    const int fd = prepared && prepared->fits(count, call) ? std::move(*prepared).seal(c, count, call)
                                                           : sealed_copy(c, count, call);
    output_count_ = count;
    nlohmann::json message = {{"op", "output"}, {"id", id_}, {"call", call}, {"count", count}};
    message["measured_ms"] = measured_ms ? nlohmann::json(*measured_ms) : nlohmann::json(nullptr);
    if (call_cpu_ms_) message["call_cpu_ms"] = *std::exchange(call_cpu_ms_, std::nullopt);
    const bool sent = channel_.write_message(message, fd);
    ::close(fd);
    if (!sent) throw WorkerFatal("the parent is gone (handing over call " + std::to_string(call) + ")");
    // The parent's window on the call ends when it holds the output; nothing more is done until it says so.
    std::string line;
    if (!channel_.read_line(line))
        throw WorkerFatal("the parent is gone (waiting for it to hold the output of call " + std::to_string(call) +
                          ")");
    try {
        const nlohmann::json answer = nlohmann::json::parse(line);
        if (answer.at("op") != "output_held" || answer.at("id") != id_ || answer.at("call") != call)
            throw std::runtime_error("unexpected answer");
    } catch (const std::exception& e) {
        throw WorkerFatal("the parent's answer to the output of call " + std::to_string(call) +
                          " is malformed: " + e.what());
    }
}

}  // namespace kreg
