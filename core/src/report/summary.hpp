// How many rows ended in each status: the JSON summary and the console's last line.
#pragma once

#include "common/job.hpp"

#include <cstddef>
#include <utility>
#include <vector>

namespace kreg {

// One entry per status, in all_row_statuses() order, zeros included.
std::vector<std::pair<RowStatus, size_t>> count_by_status(const std::vector<Record>& records);

}  // namespace kreg
