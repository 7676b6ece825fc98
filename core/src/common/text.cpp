#include "common/text.hpp"

#include <algorithm>

namespace kreg {
namespace {

// The length of the valid UTF-8 sequence at text[i], or 0 (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF).
size_t utf8_sequence(std::string_view text, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    if (b0 < 0x80) return 1;
    size_t length;
    unsigned char low = 0x80, high = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF)
        length = 2;
    else if (b0 >= 0xE0 && b0 <= 0xEF) {
        length = 3;
        if (b0 == 0xE0) low = 0xA0;
        if (b0 == 0xED) high = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        length = 4;
        if (b0 == 0xF0) low = 0x90;
        if (b0 == 0xF4) high = 0x8F;
    } else {
        return 0;
    }
    if (i + length > text.size()) return 0;
    if (byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (size_t k = 2; k < length; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    return length;
}

}  // namespace

std::string_view trim(std::string_view text, std::string_view blanks) {
    const size_t first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos) return {};
    return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

std::string printable_utf8(std::string_view text, size_t max_bytes) {
    static const std::string kReplacement = "\xEF\xBF\xBD";
    static const std::string kCut = "...";
    std::string out;
    out.reserve(std::min(text.size(), max_bytes));
    for (size_t i = 0; i < text.size();) {
        const size_t length = utf8_sequence(text, i);
        std::string piece;
        if (length == 0) {
            piece = kReplacement;
            i += 1;
        } else {
            piece.assign(text.substr(i, length));
            if (length == 1 && (static_cast<unsigned char>(piece[0]) < 0x20 || piece[0] == 0x7F)) piece = " ";
            i += length;
        }
        if (out.size() + piece.size() + (i < text.size() ? kCut.size() : 0) > max_bytes) {
            while (out.size() + kCut.size() > max_bytes && !out.empty()) {  // back to a character boundary
                size_t back = out.size() - 1;
                while (back > 0 && (static_cast<unsigned char>(out[back]) & 0xC0) == 0x80) --back;
                out.erase(back);
            }
            return out + (max_bytes >= kCut.size() ? kCut : "");
        }
        out += piece;
    }
    return out;
}

}  // namespace kreg
