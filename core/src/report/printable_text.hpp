// Text from plugins, workers and builds on its way into a gradebook, a report file or the console, when
// its line breaks are worth keeping (a build log's tail, a multi-line summary). For one line, use
// printable_utf8 (common/text.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace kreg {

// printable_utf8 line by line: valid UTF-8 of at most max_bytes (cut with "..."), invalid bytes become
// U+FFFD and control characters a space, except that "\n" and "\r\n" line ends are kept.
std::string printable_lines(std::string_view text, std::size_t max_bytes);

// A copy of value with every string (and object key) made printable: strings by printable_lines with
// max_string_bytes, keys by printable_utf8 with 256 bytes. Numbers, booleans and nulls are unchanged.
nlohmann::json printable_json(const nlohmann::json& value, std::size_t max_string_bytes);

}  // namespace kreg
