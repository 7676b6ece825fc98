// The three renderings of a comparison: a table for people, JSON and CSV for scripts. All three come
// from the same Comparison, so they cannot disagree.
#pragma once

#include "compare/compare.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace kreg {

// Header lines (what A and B are, warnings when they ran on different GPUs or are synthetic or
// incomplete), the table, and a summary line.
std::string format_comparison_table(const ReportFile& a, const ReportFile& b, const Comparison& c);

// {"a": {...}, "b": {...}, "threshold", "noise_model": {...}, "alpha", "rows": [...],
//  "summary": {verdict: count, "regressions": n}}. A row's "verdict" is the model's, also where
// "plugin_unchanged" makes a slower row no regression.
nlohmann::json comparison_to_json(const ReportFile& a, const ReportFile& b, const Comparison& c);

// Header:
// kernel,m,n,k,dtype,params,status_a,status_b,median_a_ms,median_b_ms,ratio,p_value,samples_a,samples_b,verdict,
// regression,note,adjusted_ratio,noise_floor,control,plugin_unchanged (the last four came with the noise model,
// after the old columns, so that scripts reading those by position still work)
std::string comparison_to_csv(const Comparison& c);

}  // namespace kreg
