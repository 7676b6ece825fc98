#include "sweep/checked_calls.hpp"

#include "common/operation_table.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace kreg {

uint64_t unpredictable_seed() {
    uint64_t seed = 0;
    size_t done = 0;
    while (done < sizeof seed) {
        const ssize_t n = ::getrandom(reinterpret_cast<char*>(&seed) + done, sizeof seed - done, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
        done += size_t(n);
    }
    return seed;
}

SealedOutput SealedOutput::take(int fd, size_t count, std::string& why_not) {
    SealedOutput out;
    out.fd_ = fd;
    if (fd < 0) {
        why_not = "no descriptor came with it";
        return out;
    }
    constexpr int kRequired = F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK;
    const int seals = ::fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & kRequired) != kRequired) {
        why_not =
            seals < 0 ? "its descriptor is not a memfd" : "its memfd is not sealed against write, grow and shrink";
        return out;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || uint64_t(st.st_size) != uint64_t(count) * sizeof(float)) {
        why_not = "its memfd holds " + std::to_string(st.st_size) + " bytes, not " + std::to_string(count) + " floats";
        return out;
    }
    void* map = ::mmap(nullptr, count * sizeof(float), PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        why_not = std::string("cannot map its memfd: ") + std::strerror(errno);
        return out;
    }
    out.map_ = map;
    out.count_ = count;
    return out;
}

SealedOutput::SealedOutput(SealedOutput&& o) noexcept { *this = std::move(o); }

SealedOutput& SealedOutput::operator=(SealedOutput&& o) noexcept {
    if (this != &o) {
        this->~SealedOutput();
        fd_ = std::exchange(o.fd_, -1);
        map_ = std::exchange(o.map_, nullptr);
        count_ = std::exchange(o.count_, 0);
    }
    return *this;
}

SealedOutput::~SealedOutput() {
    if (map_) ::munmap(map_, count_ * sizeof(float));
    if (fd_ >= 0) ::close(fd_);
    map_ = nullptr;
    fd_ = -1;
}

CallCollector::CallCollector(WorkerProcess& worker, const Job& job, int max_calls, platform::ProcessId cpu_clock_pid)
    : worker_(worker),
      operation_(job.operation),
      output_count_(element_count(job.shape, operation_row(job.operation).c)),  // C's extent (operations.def)
      max_calls_(max_calls) {
    std::string why_not;
    if (cpu_clock_pid > 0) cpu_clock_ = ProcessCpuClock::of(cpu_clock_pid, why_not);
    interim_.ops = {"next_call", "output"};
    interim_.ops_with_fd = {"output"};
    interim_.handler = [this](const nlohmann::json& message, int fd) { return on_message(message, fd); };
}

std::string CallCollector::on_message(const nlohmann::json& message, int fd) {
    // The descriptor is ours from here: closed on every way out but the one that keeps it.
    struct Owned {
        int fd;
        ~Owned() {
            if (fd >= 0) ::close(fd);
        }
    } owned{fd};
    const std::string op = message["op"].get<std::string>();
    const uint64_t expected = calls_.size();
    const auto call = message.find("call");
    if (call == message.end() || !call->is_number_unsigned()) {
        return "sent a '" + op + "' message without a call number";
    }
    const uint64_t number = call->get<uint64_t>();
    if (op == "next_call") {
        if (std::string why = unexpected_field(message, {"op", "id", "call"}); !why.empty()) return why;
        if (seed_out_)
            return "asked for the seed of call " + std::to_string(number) + " before handing over call " +
                   std::to_string(expected);
        if (number != expected)
            return "asked for the seed of call " + std::to_string(number) + ", expected call " +
                   std::to_string(expected);
        if (int(number) >= max_calls_)
            return "asked for a seed for call " + std::to_string(number) + ", more calls than the job has";
        seed_out_ = unpredictable_seed();
        // The CPU clock just outside the window on both sides: CPU time the worker spends there is counted, which
        // only raises its bound (the worker is meant to be waiting for the seed, and for our next message).
        cpu_at_seed_ms_ = cpu_clock_ ? cpu_clock_->read_ms() : std::nullopt;
        seed_sent_ = std::chrono::steady_clock::now();
        if (!worker_.send({{"op", "call_seed"}, {"call", number}, {"seed", *seed_out_}}))
            return "";  // its death is seen next
        return "";
    }
    // "output"
    const double window_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - seed_sent_).count();
    const std::optional<double> cpu_now_ms = cpu_at_seed_ms_ ? cpu_clock_->read_ms() : std::nullopt;
    if (std::string why = unexpected_field(message, {"op", "id", "call", "count", "measured_ms", "call_cpu_ms"});
        !why.empty())
        return why;
    if (!seed_out_ || number != expected)
        return "handed over call " + std::to_string(number) + " without asking for its seed first";
    const auto count = message.find("count");
    if (count == message.end() || !count->is_number_unsigned() || count->get<uint64_t>() != output_count_)
        return "handed over call " + std::to_string(number) + " with a count other than the " +
               operation_row(operation_).name + " output's " + std::to_string(output_count_) + " element(s)";
    CheckedCall c;
    c.call = number;
    c.seed = *seed_out_;
    c.window_ms = window_ms;
    if (cpu_now_ms) c.cpu_ms = std::max(0.0, *cpu_now_ms - *cpu_at_seed_ms_);
    const auto measured = message.find("measured_ms");
    if (measured == message.end()) return "handed over call " + std::to_string(number) + " without measured_ms";
    if (!measured->is_null()) {
        if (!measured->is_number() || !std::isfinite(measured->get<double>()) || measured->get<double>() < 0) {
            return "handed over call " + std::to_string(number) + " with a measured time that is not a time";
        }
        c.measured_ms = measured->get<double>();
    }
    if (const auto cpu = message.find("call_cpu_ms"); cpu != message.end()) {
        if (!cpu->is_number() || !std::isfinite(cpu->get<double>()) || cpu->get<double>() < 0)
            return "handed over call " + std::to_string(number) + " with a CPU time that is not a time";
        c.call_cpu_ms = cpu->get<double>();
    }
    std::string why_not;
    c.output = SealedOutput::take(std::exchange(owned.fd, -1), output_count_, why_not);
    if (!why_not.empty()) return "handed over call " + std::to_string(number) + ", but " + why_not;
    // The worker waits for this before it goes on: what it does next (checking its inputs, preparing the next
    // call) is then outside the window, which ended with the reading of its CPU clock above. Without the wait it
    // ran on until the scheduler gave this thread the CPU they share, and that ran into the window's CPU time.
    if (!worker_.send({{"op", "output_held"}, {"call", number}})) return "";  // its death is seen next
    calls_.push_back(std::move(c));
    seed_out_.reset();
    return "";
}

}  // namespace kreg
