// Text helpers: text that came from a plugin (its messages, its stderr, a worker's reasons) on its way into
// reports (a gradebook cell, a JSON string, a terminal line), and the trimming every parser of typed text needs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kreg {

// Valid UTF-8 of at most max_bytes: invalid bytes become U+FFFD, control characters (C0 and DEL, tabs
// and line ends included) a space; a longer text is cut at a character boundary and ends in "...".
std::string printable_utf8(std::string_view text, size_t max_bytes);

// text without the characters of `blanks` at either end (by default every character std::isspace takes in
// the C locale; a parser that must refuse a line end inside a value passes " \t").
std::string_view trim(std::string_view text, std::string_view blanks = " \t\n\v\f\r");

}  // namespace kreg
