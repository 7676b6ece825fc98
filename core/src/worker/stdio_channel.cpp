// The worker's end where descriptors cannot travel (Windows; see stdio_process.cpp): requests on stdin, replies on
// stdout, each one line, through platform::take_stdio_channel. What needs a descriptor to travel, a job checked
// outside the worker (its outputs handed over as sealed memfds, a grader's defence), is refused with the reason.
#include "worker/channel.hpp"
#include "worker/session.hpp"

#include "platform/fault_watch.hpp"
#include "platform/file_io.hpp"
#include "platform/host.hpp"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace kreg {
namespace {

constexpr const char* kNoSealedOutputs =
    "a job checked outside the worker hands each call's output over as a sealed memfd, which needs Linux";

}  // namespace

bool WorkerChannel::read_line(std::string& line) {
    for (;;) {
        const size_t newline = buffer_.find('\n');
        if (newline != std::string::npos) {
            line = buffer_.substr(0, newline);
            buffer_.erase(0, newline + 1);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            return true;
        }
        char chunk[65536];
        const long n = platform::read_some(request_fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buffer_.append(chunk, size_t(n));
    }
}

bool WorkerChannel::write_message(const nlohmann::json& message, int fd) {
    if (fd >= 0) return false;  // no descriptor travels here
    const std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    for (size_t done = 0; done < line.size();) {
        const long n = platform::write_some(reply_fd_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += size_t(n);
    }
    return true;
}

OutputMemfd OutputMemfd::create(size_t, uint64_t) { throw std::runtime_error(kNoSealedOutputs); }

OutputMemfd::~OutputMemfd() = default;

int OutputMemfd::seal(const float*, size_t, uint64_t) && { throw std::runtime_error(kNoSealedOutputs); }

int sealed_copy(const float*, size_t, uint64_t) { throw std::runtime_error(kNoSealedOutputs); }

uint64_t ParentCallChannel::seed_for_call(uint64_t) { throw WorkerFatal(kNoSealedOutputs); }

void ParentCallChannel::call_starts() {}

void ParentCallChannel::call_returned() {}

void ParentCallChannel::hand_over(uint64_t, const float*, size_t, std::optional<double>) {
    throw WorkerFatal(kNoSealedOutputs);
}

// The request and reply descriptors of the POSIX worker (3 and 4) are not given here: the channel is the
// worker's stdin and stdout, taken before anything is loaded.
int run_worker(int, int, const std::string& nonce, const std::optional<SandboxPolicy>& sandbox) {
    if (sandbox) {
        std::fprintf(stderr, "kreg worker: sandbox: a confined worker needs Linux\n");
        return 3;
    }
    // A plugin's fault ends this process at once with the fault's code (no error report or debugger, which wine
    // would start and wait in): the runner reports it as the row's crash.
    platform::end_process_on_unhandled_fault();
    const platform::StdioChannel ends = platform::take_stdio_channel();
    WorkerChannel channel(ends.request_fd, ends.reply_fd);
    WorkerSession session;
    const nlohmann::json hello = {
        {"op", "hello"}, {"id", nonce + ":0"}, {"protocol", kWorkerProtocolVersion}, {"pid", platform::process_id()}};
    if (!channel.write_message(hello)) return 2;
    std::string line;
    while (!session.finished() && channel.read_line(line)) {
        nlohmann::json reply;
        std::string id;
        try {
            const nlohmann::json request = nlohmann::json::parse(line);
            id = request.value("id", "");
            reply = session.handle(request);
        } catch (const nlohmann::json::exception& e) {
            reply = {{"op", "error"}, {"message", std::string("request is not JSON: ") + e.what()}};
        }
        reply["id"] = id;
        if (!channel.write_message(wire_reply(std::move(reply)))) return 2;
    }
    std::fflush(nullptr);
    return 0;
}

}  // namespace kreg
