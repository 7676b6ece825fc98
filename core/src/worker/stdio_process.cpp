// WorkerProcess where descriptors cannot travel and there are no process groups, pidfds or namespaces (Windows):
// the worker is the platform layer's child process (a Job Object that takes everything it started along), its
// requests on the worker's stdin and its replies on its stdout (the worker points its own stdout at stderr,
// platform::take_stdio_channel). The protocol's checks are those of process.cpp: every line a JSON object of
// at most kMaxWorkerLineBytes carrying the id of the request in flight, nothing between requests. No worker is
// confined here and none passes a descriptor: a confinement asked for is refused, and an interim message that
// would bring one is a violation.
#include "worker/process.hpp"

#include "common/elapsed.hpp"
#include "platform/child_process.hpp"
#include "platform/host.hpp"
#include "sandbox/confined_spawn.hpp"  // ConfinedProcess, never made here
#include "worker/stop_request.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <thread>

namespace kreg {
namespace {

using platform::ChildProcess;

// How long one read waits at most, so that a stop request is seen soon.
constexpr double kStopTickS = 0.1;

std::string random_nonce() {
    std::random_device device;
    const uint64_t value =
        (uint64_t(device()) << 32) ^ device() ^ uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

std::string excerpt(const std::string& line) {
    std::string out;
    for (unsigned char c : line.substr(0, 120)) out += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
    if (line.size() > 120) out += "...";
    return out;
}

ExitInfo exit_info_from(const platform::ChildExit& end) {
    ExitInfo info;
    if (!end.fault.empty()) {
        info.signal = end.fault;  // "EXCEPTION_ACCESS_VIOLATION": what a signal is on POSIX
    } else if (end.exit_code) {
        info.exit_code = end.exit_code;
    }
    return info;
}

}  // namespace

std::string signal_name(int signo) { return "signal " + std::to_string(signo); }

std::string ExitInfo::describe() const {
    if (stopped) return "stopped by " + *stopped + " (a stopped worker counts as dead); killed";
    if (signal) return "crashed: " + *signal;
    if (exit_code) return "exited with code " + std::to_string(*exit_code);
    return "ended";
}

WorkerProcess::WorkerProcess() = default;

WorkerProcess WorkerProcess::start(const std::string& exe, const std::vector<std::string>& args,
                                   const WorkerConfinement* confinement) {
    if (confinement != nullptr)
        throw std::runtime_error(
            "a confined worker needs Linux (namespaces, seccomp, Landlock, cgroups); "
            "this runner starts workers unconfined only");
    WorkerProcess w;
    w.nonce_ = random_nonce();
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--nonce", w.nonce_});
    w.child_ = std::make_unique<ChildProcess>(ChildProcess::start(exe, all));
    w.pid_ = w.child_->pid();
    return w;
}

platform::ProcessId WorkerProcess::program_pid() const { return running() ? pid_ : -1; }

WorkerProcess::WorkerProcess(WorkerProcess&& o) noexcept { *this = std::move(o); }

WorkerProcess& WorkerProcess::operator=(WorkerProcess&& o) noexcept {
    if (this != &o) {
        child_ = std::move(o.child_);
        pid_ = std::exchange(o.pid_, -1);
        nonce_ = std::move(o.nonce_);
        sequence_ = o.sequence_;
        request_id_ = std::move(o.request_id_);
        stderr_tail_ = std::move(o.stderr_tail_);
        exit_ = std::move(o.exit_);
    }
    return *this;
}

WorkerProcess::~WorkerProcess() {
    if (running()) kill_and_reap();
}

bool WorkerProcess::running() const { return !exit_ && child_ != nullptr; }

bool WorkerProcess::alive() { return running(); }

nlohmann::json WorkerProcess::confinement_report() const { return nullptr; }

ExitInfo WorkerProcess::kill_and_reap() {
    if (exit_) return *exit_;
    if (!child_) return ExitInfo{};
    child_->kill_tree();
    exit_ = exit_info_from(child_->wait());
    stderr_tail_ = child_->stderr_tail();
    return *exit_;
}

// Its channel closed: it ended, most likely. A moment for it to end by itself, so that the end is its own;
// one that still runs then (it closed its channel and went on) is killed.
ExitInfo WorkerProcess::reap_if_dead(bool) {
    if (exit_ || !child_) return exit_.value_or(ExitInfo{});
    for (int i = 0; i < 50 && platform::process_running(pid_); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (platform::process_running(pid_)) return kill_and_reap();
    exit_ = exit_info_from(child_->wait());
    stderr_tail_ = child_->stderr_tail();
    return *exit_;
}

WorkerProcess::Reply WorkerProcess::violation(std::string what) {
    Reply reply;
    reply.outcome = Outcome::violation;
    reply.violation = std::move(what);
    reply.exit = kill_and_reap();
    return reply;
}

bool WorkerProcess::write_request(const nlohmann::json& message) { return child_->write_line(message.dump()); }

bool WorkerProcess::send(nlohmann::json message) {
    if (!running()) return false;
    message["id"] = request_id_;
    return write_request(message);
}

// One line of the worker's: the reply (or a violation) ends the exchange; nullopt after an interim message.
std::optional<WorkerProcess::Reply> WorkerProcess::take_reply_lines(const Interim* interim, bool) {
    const std::string line = std::exchange(reply_buffer_, std::string());
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
                         (id == message.end() ? std::string("missing") : id->dump()) + ", expected \"" + request_id_ +
                         "\"): \"" + excerpt(line) + "\"");
    const std::string op = message["op"].get<std::string>();
    if (interim && interim->ops.count(op)) {
        if (interim->ops_with_fd.count(op))
            return violation("sent '" + op + "', which brings a descriptor, and descriptors cannot travel here");
        if (std::string why = interim->handler(message, -1); !why.empty()) return violation(why);
        return std::nullopt;
    }
    message.erase("id");
    Reply reply;
    reply.outcome = Outcome::reply;
    reply.message = std::move(message);
    return reply;
}

WorkerProcess::Reply WorkerProcess::exchange(nlohmann::json request, double timeout_s, const Interim* interim) {
    Reply reply;
    if (!running()) {
        reply.exit = exit_.value_or(ExitInfo{});
        return reply;
    }
    const auto start = std::chrono::steady_clock::now();
    request_id_ = nonce_ + ":" + (request.is_null() ? std::string("0") : std::to_string(++sequence_));
    if (!request.is_null()) {
        request["id"] = request_id_;
        if (!write_request(request)) {
            reply.exit = kill_and_reap();
            return reply;
        }
    }
    for (;;) {
        if (stop_requested()) {  // Ctrl-C (worker/stop_request.hpp): the worker goes first
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
        const ChildProcess::Read read = child_->read_line(reply_buffer_, std::min(left, kStopTickS));
        if (read == ChildProcess::Read::timed_out) continue;
        if (read == ChildProcess::Read::too_long)
            return violation("wrote more than " + std::to_string(kMaxWorkerLineBytes) + " bytes without a line end");
        if (read == ChildProcess::Read::closed) {
            reply.outcome = Outcome::ended;
            reply.exit = reap_if_dead(true);
            return reply;
        }
        if (std::optional<Reply> done = take_reply_lines(interim, false)) return *done;
    }
}

void WorkerProcess::stop(double grace_s) {
    if (running()) {
        const Reply r = exchange({{"op", "exit"}}, grace_s);
        std::string rest;
        if (r.outcome == Outcome::reply && child_->read_line(rest, grace_s) == ChildProcess::Read::closed)
            reap_if_dead(true);  // it closed its channel on the way out: its own end
        if (running()) kill_and_reap();
    }
}

}  // namespace kreg
