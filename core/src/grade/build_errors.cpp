#include "grade/build_errors.hpp"

#include <regex>
#include <sstream>

namespace kreg {

namespace {

bool is_error_line(const std::string& line) {
    return line.find("error:") != std::string::npos || line.find("CMake Error") != std::string::npos ||
           line.find("undefined reference to") != std::string::npos;
}

// Context a compiler or CMake prints under a diagnostic: indented, or GCC's "  74 | code" and caret lines.
bool is_context_line(const std::string& line) { return !line.empty() && (line[0] == ' ' || line[0] == '\t'); }

}  // namespace

std::vector<std::string> first_compiler_error(const std::string& log, size_t max_lines) {
    static const std::regex scratch("/[^ :]*kreg-scratch-[A-Za-z0-9]+/(src|build)/");
    std::istringstream in(log);
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (lines.empty()) {
            if (!is_error_line(line)) continue;
        } else if (!is_context_line(line) || lines.size() >= max_lines) {
            break;
        }
        lines.push_back(std::regex_replace(line, scratch, ""));
    }
    return lines;
}

}  // namespace kreg
