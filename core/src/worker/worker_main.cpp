// The worker process: started by the runner (re-exec of itself with a hidden subcommand), it loads
// plugins and runs jobs, one JSON line per request and per reply.
#include "worker/channel.hpp"
#include "worker/session.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

namespace kreg {

int run_worker(int request_fd, int reply_fd, const std::string& nonce, const std::optional<SandboxPolicy>& sandbox) {
    // The worker must not outlive the runner that reads its replies. A confined worker is pid 2 of its
    // own PID namespace, whose reaper (pid 1, our parent) dies with the runner and takes us along.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() == 1 && ::getpid() != 2) return 2;
    // Whatever a plugin prints goes to stderr; the reply channel carries protocol lines only.
    ::dup2(STDERR_FILENO, STDOUT_FILENO);

    WorkerChannel channel(request_fd, reply_fd);
    std::unique_ptr<WorkerSession> session_owner;
    nlohmann::json hello = {
        {"op", "hello"}, {"id", nonce + ":0"}, {"protocol", kWorkerProtocolVersion}, {"pid", ::getpid()}};
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
    if (!channel.write_message(hello)) return 2;
    std::string line;
    while (!session.finished() && channel.read_line(line)) {
        nlohmann::json reply;
        std::string id;
        try {
            const nlohmann::json request = nlohmann::json::parse(line);
            id = request.value("id", "");
            ParentCallChannel call_channel(channel, id);
            session.set_call_channel(&call_channel);
            reply = session.handle(request);
            session.set_call_channel(nullptr);
        } catch (const nlohmann::json::exception& e) {
            session.set_call_channel(nullptr);
            reply = {{"op", "error"}, {"message", std::string("request is not JSON: ") + e.what()}};
        }
        reply["id"] = id;
        if (!channel.write_message(wire_reply(std::move(reply)))) return 2;
    }
    std::fflush(nullptr);
    return 0;
}

}  // namespace kreg
