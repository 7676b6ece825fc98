// What a person watching the terminal sees: a line per finished job, then a table of every row.
#pragma once

#include "common/job.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// An aligned table, one line per record in order, columns
//   kernel  dtype  shape  status  median ms  GFLOP/s  max err  [speed-up]  reason
// ("speed-up" only when a baseline is given; "-" for absent values; the reason of non-ok rows is
// flattened to one line and truncated), then a blank line and the counts, e.g. "5 rows: 3 ok, 2 skipped".
// Every line ends in "\n" and has no trailing spaces.
std::string format_table(const std::vector<Record>& records, std::optional<std::string> baseline);

// One line, no terminator, e.g. "[ 3/40] cpu_blocked  fp32  512x512x512  ok  1.234 ms  217.5 GFLOP/s";
// rows that are not ok show the error (if measured) and the reason instead of the timing.
std::string format_progress(size_t done, size_t total, const Record& r);

// text on one line and safe for a terminal (printable_utf8: control characters, CR, LF and tabs included,
// become spaces, invalid UTF-8 U+FFFD), cut to at most max_bytes with "..." at the end, never inside a
// UTF-8 character.
std::string one_line(const std::string& text, size_t max_bytes);

}  // namespace kreg
