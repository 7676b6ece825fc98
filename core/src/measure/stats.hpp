// Summary statistics of timing samples, and the interval the stopping rule (measure/sampler.hpp) reads.
#pragma once

#include "common/job.hpp"

#include <vector>

namespace kreg {

// Median, min, mean, sample standard deviation and coefficient of variation of samples (ms), and the
// median's confidence interval (median_interval, 95 %) where one exists. Empty input gives count 0 and zeros.
TimingStats compute_stats(const std::vector<double>& samples_ms);

// A distribution-free confidence interval of the median: [x(j), x(n+1-j)] of the sorted samples, with
// the largest j for which P(j <= Bin(n, 1/2) <= n - j) >= confidence. It assumes nothing about the
// shape of the distribution (timings are skewed, with a long tail of interrupted calls), only that the
// samples are independent. `exists` is false when n is too small for that confidence at all (n < 6
// for 95 %); then low/high are the extremes and coverage is what they reach.
struct MedianInterval {
    bool exists = false;
    double low = 0, high = 0;
    double coverage = 0;  // the interval's exact coverage (>= confidence when exists)
};
MedianInterval median_interval(std::vector<double> samples, double confidence = 0.95);

// Half the interval's width over the median: the noise the stopping rule compares with its target.
// Infinite when the interval does not exist or the median is not positive.
double relative_half_width(const MedianInterval& interval, double median);

}  // namespace kreg
