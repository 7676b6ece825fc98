// `runner __profile_driver ...`: the process `runner --profile` runs under ncu (and tests/sanitizer under
// compute-sanitizer). It loads one plugin and calls one kernel once on its own stream, with exactly
// allocated, copied-in inputs (profile_driver.cpp says how); nothing is verified or timed. In a runner built
// without CUDA it says so and fails.
#pragma once

namespace kreg {
// argv[1] is "__profile_driver", then --NAME VALUE pairs. Returns the process exit status: 0 the kernel ran,
// 1 anything failed (one line on stderr).
int profile_driver_main(int argc, char** argv);
}  // namespace kreg
