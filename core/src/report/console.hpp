// What a person watching the terminal sees: a line per finished job, then a table of every row.
#pragma once

#include "common/baseline.hpp"
#include "common/job.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// An aligned table, one line per record in order, columns
//   kernel  dtype  shape  status  median ms  GFLOP/s  max err  [speed-up]
// ("speed-up" only when a baseline is given; "-" for absent values), each row that is not ok followed by
// its whole reason on lines of its own (indented_text, 4 spaces: a diagnosis is not worth reading cut
// off), then a blank line and the counts, e.g. "5 rows: 3 ok, 2 skipped". Every line ends in "\n" and has
// no trailing spaces.
std::string format_table(const std::vector<Record>& records, const Baseline& baseline);

// One line, no terminator, e.g. "[ 3/40] cpu_blocked  fp32  512x512x512  ok  1.234 ms  217.5 GFLOP/s";
// rows that are not ok show the error (if measured) and the reason instead of the timing.
std::string format_progress(size_t done, size_t total, const Record& r);

// text on one line and safe for a terminal (printable_utf8: control characters, CR, LF and tabs included,
// become spaces, invalid UTF-8 U+FFFD), cut to at most max_bytes with "..." at the end, never inside a
// UTF-8 character.
std::string one_line(const std::string& text, size_t max_bytes);

// Every line of text, made safe for a terminal (printable_lines, at most max_bytes in all), indented by
// indent spaces, without trailing spaces, each ending in "\n"; "" for an empty text. How tables show a
// reason or a summary in full under its row.
std::string indented_text(const std::string& text, size_t indent, size_t max_bytes);

}  // namespace kreg
