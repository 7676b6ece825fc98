// CSV rows derived from the same Record fields as the JSON report, for spreadsheets and pandas.
// Columns never change meaning; new ones are only appended (and bump kReportSchemaVersion's minor).
#pragma once

#include "common/baseline.hpp"
#include "common/job.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

// The header line, without a line terminator. Starts with exactly
// kernel,plugin,backend,dtype,m,n,k,status,max_rel_err,median_ms,min_ms,cv,gflops
std::string csv_header();

// One row, without a line terminator. Text fields go through csv_field; fields are quoted per RFC 4180 when they hold a
// comma, quote, CR or LF (reasons often do), so a row can span several physical lines. Absent values are empty. Times
// are printed as %.6f ms, errors and ratios as %.6g, GFLOP/s as %.3f.
std::string csv_row(const Record& r, std::optional<double> speedup);

// A single text field, quoted when needed. Made printable first (printable_lines: invalid UTF-8 becomes
// U+FFFD, control characters other than line ends a space), and a text a spreadsheet would run as a
// formula (starting with '=', '+', '-', '@', TAB or CR) gets a leading "'". Numbers never go through it,
// so -0.5 stays a number.
std::string csv_field(std::string_view text);

}  // namespace kreg

namespace kreg {
// The whole file: the header and one row per record, each ending in "\n", speed-ups computed over
// records.
std::string csv_document(const std::vector<Record>& records, const Baseline& baseline);
}  // namespace kreg
