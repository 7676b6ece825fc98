// Work spread over lanes: the one way kreg runs work on several devices at once. A lane is one thread of
// this process with its own workers (runner --devices: one lane per GPU, its workers seeing that GPU alone;
// runner grade --jobs N: N lanes on this machine's CPUs). The work is a list of items (a sweep's jobs, a
// grading run's submissions) cut into groups that one lane takes whole (a sweep: the consecutive jobs of
// one kernel, so its worker, plugin and CUDA context are reused and its rows come from one device; grading:
// one submission). Lanes take groups in order as they become free, and every result is handed to one writer,
// one at a time, as it arrives.
#pragma once

#include "common/job.hpp"

#include <cstddef>
#include <algorithm>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace kreg {

// Items [first, second) that one lane takes whole, in order.
using ItemGroup = std::pair<size_t, size_t>;

// Consecutive jobs of one kernel, as groups of indices into jobs, in order.
std::vector<ItemGroup> kernel_runs(const std::vector<Job>& jobs);
// Every item its own group: 0..count-1.
std::vector<ItemGroup> one_item_groups(size_t count);

struct LaneSteps {
    // Does item in the given lane; called from that lane's thread only.
    std::function<void(size_t lane, size_t item)> run;
    // Hands item's result to the writer, right after run(lane, item) returned; calls are serialised (one at a
    // time, under one lock), in no fixed order across lanes. Not called once a lane has failed.
    std::function<void(size_t lane, size_t item)> take;
    // Called in the lane's thread once it has no more work (to stop its workers); may be empty.
    std::function<void(size_t lane)> finish;
    // Polled before every item; true stops taking items (the item in flight is still taken unless take()
    // itself leaves it). May be empty.
    std::function<bool()> stop;
};

// Does every item of groups exactly once across `lanes` threads (lanes >= 1; the calling thread is lane 0)
// and returns when all lanes are done. The first exception thrown by a step stops every lane from taking
// more work and is rethrown here.
void run_in_lanes(const std::vector<ItemGroup>& groups, size_t lanes, const LaneSteps& steps);

// The same with a typed result: run returns it in the lane's thread, take receives it in the writer's turn.
template <class Result>
struct LaneCallbacks {
    std::function<Result(size_t lane, size_t item)> run;
    std::function<void(size_t lane, size_t item, Result&& result)> take;
    std::function<void(size_t lane)> finish;
    std::function<bool()> stop;
};

template <class Result>
void run_in_lanes(const std::vector<ItemGroup>& groups, size_t lanes, const LaneCallbacks<Result>& callbacks) {
    size_t items = 0;
    for (const ItemGroup& g : groups) items = std::max(items, g.second);
    std::vector<std::optional<Result>> results(items);  // item i's, between its run and its take
    LaneSteps steps;
    steps.run = [&](size_t lane, size_t item) { results[item].emplace(callbacks.run(lane, item)); };
    steps.take = [&](size_t lane, size_t item) {
        Result result = std::move(*results[item]);
        results[item].reset();
        callbacks.take(lane, item, std::move(result));
    };
    steps.finish = callbacks.finish;
    steps.stop = callbacks.stop;
    run_in_lanes(groups, lanes, steps);
}

}  // namespace kreg
