// Locale-independent number text for reports (printf honours LC_NUMERIC and could print "1,5").
#pragma once

#include <charconv>
#include <string>

namespace kreg::detail {

inline std::string format_number(double value, std::chars_format format, int precision) {
    char text[64];
    const auto result = std::to_chars(text, text + sizeof(text), value, format, precision);
    if (result.ec != std::errc()) return "nan";
    return std::string(text, result.ptr);
}
// Like printf("%.<precision>f").
inline std::string format_fixed(double value, int precision) {
    return format_number(value, std::chars_format::fixed, precision);
}
// Like printf("%.<precision>g").
inline std::string format_general(double value, int precision) {
    return format_number(value, std::chars_format::general, precision);
}

}  // namespace kreg::detail
