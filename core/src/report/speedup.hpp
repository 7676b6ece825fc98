// Speed-up of each row over its dtype's baseline kernel (e.g. cuBLAS of that dtype) on the same problem.
#pragma once

#include "common/baseline.hpp"
#include "common/job.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kreg {

// The baseline row's median / r's median, where the baseline row is the first ok row of the kernel
// baseline names for r's dtype, with r's shape and dtype. nullopt when r's dtype has no baseline kernel,
// and unless both rows are ok with a positive median. The baseline's own row gives 1.
std::optional<double> speedup_vs_baseline(const Record& r, const std::vector<Record>& all, const Baseline& baseline);

// The same for every row of all, in order, in one pass over the baseline rows (reports re-render after
// each row, so this must not be quadratic). No baseline gives all nullopt.
std::vector<std::optional<double>> speedups_vs_baseline(const std::vector<Record>& all, const Baseline& baseline);

}  // namespace kreg
