// The first error of a build log, for the people who must fix it: a student reading their feedback and
// staff reading the grading console. A failed build's log can hold pages of cmake and ninja chatter and a
// cascade of follow-on errors; the first error is the one to fix first.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

// The lines of the first error in log, "" when none is recognised. An error is the first line that is
//   - a compiler diagnostic: "FILE:LINE[:COL]: error: ..." or "... fatal error: ..." (gcc, clang), or
//     "FILE(LINE): error: ..." (nvcc);
//   - a link error: "... undefined reference to ..." or "... ld: ... error ...";
//   - a configure error: "CMake Error ...".
// It comes with the context line just before it when that line says where it is ("FILE: In function
// ...:", "In file included from ...", "... ld: FILE: in function ..."), and with the lines after it
// that belong to it (indented: the source excerpt and caret of gcc, clang and nvcc, a CMake error's
// message), up to max_lines lines in all, each cut to 300 bytes and made printable (printable_utf8),
// joined with "\n".
std::string first_compiler_error(std::string_view log, std::size_t max_lines = 8);

// first_compiler_error's lines one by one, each made printable again (they may have come back from a
// file), for a console that indents them under a row.
std::vector<std::string> error_excerpt_lines(std::string_view lines);

// The error line alone of first_compiler_error's lines (without its context and excerpt), for a
// one-line summary; "" when lines holds none.
std::string error_line_of(std::string_view lines);

}  // namespace kreg
