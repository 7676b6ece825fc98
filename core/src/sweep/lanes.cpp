#include "sweep/lanes.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace kreg {

std::vector<std::pair<size_t, size_t>> kernel_runs(const std::vector<Job>& jobs) {
    std::vector<std::pair<size_t, size_t>> runs;
    for (size_t i = 0; i < jobs.size(); ++i) {
        if (runs.empty() || jobs[i].kernel != jobs[runs.back().first].kernel)
            runs.push_back({i, i + 1});
        else
            runs.back().second = i + 1;
    }
    return runs;
}

void run_in_lanes(const std::vector<Job>& jobs, size_t lanes, const LaneCallbacks& callbacks) {
    if (lanes == 0) throw std::invalid_argument("run_in_lanes: no lanes");
    const auto runs = kernel_runs(jobs);
    std::atomic<size_t> next_run{0};
    std::atomic<bool> failed{false};
    std::mutex record_lock;
    std::exception_ptr first_error;

    auto fail = [&](std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(record_lock);
        if (!first_error) first_error = e;
        failed = true;
    };
    auto stopping = [&] { return failed.load() || (callbacks.stop && callbacks.stop()); };

    auto lane_main = [&](size_t lane) {
        try {
            while (!stopping()) {
                const size_t r = next_run.fetch_add(1);
                if (r >= runs.size()) break;
                for (size_t i = runs[r].first; i < runs[r].second && !stopping(); ++i) {
                    Record record = callbacks.run(lane, jobs[i]);
                    std::lock_guard<std::mutex> lock(record_lock);
                    if (failed) break;  // another lane failed while this job ran: its row is not wanted
                    callbacks.on_record(lane, std::move(record));
                }
            }
        } catch (...) {
            fail(std::current_exception());
        }
        try {
            if (callbacks.finish) callbacks.finish(lane);
        } catch (...) {
            fail(std::current_exception());
        }
    };

    std::vector<std::thread> threads;
    threads.reserve(lanes - 1);
    for (size_t lane = 1; lane < lanes; ++lane) threads.emplace_back(lane_main, lane);
    lane_main(0);  // the calling thread is lane 0
    for (auto& t : threads) t.join();
    if (first_error) std::rethrow_exception(first_error);
}

}  // namespace kreg
