#include "report/speedup.hpp"

#include <map>
#include <tuple>

namespace kreg {
namespace {

bool has_median(const Record& r) { return r.status == RowStatus::ok && r.stats && r.stats->median_ms > 0; }

bool same_problem(const Record& a, const Record& b) { return a.shape == b.shape && a.dtype == b.dtype; }

std::optional<double> ratio(const Record& r, const Record* baseline_row) {
    if (!baseline_row || !has_median(r)) return std::nullopt;
    return baseline_row->stats->median_ms / r.stats->median_ms;
}

}  // namespace

std::optional<double> speedup_vs_baseline(const Record& r, const std::vector<Record>& all, const Baseline& baseline) {
    const std::string* kernel = baseline.kernel_for(r.dtype);
    if (!kernel) return std::nullopt;
    for (const Record& candidate : all)
        if (candidate.kernel == *kernel && has_median(candidate) && same_problem(candidate, r))
            return ratio(r, &candidate);
    return std::nullopt;
}

std::vector<std::optional<double>> speedups_vs_baseline(const std::vector<Record>& all, const Baseline& baseline) {
    std::vector<std::optional<double>> out(all.size());
    if (!baseline) return out;
    // The whole shape, per-call tile edge included (as same_problem compares it): two block transposes of one
    // M x N with other blocks are other problems.
    using Problem = std::tuple<int64_t, int64_t, int64_t, int64_t, DType>;
    std::map<Problem, const Record*> baseline_rows;
    for (const Record& r : all)
        if (const std::string* kernel = baseline.kernel_for(r.dtype); kernel && r.kernel == *kernel && has_median(r))
            baseline_rows.emplace(Problem{r.shape.m, r.shape.n, r.shape.k, r.shape.block, r.dtype}, &r);  // the first
    for (size_t i = 0; i < all.size(); ++i) {
        const Record& r = all[i];
        const auto it = baseline_rows.find(Problem{r.shape.m, r.shape.n, r.shape.k, r.shape.block, r.dtype});
        out[i] = ratio(r, it == baseline_rows.end() ? nullptr : it->second);
    }
    return out;
}

}  // namespace kreg
