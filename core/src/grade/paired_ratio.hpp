// The speed ratio of a submission to a reference from paired measurements: rounds in which the two ran
// one after the other (A, B, A, B ...) on the same shape, so that whatever slowed the machine during a
// round slowed both. Each round gives one ratio (reference median / submission median); the verdict
// rests on their geometric mean and its confidence interval, not on two medians taken minutes apart.
#pragma once

#include <vector>

namespace kreg {

struct RatioInterval {
    double ratio = 0;          // geometric mean of the per-round ratios
    double low = 0, high = 0;  // its two-sided confidence interval (low == high == ratio for one round: unknown spread)
    int rounds = 0;
};

// The geometric mean of per-round ratios (> 0, finite, at least one) with its Student-t interval on their
// logarithms at `confidence`: what paired_ratio computes from two lists of medians, and what a tier
// against the copy ceiling computes from each round's fraction of it.
RatioInterval ratio_interval(const std::vector<double>& ratios, double confidence = 0.95);

// reference_ms[i] and submission_ms[i] are round i's medians (> 0, same count, >= 1). Student-t interval
// on the log ratios at `confidence` (0.95; 0.90 and 0.99 also tabulated).
RatioInterval paired_ratio(const std::vector<double>& reference_ms, const std::vector<double>& submission_ms,
                           double confidence = 0.95);

enum class TierDecision {
    above,      // the whole interval is at or above the threshold: the tier is earned
    below,      // the whole interval is below it: not earned
    undecided,  // the interval straddles it (or there is one round only): measure more rounds
};
TierDecision decide_tier(const RatioInterval& interval, double min_ratio);

// The two-sided Student-t quantile for `confidence` at `degrees` of freedom (>= 1).
double student_t_quantile(double confidence, int degrees);

}  // namespace kreg
