#include "compare/compare.hpp"

#include "compare/mann_whitney.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace kreg {
namespace {

std::string short_p(double p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, p < 0.001 ? "%.1e" : "%.3f", p);
    return buf;
}

std::string percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", fraction * 100);
    return buf;
}

}  // namespace

std::string_view to_string(Verdict v) {
    switch (v) {
        case Verdict::same:
            return "same";
        case Verdict::faster:
            return "faster";
        case Verdict::slower:
            return "slower";
        case Verdict::missing_in_a:
            return "missing_in_a";
        case Verdict::missing_in_b:
            return "missing_in_b";
        case Verdict::status_changed:
            return "status_changed";
    }
    return "?";
}

SampleVerdict compare_samples(const std::vector<double>& a_ms, const std::vector<double>& b_ms,
                              const CompareOptions& options) {
    SampleVerdict s;
    s.median_a_ms = median_of(a_ms);
    s.median_b_ms = median_of(b_ms);
    if (s.median_a_ms > 0) s.ratio = s.median_b_ms / s.median_a_ms;
    const RankTest test = mann_whitney_u(a_ms, b_ms);
    s.p_value = test.p_value;
    if (!s.ratio) {
        s.note = "A's median is 0 ms: no ratio";
        return s;
    }
    const double change = *s.ratio - 1.0;
    const bool beyond_threshold = std::abs(change) > options.threshold;
    const bool significant = s.p_value < options.alpha;
    if (beyond_threshold && significant) {
        s.verdict = change > 0 ? Verdict::slower : Verdict::faster;
    } else if (beyond_threshold) {
        // A change this large that the samples cannot tell from noise: say so, with the reason.
        s.note = percent(change) + " but not significant (p=" + short_p(s.p_value) + ", " +
                 std::to_string(a_ms.size()) + " vs " + std::to_string(b_ms.size()) + " samples)";
    } else if (significant && change != 0) {
        s.note = percent(change) + ", significant but within the threshold";
    }
    return s;
}

std::size_t Comparison::count(Verdict v) const {
    return std::size_t(std::count_if(rows.begin(), rows.end(), [v](const RowComparison& r) { return r.verdict == v; }));
}

std::size_t Comparison::regressions() const {
    return std::size_t(std::count_if(rows.begin(), rows.end(), [](const RowComparison& r) { return r.regression; }));
}

Comparison compare_reports(const ReportFile& a, const ReportFile& b, const CompareOptions& options) {
    Comparison out;
    out.options = options;
    std::map<RowKey, const ReportRow*> rows_of_b;
    for (const auto& row : b.rows) rows_of_b.emplace(row.key, &row);
    std::map<RowKey, bool> seen_in_a;
    for (const auto& row_a : a.rows) {
        RowComparison c;
        c.key = row_a.key;
        c.a = &row_a;
        seen_in_a[row_a.key] = true;
        const auto it = rows_of_b.find(row_a.key);
        if (it == rows_of_b.end()) {
            c.verdict = Verdict::missing_in_b;
            c.regression = options.fail_on_missing && row_a.status == "ok";
            c.note = "only in A (" + row_a.status + ")";
            out.rows.push_back(std::move(c));
            continue;
        }
        c.b = it->second;
        const std::string& sa = row_a.status;
        const std::string& sb = c.b->status;
        if (sa == "ok" && sb == "ok") {
            c.samples = compare_samples(row_a.samples_ms, c.b->samples_ms, options);
            c.verdict = c.samples.verdict;
            c.regression = c.verdict == Verdict::slower;
            c.note = c.samples.note;
        } else if (sa != sb) {
            c.verdict = Verdict::status_changed;
            c.regression = sa == "ok";  // a row that was ok and no longer is
            c.note = sa + " -> " + sb + (sb != "ok" && !c.b->reason.empty() ? ": " + c.b->reason : "");
        } else {
            c.note = "both " + sa;
        }
        out.rows.push_back(std::move(c));
    }
    for (const auto& row_b : b.rows) {
        if (seen_in_a.count(row_b.key)) continue;
        RowComparison c;
        c.key = row_b.key;
        c.b = &row_b;
        c.verdict = Verdict::missing_in_a;
        c.note = "only in B (" + row_b.status + ")";
        out.rows.push_back(std::move(c));
    }
    return out;
}

}  // namespace kreg
