#include "report/markup_text.hpp"

#include <algorithm>
#include <cctype>

namespace kreg {

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string markdown_text(std::string_view text) {
    static constexpr std::string_view kSpecial = "\\`*[]<>&|#~";
    const auto alnum = [&](std::size_t i) {
        return i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]));
    };
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n' || c == '\r') {
            out += ' ';
            continue;
        }
        // '_' between two letters or digits can neither open nor close an emphasis (CommonMark's flanking
        // rules), so snake_case names stay readable in the file itself.
        const bool boundary_underscore = c == '_' && !(i > 0 && alnum(i - 1) && alnum(i + 1));
        if (kSpecial.find(c) != std::string_view::npos || boundary_underscore) out += '\\';
        out += c;
    }
    return out;
}

std::string markdown_code_block(std::string_view text) {
    std::size_t longest = 0, run = 0;
    for (char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
    std::string out = fence + "\n";
    out += text;
    if (!text.empty() && text.back() != '\n') out += '\n';
    return out + fence + "\n";
}

std::string shell_word(std::string_view text) {
    const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("_./:=,+@%-").find(c) != std::string_view::npos;
    });
    if (plain) return std::string(text);
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

}  // namespace kreg
