#include "run/lanes.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace kreg {

std::vector<ItemGroup> kernel_runs(const std::vector<Job>& jobs) {
    std::vector<ItemGroup> runs;
    for (size_t i = 0; i < jobs.size(); ++i) {
        if (runs.empty() || jobs[i].kernel != jobs[runs.back().first].kernel)
            runs.push_back({i, i + 1});
        else
            runs.back().second = i + 1;
    }
    return runs;
}

std::vector<ItemGroup> one_item_groups(size_t count) {
    std::vector<ItemGroup> groups;
    for (size_t i = 0; i < count; ++i) groups.push_back({i, i + 1});
    return groups;
}

void run_in_lanes(const std::vector<ItemGroup>& groups, size_t lanes, const LaneSteps& steps) {
    if (lanes == 0) throw std::invalid_argument("run_in_lanes: no lanes");
    std::atomic<size_t> next_group{0};
    std::atomic<bool> failed{false};
    std::mutex writer_lock;
    std::exception_ptr first_error;

    auto fail = [&](std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(writer_lock);
        if (!first_error) first_error = e;
        failed = true;
    };
    auto stopping = [&] { return failed.load() || (steps.stop && steps.stop()); };

    auto lane_main = [&](size_t lane) {
        try {
            while (!stopping()) {
                const size_t g = next_group.fetch_add(1);
                if (g >= groups.size()) break;
                for (size_t i = groups[g].first; i < groups[g].second && !stopping(); ++i) {
                    steps.run(lane, i);
                    std::lock_guard<std::mutex> lock(writer_lock);
                    if (failed) break;  // another lane failed while this item ran: its result is not wanted
                    steps.take(lane, i);
                }
            }
        } catch (...) {
            fail(std::current_exception());
        }
        try {
            if (steps.finish) steps.finish(lane);
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
