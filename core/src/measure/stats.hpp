// Summary statistics of timing samples.
#pragma once

#include "common/job.hpp"

#include <vector>

namespace kreg {
// Median, min, mean, sample standard deviation and coefficient of variation of samples (ms).
// Empty input gives count 0 and zeros.
TimingStats compute_stats(const std::vector<double>& samples_ms);
}  // namespace kreg
