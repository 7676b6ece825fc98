// Text that came from a plugin (its messages, its stderr, a worker's reasons) on its way into reports:
// a gradebook cell, a JSON string, a terminal line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kreg {

// Valid UTF-8 of at most max_bytes: invalid bytes become U+FFFD, control characters (C0 and DEL, tabs
// and line ends included) a space; a longer text is cut at a character boundary and ends in "...".
std::string printable_utf8(std::string_view text, size_t max_bytes);

}  // namespace kreg
