// The Mann-Whitney U test (Wilcoxon rank-sum) on two sets of timing samples. Timing samples are not
// normal (a floor, a long tail of interruptions), so the comparison of two runs uses ranks only.
#pragma once

#include <vector>

namespace kreg {

struct RankTest {
    double u = 0;  // U of the first sample set: pairs (a, b) with a > b, ties counted as 1/2
    double p_value =
        1.0;             // two-sided: the chance of a U this far from n_a*n_b/2 if both sets came from one distribution
    bool exact = false;  // from the exact distribution of U (small sets without ties), else the normal approximation
};

// Both sets must be non-empty; with an empty one (nothing to compare) p_value is 1. The exact
// distribution is used when there are no ties and each set has at most kMaxExactSamples samples;
// otherwise the normal approximation with the tie correction and a continuity correction.
RankTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

inline constexpr std::size_t kMaxExactSamples = 50;

// The median (the mean of the two middle values for an even count); 0 for an empty set.
double median_of(std::vector<double> values);

}  // namespace kreg
