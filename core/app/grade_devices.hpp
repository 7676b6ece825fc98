// runner grade --devices all|0,1: the submissions graded on several GPUs at once, as shards that merge.
#pragma once

#include "cli.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kreg::app {

// One `runner grade ... --shard I/K` per GPU (K GPUs), each started with CUDA_VISIBLE_DEVICES set to its
// GPU's UUID, so that it and every worker it confines see that GPU alone; their output goes to our
// stderr, each line marked with its device. Then `runner merge --expect K --force OUT OUT/shard-*-of-K`
// makes the one gradebook in OUT. grade_args: the grade command line after "grade", without --devices.
// Returns grade's exit status: 2 or 3 when a shard says so, else the merge's failure, else 1 when some
// shard could not finish a submission, else 4 (--fail-under), else 0.
int grade_on_devices(const DevicesSpec& devices, const std::vector<std::string>& grade_args, const std::filesystem::path& out,
                     const std::filesystem::path& runner_exe);

// The arguments with every --devices option (and its value) taken out; "" when there was none.
std::vector<std::string> without_devices_option(const std::vector<std::string>& args, std::string& value);

}  // namespace kreg::app
