// The parent's side of a job checked outside the worker (settings.checked_outside): it draws each call's
// input seed only when the worker asks for it, takes each call's output as a sealed memfd the moment the
// worker hands it over, and times both on its own clock. What it keeps is what it saw, not what the
// worker said: the seeds it issued, the outputs it holds, and for each call the window from the seed
// leaving to the output arriving, which contains the call (inputs unknown before, output fixed after).
#pragma once

#include "common/job.hpp"
#include "worker/cpu_time.hpp"
#include "worker/process.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// A sealed memfd, mapped read-only. Owns both.
class SealedOutput {
public:
    SealedOutput() = default;
    // Takes fd. "" and a mapping when fd is a memfd sealed against write, grow and shrink whose size is
    // count floats; else why not (fd is closed either way).
    static SealedOutput take(int fd, size_t count, std::string& why_not);
    SealedOutput(SealedOutput&& other) noexcept;
    SealedOutput& operator=(SealedOutput&& other) noexcept;
    SealedOutput(const SealedOutput&) = delete;
    SealedOutput& operator=(const SealedOutput&) = delete;
    ~SealedOutput();

    const float* data() const { return static_cast<const float*>(map_); }
    size_t count() const { return count_; }

private:
    int fd_ = -1;
    void* map_ = nullptr;
    size_t count_ = 0;
};

struct CheckedCall {
    uint64_t call = 0;
    uint64_t seed = 0;                  // issued by the parent right before the call
    std::optional<double> measured_ms;  // the worker's claim, timed calls only
    double window_ms = 0;               // parent clock: seed sent -> output received
    // The CPU time the worker's process used inside the window, on the kernel's clock, when the worker runs on
    // one CPU it cannot leave (worker/cpu_time.hpp): then it is at most the time the call took.
    std::optional<double> cpu_ms;
    // The worker's word for its CPU time from right before the call to right after it: used only from a trusted
    // kernel's calibration, to tell the harness's CPU work inside a window from the kernel's.
    std::optional<double> call_cpu_ms;
    SealedOutput output;
};

// Collects the calls of one checked job; its interim() plugs into WorkerProcess::exchange.
class CallCollector {
public:
    // max_calls: the most calls the job may make (1 + warm-ups + repeats). cpu_clock_pid > 0: the process whose
    // CPU time each call's cpu_ms reads (Executor sets it only for a worker on one CPU).
    CallCollector(WorkerProcess& worker, const Job& job, int max_calls, platform::ProcessId cpu_clock_pid = -1);
    const WorkerProcess::Interim& interim() const { return interim_; }
    std::vector<CheckedCall>& calls() { return calls_; }

private:
    std::string on_message(const nlohmann::json& message, int fd);

    WorkerProcess& worker_;
    Operation operation_;
    size_t output_count_;
    int max_calls_;
    std::vector<CheckedCall> calls_;
    std::optional<uint64_t> seed_out_;  // a seed issued, its output not yet received
    std::chrono::steady_clock::time_point seed_sent_;
    std::optional<ProcessCpuClock> cpu_clock_;
    std::optional<double> cpu_at_seed_ms_;
    WorkerProcess::Interim interim_;
};

// A seed nobody can predict: the kernel's entropy, read by the parent.
uint64_t unpredictable_seed();

}  // namespace kreg
