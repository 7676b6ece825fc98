#include "report/summary.hpp"

namespace kreg {

std::vector<std::pair<RowStatus, size_t>> count_by_status(const std::vector<Record>& records) {
    std::vector<std::pair<RowStatus, size_t>> counts;
    for (RowStatus s : all_row_statuses()) counts.emplace_back(s, 0);
    for (const Record& r : records)
        for (auto& [status, count] : counts)
            if (status == r.status) ++count;
    return counts;
}

}  // namespace kreg
