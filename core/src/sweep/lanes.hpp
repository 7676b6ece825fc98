// Running a sweep's jobs on several devices at once (runner --devices): one lane per device, each with
// its own worker, so no two timed jobs ever share a device. A lane takes a whole run of consecutive jobs
// of one kernel at a time: its worker, plugin and CUDA context are reused as in a serial sweep, and all
// rows of one kernel come from one device. Lanes take runs in plan order as they become free.
#pragma once

#include "common/job.hpp"

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace kreg {

// Consecutive jobs of one kernel, as [begin, end) indices into jobs, in order.
std::vector<std::pair<size_t, size_t>> kernel_runs(const std::vector<Job>& jobs);

struct LaneCallbacks {
    // Runs one job in the given lane; called from that lane's thread only.
    std::function<Record(size_t lane, const Job& job)> run;
    // Takes one finished row; calls are serialised (one at a time, under one lock), in no fixed order.
    std::function<void(size_t lane, Record&& record)> on_record;
    // Called in the lane's thread once it has no more work (to stop its worker); may be empty.
    std::function<void(size_t lane)> finish;
    // Polled before every job; true stops taking jobs (the job in flight still reports its row unless
    // run() itself gives up). May be empty.
    std::function<bool()> stop;
};

// Runs every job exactly once across `lanes` threads (lanes >= 1) and returns when all lanes are done.
// The first exception thrown by a callback stops every lane from taking more work and is rethrown here.
void run_in_lanes(const std::vector<Job>& jobs, size_t lanes, const LaneCallbacks& callbacks);

}  // namespace kreg
