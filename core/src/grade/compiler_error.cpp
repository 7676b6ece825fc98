#include "grade/compiler_error.hpp"

#include "common/text.hpp"

#include <vector>

namespace kreg {
namespace {

constexpr std::size_t kMaxLineBytes = 300;

bool contains(std::string_view line, std::string_view what) { return line.find(what) != std::string_view::npos; }
bool starts_with(std::string_view line, std::string_view what) { return line.substr(0, what.size()) == what; }

bool is_error_line(std::string_view line) {
    if (starts_with(line, "CMake Error")) return true;
    if (contains(line, "undefined reference to") || contains(line, "fatal error:")) return true;
    // "a.cpp:4:3: error: ..." and nvcc's "a.cu(4): error: ..." both put the word right after a colon.
    if (contains(line, ": error:") || contains(line, "): error")) return true;
    return starts_with(line, "error:") || starts_with(line, "error ");
}

// A line that says where the error that follows is: gcc's "a.cpp: In function 'f':", an include chain,
// the linker's "ld: a.o: in function `main':".
bool is_context_line(std::string_view line) {
    return contains(line, ": In function") || contains(line, ": In member function") ||
           contains(line, ": In constructor") || contains(line, ": In instantiation of") ||
           starts_with(line, "In file included from") || contains(line, ": in function `");
}

// The excerpt under a diagnostic is indented ("    4 |   foo(1);", "      |   ^~~"); so is a CMake error's
// message. A line that starts with a non-space is the next diagnostic.
bool belongs_to_error(std::string_view line) { return !line.empty() && (line.front() == ' ' || line.front() == '\t'); }

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back(line);
        start = end + 1;
    }
    return lines;
}

}  // namespace

std::string first_compiler_error(std::string_view log, std::size_t max_lines) {
    const std::vector<std::string_view> lines = split_lines(log);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (!is_error_line(lines[i])) continue;
        std::vector<std::string_view> picked;
        if (i > 0 && is_context_line(lines[i - 1])) picked.push_back(lines[i - 1]);
        picked.push_back(lines[i]);
        for (std::size_t j = i + 1; j < lines.size() && belongs_to_error(lines[j]); ++j) picked.push_back(lines[j]);
        std::string out;
        for (std::size_t k = 0; k < picked.size() && k < max_lines; ++k) {
            if (k) out += '\n';
            out += printable_utf8(picked[k], kMaxLineBytes);
        }
        return out;
    }
    return "";
}

std::vector<std::string> error_excerpt_lines(std::string_view lines) {
    std::vector<std::string> out;
    for (const std::string_view line : split_lines(lines)) out.push_back(printable_utf8(line, kMaxLineBytes));
    return out;
}

std::string error_line_of(std::string_view lines) {
    for (const std::string_view line : split_lines(lines))
        if (is_error_line(line)) return std::string(line);
    return "";
}

}  // namespace kreg
