// `runner compare`: two reports joined row by row, a verdict per row from the raw samples, and whether
// the second one regressed. A row is slower (or faster) only when its change is both larger than a
// minimum effect (the threshold) and significant by a rank test on the samples: so two runs of the same
// code compare `same`, however many rows, and a tiny but real shift below the threshold is not news.
#pragma once

#include "compare/report_rows.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

enum class Verdict {
    same,            // both ok and no significant change beyond the threshold; or the same non-ok status in both
    faster,          // B's median below A's by more than the threshold, and significant
    slower,          // B's median above A's by more than the threshold, and significant
    missing_in_a,    // the row is only in B
    missing_in_b,    // the row is only in A
    status_changed,  // the statuses differ (ok -> crashed, skipped -> ok, ...)
};
std::string_view to_string(Verdict v);

struct CompareOptions {
    double threshold = 0.05;       // minimum relative change of the median that counts (0.05: 5 %)
    double alpha = 0.01;           // significance level of the rank test
    bool fail_on_missing = false;  // an ok row of A missing from B is a regression too
};

// What the samples of one row say, A against B.
struct SampleVerdict {
    Verdict verdict = Verdict::same;
    double median_a_ms = 0, median_b_ms = 0;
    std::optional<double> ratio;  // median B / median A; none when A's median is 0
    double p_value = 1.0;
    std::string note;  // why a visible change is still `same`, e.g. "not significant (p=0.2)"
};
SampleVerdict compare_samples(const std::vector<double>& a_ms, const std::vector<double>& b_ms,
                              const CompareOptions& options);

struct RowComparison {
    RowKey key;
    const ReportRow* a = nullptr;  // null when missing in A
    const ReportRow* b = nullptr;  // null when missing in B
    SampleVerdict samples;         // meaningful when both rows are ok
    Verdict verdict = Verdict::same;
    bool regression = false;  // slower, ok -> not ok, or (with fail_on_missing) ok -> missing
    std::string note;
};

struct Comparison {
    CompareOptions options;
    std::vector<RowComparison> rows;  // A's order, then the rows only B has in B's order
    std::size_t count(Verdict v) const;
    std::size_t regressions() const;
};

// The reports must outlive the result (rows point into them).
Comparison compare_reports(const ReportFile& a, const ReportFile& b, const CompareOptions& options);

}  // namespace kreg
