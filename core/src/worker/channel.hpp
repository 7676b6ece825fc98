// The worker's end of the protocol: lines in from the request pipe, lines (and sealed descriptors) out
// on the reply socket, each reply carrying the id of the request it answers. And the CallChannel of a
// job checked outside the worker (pipeline/job_runner.hpp), which asks the parent for each call's seed
// and hands each call's output over as a sealed memfd.
#pragma once

#include "pipeline/job_runner.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace kreg {

class WorkerChannel {
public:
    WorkerChannel(int request_fd, int reply_fd) : request_fd_(request_fd), reply_fd_(reply_fd) {}

    // The next request line; false at EOF.
    bool read_line(std::string& line);
    // One message, as one line; with fd >= 0 the descriptor travels with it (SCM_RIGHTS).
    bool write_message(const nlohmann::json& message, int fd = -1);

private:
    int request_fd_;
    int reply_fd_;
    std::string buffer_;
};

// C of one call, in a memfd sealed against every change (write, grow, shrink, new seals): once it is
// handed over, nothing in this process can alter what the parent checks. Throws std::runtime_error.
int sealed_copy(const float* c, size_t count, uint64_t call);

// sealed_copy in two steps: create() makes the memfd and allocates its pages (before the grader's window on
// the call opens), seal() copies C in, seals it and gives up the descriptor (inside it: a copy, no allocation).
// A plugin that maps or writes the memfd meanwhile gains nothing: seal() overwrites all of it and fails when a
// writable mapping of it exists (EBUSY), and once sealed it cannot be written.
class OutputMemfd {
public:
    static OutputMemfd create(size_t count, uint64_t call);
    OutputMemfd(OutputMemfd&& o) noexcept : fd_(std::exchange(o.fd_, -1)), count_(o.count_), call_(o.call_) {}
    OutputMemfd& operator=(OutputMemfd&&) = delete;
    ~OutputMemfd();
    bool fits(size_t count, uint64_t call) const { return fd_ >= 0 && count == count_ && call == call_; }
    int seal(const float* c, size_t count, uint64_t call) &&;

private:
    OutputMemfd(int fd, size_t count, uint64_t call) : fd_(fd), count_(count), call_(call) {}
    int fd_;
    size_t count_;
    uint64_t call_;
};

class ParentCallChannel : public CallChannel {
public:
    ParentCallChannel(WorkerChannel& channel, std::string request_id) : channel_(channel), id_(std::move(request_id)) {}
    uint64_t seed_for_call(uint64_t call) override;
    void hand_over(uint64_t call, const float* c, size_t count, std::optional<double> measured_ms) override;
    void call_starts() override;
    void call_returned() override;

private:
    WorkerChannel& channel_;
    std::string id_;
    std::optional<double> call_started_cpu_ms_;   // this thread's CPU time when the call started
    std::optional<double> call_cpu_ms_;           // and what the call used, until its output is handed over
    std::optional<size_t> output_count_;          // C's size, known from the first call handed over
    std::optional<OutputMemfd> prepared_output_;  // the next call's, made before its seed was asked for
};

}  // namespace kreg
