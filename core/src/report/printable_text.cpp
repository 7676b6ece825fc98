#include "report/printable_text.hpp"

#include "common/text.hpp"

namespace kreg {

std::string printable_lines(std::string_view text, std::size_t max_bytes) {
    std::string out;
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t newline = text.find('\n', start);
        std::string_view line =
            text.substr(start, newline == std::string_view::npos ? std::string_view::npos : newline - start);
        const bool crlf = newline != std::string_view::npos && !line.empty() && line.back() == '\r';
        if (crlf) line.remove_suffix(1);
        out += printable_utf8(line, line.size() * 3 + 3);  // never cut here: U+FFFD is 3 bytes
        if (newline == std::string_view::npos) break;
        out += crlf ? "\r\n" : "\n";
        start = newline + 1;
    }
    if (out.size() <= max_bytes) return out;
    const std::string cut = "...";
    std::size_t keep = max_bytes > cut.size() ? max_bytes - cut.size() : 0;
    while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xC0) == 0x80) --keep;  // a character boundary
    out.erase(keep);
    return max_bytes >= cut.size() ? out + cut : out;
}

nlohmann::json printable_json(const nlohmann::json& value, std::size_t max_string_bytes) {
    if (value.is_string()) return printable_lines(value.get_ref<const std::string&>(), max_string_bytes);
    if (value.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& item : value) out.push_back(printable_json(item, max_string_bytes));
        return out;
    }
    if (value.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, item] : value.items())
            out[printable_utf8(key, 256)] = printable_json(item, max_string_bytes);
        return out;
    }
    return value;
}

}  // namespace kreg
