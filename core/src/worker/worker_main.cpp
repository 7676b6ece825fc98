// The worker process: started by the runner (re-exec of itself with a hidden subcommand), it loads
// plugins and runs jobs, one JSON line per request and per reply.
#include "worker/session.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

namespace kreg {
namespace {

bool write_all(int fd, const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += size_t(n);
    }
    return true;
}

bool read_line(int fd, std::string& buffer, std::string& line) {
    for (;;) {
        const size_t newline = buffer.find('\n');
        if (newline != std::string::npos) {
            line = buffer.substr(0, newline);
            buffer.erase(0, newline + 1);
            return true;
        }
        char chunk[65536];
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buffer.append(chunk, size_t(n));
    }
}

}  // namespace

int run_worker(int request_fd, int reply_fd, const std::optional<SandboxPolicy>& sandbox) {
    // The worker must not outlive the runner that reads its replies.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() == 1) return 2;
    // Whatever a plugin prints goes to stderr; the reply channel carries protocol lines only.
    ::dup2(STDERR_FILENO, STDOUT_FILENO);

    std::unique_ptr<WorkerSession> session_owner;
    nlohmann::json hello = {{"op", "hello"}, {"protocol", kWorkerProtocolVersion}, {"pid", ::getpid()}};
    if (sandbox) {
        SandboxReport report;
        try {
            report = harden_before_load(*sandbox);
        } catch (const std::exception& e) {
            // Refuse to run untrusted code half-hardened; the runner reports the worker's end and this.
            std::fprintf(stderr, "kreg worker: sandbox: %s\n", e.what());
            return 3;
        }
        hello["sandbox"] = report.to_json();
        session_owner = std::make_unique<WorkerSession>(*sandbox, report);
    } else {
        session_owner = std::make_unique<WorkerSession>();
    }
    WorkerSession& session = *session_owner;
    if (!write_all(reply_fd, hello.dump() + "\n")) return 2;
    std::string buffer, line;
    while (!session.finished() && read_line(request_fd, buffer, line)) {
        nlohmann::json reply;
        try {
            reply = session.handle(nlohmann::json::parse(line));
        } catch (const nlohmann::json::exception& e) {
            reply = {{"op", "error"}, {"message", std::string("request is not JSON: ") + e.what()}};
        }
        // Invalid UTF-8 from a plugin's message must not kill the reply: replace it.
        if (!write_all(reply_fd, reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) return 2;
    }
    std::fflush(nullptr);
    return 0;
}

}  // namespace kreg
