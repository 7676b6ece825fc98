#include "pipeline/call_watchdog.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

namespace kreg {
namespace {

class Watchdog {
public:
    void start() {
        std::lock_guard<std::mutex> lock(mutex_);
        start_locked();
    }
    void arm(double seconds, const std::string& what) {
        std::lock_guard<std::mutex> lock(mutex_);
        start_locked();
        deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(seconds));
        seconds_ = seconds;
        what_ = what;
        // Woken only when it would otherwise wake too late: every wake-up is a switch to this thread on the
        // worker's CPU, inside the grader's window on the call (grade/timing_claims.hpp). A later deadline is
        // seen when the earlier one it waits for passes.
        if (!waiting_until_ || *deadline_ < *waiting_until_) changed_.notify_all();
    }
    void disarm() {
        std::lock_guard<std::mutex> lock(mutex_);
        deadline_.reset();  // not woken: it finds no deadline when the one it waits for passes
    }

private:
    void start_locked() {
        if (!thread_.joinable()) thread_ = std::thread([this] { watch(); });
    }
    [[noreturn]] void expire() {
        char line[512];
        const int n = std::snprintf(line, sizeof line, "kreg worker: %s exceeded the per-call time limit of %g s\n",
                                    what_.c_str(), seconds_);
        // A thread of its own, not a signal handler: stdio may be used. _Exit runs no atexit handler and no
        // destructor (the call it ends still runs on another thread), on POSIX and Windows alike.
        if (n > 0) std::fwrite(line, 1, size_t(n) < sizeof line ? size_t(n) : sizeof line - 1, stderr);
        std::fflush(stderr);
        std::_Exit(kCallTimeoutExitCode);
    }
    void watch() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            if (!deadline_) {
                waiting_until_.reset();
                changed_.wait(lock);
                continue;
            }
            waiting_until_ = deadline_;
            changed_.wait_until(lock, *waiting_until_);
            if (deadline_ && std::chrono::steady_clock::now() >= *deadline_) expire();
        }
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    std::optional<std::chrono::steady_clock::time_point> deadline_;
    std::optional<std::chrono::steady_clock::time_point> waiting_until_;  // what the thread's wait ends at
    double seconds_ = 0;
    std::string what_;
    std::thread thread_;  // detached at exit: the process ends with it
};

Watchdog& watchdog() {
    static Watchdog* instance = new Watchdog();  // never destroyed: its thread lives as long as the worker
    return *instance;
}

}  // namespace

void start_call_watchdog() { watchdog().start(); }
void arm_call_watchdog(double seconds, const std::string& what) { watchdog().arm(seconds, what); }
void disarm_call_watchdog() { watchdog().disarm(); }

}  // namespace kreg
