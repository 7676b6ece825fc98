// run_in_lanes, the one way work runs on several devices at once (a sweep's --devices, grading's --devices and
// --jobs): every item once, a group (a kernel's jobs) on one lane, lanes really concurrent, results handed over
// one at a time to the item they came from, and a failure or a stop ends every lane. The lanes here are fakes:
// no process, no GPU.
#include "run/lanes.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace kreg {
namespace {

std::vector<Job> jobs_of(const std::vector<std::pair<std::string, int>>& kernels) {
    std::vector<Job> jobs;
    for (const auto& [kernel, count] : kernels)
        for (int i = 0; i < count; ++i) {
            Job j;
            j.id = jobs.size();
            j.kernel = kernel;
            jobs.push_back(j);
        }
    return jobs;
}

Record row_of(const Job& job) {
    Record r;
    r.job_id = job.id;
    r.kernel = job.kernel;
    r.status = RowStatus::ok;
    return r;
}

TEST(Lanes, KernelRunsAreTheConsecutiveJobsOfOneKernel) {
    const auto jobs = jobs_of({{"a", 2}, {"b", 3}, {"a", 1}});
    const auto runs = kernel_runs(jobs);
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0], (std::pair<size_t, size_t>{0, 2}));
    EXPECT_EQ(runs[1], (std::pair<size_t, size_t>{2, 5}));
    EXPECT_EQ(runs[2], (std::pair<size_t, size_t>{5, 6}));
    EXPECT_TRUE(kernel_runs({}).empty());
}

TEST(Lanes, EveryJobOnceEachKernelOnOneLaneAndRowsOneAtATime) {
    const auto jobs = jobs_of({{"k0", 3}, {"k1", 2}, {"k2", 4}, {"k3", 1}, {"k4", 3}, {"k5", 2}});
    std::mutex lock;
    std::map<uint64_t, int> seen;
    std::map<std::string, std::set<size_t>> lanes_of_kernel;
    std::atomic<int> inside{0};
    std::atomic<bool> overlapped{false};
    std::set<size_t> finished;
    LaneCallbacks<Record> cb;
    cb.run = [&](size_t, size_t item) {
        const Job& job = jobs[item];
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return row_of(job);
    };
    cb.take = [&](size_t lane, size_t item, Record&& r) {
        EXPECT_EQ(r.job_id, jobs[item].id) << "a row handed over as another item's";
        if (inside.fetch_add(1) != 0) overlapped = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        {
            std::lock_guard<std::mutex> g(lock);
            ++seen[r.job_id];
            lanes_of_kernel[r.kernel].insert(lane);
        }
        inside.fetch_sub(1);
    };
    cb.finish = [&](size_t lane) {
        std::lock_guard<std::mutex> g(lock);
        EXPECT_TRUE(finished.insert(lane).second) << "lane " << lane << " finished twice";
    };
    run_in_lanes(kernel_runs(jobs), 3, cb);
    EXPECT_FALSE(overlapped) << "on_record ran in two lanes at once";
    ASSERT_EQ(seen.size(), jobs.size());
    for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << "job " << id;
    for (const auto& [kernel, lanes] : lanes_of_kernel)
        EXPECT_EQ(lanes.size(), 1u) << kernel << " ran on several lanes";
    EXPECT_EQ(finished, (std::set<size_t>{0, 1, 2}));
}

TEST(Lanes, LanesRunAtTheSameTime) {
    // Each kernel's first job waits until two jobs are running at once; serial lanes would never get there.
    const auto jobs = jobs_of({{"a", 1}, {"b", 1}});
    std::mutex m;
    std::condition_variable cv;
    int running = 0;
    bool met = true;
    LaneCallbacks<Record> cb;
    cb.run = [&](size_t, size_t item) {
        const Job& job = jobs[item];
        std::unique_lock<std::mutex> g(m);
        ++running;
        cv.notify_all();
        if (!cv.wait_for(g, std::chrono::seconds(20), [&] { return running >= 2; })) met = false;
        return row_of(job);
    };
    cb.take = [](size_t, size_t, Record&&) {};
    run_in_lanes(kernel_runs(jobs), 2, cb);
    EXPECT_TRUE(met) << "the two lanes never ran a job at the same time";
}

TEST(Lanes, AFailingCallbackStopsEveryLaneAndIsRethrown) {
    const auto jobs = jobs_of({{"a", 5}, {"b", 5}, {"c", 5}, {"d", 5}});
    std::atomic<int> runs{0};
    LaneCallbacks<Record> cb;
    cb.run = [&](size_t, size_t item) {
        const Job& job = jobs[item];
        ++runs;
        if (job.kernel == "b" && job.id == 6) throw std::runtime_error("disk full");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return row_of(job);
    };
    cb.take = [](size_t, size_t, Record&&) {};
    EXPECT_THROW(
        {
            try {
                run_in_lanes(kernel_runs(jobs), 2, cb);
            } catch (const std::runtime_error& e) {
                EXPECT_STREQ(e.what(), "disk full");
                throw;
            }
        },
        std::runtime_error);
    EXPECT_LT(runs.load(), int(jobs.size())) << "lanes went on after a failure";
}

TEST(Lanes, AStopEndsTheSweepAfterTheJobsInFlight) {
    const auto jobs = jobs_of({{"a", 10}, {"b", 10}});
    std::atomic<int> rows{0};
    LaneCallbacks<Record> cb;
    cb.run = [&](size_t, size_t item) {
        const Job& job = jobs[item];
        return row_of(job);
    };
    cb.take = [&](size_t, size_t, Record&&) { ++rows; };
    cb.stop = [&] { return rows.load() >= 3; };
    run_in_lanes(kernel_runs(jobs), 2, cb);
    EXPECT_GE(rows.load(), 3);
    EXPECT_LE(rows.load(), 4) << "after the stop, each lane may finish at most the job it had started";
}

// Grading's work: every submission its own group, so N lanes grade N submissions at once and a slow one
// holds up only its own lane.
TEST(Lanes, OneItemGroupsLetASlowItemHoldUpOnlyItsLane) {
    EXPECT_EQ(one_item_groups(3), (std::vector<ItemGroup>{{0, 1}, {1, 2}, {2, 3}}));
    EXPECT_TRUE(one_item_groups(0).empty());
    std::mutex m;
    std::condition_variable cv;
    bool others_done = false;
    std::vector<size_t> order;
    LaneCallbacks<size_t> cb;
    cb.run = [&](size_t, size_t item) {
        if (item == 0) {  // the slow one: waits until the others were all handed over
            std::unique_lock<std::mutex> g(m);
            cv.wait_for(g, std::chrono::seconds(20), [&] { return others_done; });
        }
        return item * 10;
    };
    cb.take = [&](size_t, size_t item, size_t&& result) {
        EXPECT_EQ(result, item * 10);
        std::lock_guard<std::mutex> g(m);
        order.push_back(item);
        if (order.size() == 3) {
            others_done = true;
            cv.notify_all();
        }
    };
    run_in_lanes(one_item_groups(4), 2, cb);
    EXPECT_EQ(order, (std::vector<size_t>{1, 2, 3, 0})) << "the other lane waited for the slow item";
}

TEST(Lanes, NoLanesIsAnError) { EXPECT_THROW(run_in_lanes(one_item_groups(1), 0, LaneSteps{}), std::invalid_argument); }

}  // namespace
}  // namespace kreg
