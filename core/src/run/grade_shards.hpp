// runner grade --devices all|0,1: the submissions graded on several GPUs at once, as shards that merge.
#pragma once

#include "run/sweep_request.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kreg {

// One `runner grade ... --shard I/K` per GPU (K GPUs), each started with CUDA_VISIBLE_DEVICES set to its
// GPU's UUID, so that it and every worker it confines see that GPU alone; their output goes to our
// stderr, each line marked with its device. Then `runner merge --expect K --force OUT OUT/shard-*-of-K`
// makes the one gradebook in OUT. grade_args: the grade command line after "grade", without --devices.
// Returns grade's exit status: 2 or 3 when a shard says so, else the merge's failure, else 1 when some
// shard could not finish a submission, else 4 (--fail-under), else 0.
int grade_on_devices(const DevicesSpec& devices, const std::vector<std::string>& grade_args,
                     const std::filesystem::path& out, const std::filesystem::path& runner_exe);

// runner grade --jobs N: the same shards as --devices, on this machine's CPUs, N at once: each shard grades
// its submissions' correctness while the others do theirs, and every shard times its tiers under one lock
// (kTimedTierLockVariable names the lock file, OUT/.timed-tiers.lock), so that no ratio is measured while
// another shard's timed run loads the machine.
int grade_with_jobs(int jobs, const std::vector<std::string>& grade_args, const std::filesystem::path& out,
                    const std::filesystem::path& runner_exe);

// The environment variable a shard of --jobs reads the timed tiers' lock file from.
inline constexpr const char* kTimedTierLockVariable = "KREG_GRADE_TIMED_TIER_LOCK";

// One shard's lane: the GPU its processes see ("" : the environment's own) and its mark on our stderr.
struct GradeShardLane {
    std::string uuid;
    std::string mark;
};
// One `runner grade ... --shard I/K` per lane, at once, with environment added to each; then the merge into
// out. The exit status as grade_on_devices says.
int grade_in_shards(const std::vector<GradeShardLane>& lanes, const std::vector<std::string>& grade_args,
                    const std::filesystem::path& out, const std::filesystem::path& runner_exe,
                    const std::vector<std::string>& environment);

// The arguments with every --devices option (and its value) taken out; "" when there was none.
std::vector<std::string> without_devices_option(const std::vector<std::string>& args, std::string& value);

}  // namespace kreg
