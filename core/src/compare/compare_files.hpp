// `runner compare A.json B.json` as a library call: its option values checked (the threshold, the output
// files), and the reports of each side (A or B and its --also-a/--also-b runs) read and compared.
#pragma once

#include "compare/compare.hpp"
#include "compare/report_rows.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kreg {

// "5%", "5" and "2.5%" are percentages; the result is a fraction (0.05). Throws std::invalid_argument naming
// --threshold for anything else, and for a percentage outside [0, 100).
double parse_threshold_percent(std::string text);

// Output is never overwritten silently: an existing file needs force. Throws std::invalid_argument naming
// option for an empty path, a folder, or a file that exists without force. Nothing for no path.
void check_output_path(const std::optional<std::string>& path, bool force, const char* option);

struct ComparedReports {
    std::vector<ReportFile> runs_a, runs_b;  // the first of each is A (B) itself, then its other runs
    Comparison result;
};

// Reads every report of both sides (a_paths[0] is A, b_paths[0] is B) and compares them (compare_runs).
// Throws ConfigError naming the file and the JSON path of a report that cannot be read.
ComparedReports compare_report_files(const std::vector<std::string>& a_paths, const std::vector<std::string>& b_paths,
                                     const CompareOptions& options);

}  // namespace kreg
