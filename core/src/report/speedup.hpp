// Speed-up of each row over a baseline kernel (e.g. cuBLAS) on the same problem.
#pragma once

#include "common/job.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kreg {

// baseline's median / r's median, where baseline is the first ok row of kernel `baseline` with r's shape
// and dtype. nullopt unless both rows are ok with a positive median. The baseline's own row gives 1.
std::optional<double> speedup_vs_baseline(const Record& r, const std::vector<Record>& all, const std::string& baseline);

// The same for every row of all, in order, in one pass over the baseline rows (reports re-render after
// each row, so this must not be quadratic). No baseline gives all nullopt.
std::vector<std::optional<double>> speedups_vs_baseline(const std::vector<Record>& all,
                                                        const std::optional<std::string>& baseline);

}  // namespace kreg
