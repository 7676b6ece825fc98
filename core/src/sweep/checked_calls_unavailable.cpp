// Jobs checked outside the worker where descriptors cannot travel (Windows): each call's output is handed over as
// a sealed memfd (checked_calls.cpp), which needs Linux, so the collector refuses the first message of such a job
// with the reason (the row says it). The seeds are the system's entropy, as on Linux.
#include "sweep/checked_calls.hpp"

#include "common/operation_table.hpp"

#include <random>
#include <utility>

namespace kreg {

uint64_t unpredictable_seed() {
    std::random_device entropy;  // the system's cryptographic generator (rand_s on Windows)
    return (uint64_t(entropy()) << 32) ^ uint64_t(entropy());
}

SealedOutput SealedOutput::take(int, size_t, std::string& why_not) {
    why_not = "sealed outputs (memfd) need Linux";
    return SealedOutput();
}

SealedOutput::SealedOutput(SealedOutput&& o) noexcept { *this = std::move(o); }

SealedOutput& SealedOutput::operator=(SealedOutput&& o) noexcept {
    fd_ = std::exchange(o.fd_, -1);
    map_ = std::exchange(o.map_, nullptr);
    count_ = std::exchange(o.count_, 0);
    return *this;
}

SealedOutput::~SealedOutput() = default;

CallCollector::CallCollector(WorkerProcess& worker, const Job& job, int max_calls, platform::ProcessId)
    : worker_(worker), output_count_(element_count(job.shape, operation_row(job.operation).c)), max_calls_(max_calls) {
    interim_.ops = {"next_call", "output"};
    interim_.ops_with_fd = {"output"};
    interim_.handler = [this](const nlohmann::json& message, int fd) { return on_message(message, fd); };
}

std::string CallCollector::on_message(const nlohmann::json&, int) {
    return "a job checked outside the worker needs Linux (each call's output travels as a sealed memfd)";
}

}  // namespace kreg
