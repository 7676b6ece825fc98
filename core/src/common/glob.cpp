// Shell-style globs over kernel names: the config's and the command line's kernel lists, `runner compare`'s
// filters and the audit's per-symbol allowances all match names this one way.
#include "common/glob.hpp"

#include <cstddef>

namespace kreg {
namespace {
// Matches one character against the class starting at pattern[at] == '['. Returns the index just past the
// closing ']', or npos when there is none (then the '[' is an ordinary character).
std::size_t match_class(std::string_view pattern, std::size_t at, char c, bool& matched) {
    std::size_t i = at + 1;
    const bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
    if (negate) ++i;
    bool in_set = false;
    bool first = true;
    for (; i < pattern.size(); ++i) {
        if (pattern[i] == ']' && !first) {
            matched = in_set != negate;
            return i + 1;
        }
        first = false;
        if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
            in_set = in_set || (pattern[i] <= c && c <= pattern[i + 2]);
            i += 2;
        } else {
            in_set = in_set || pattern[i] == c;
        }
    }
    return std::string_view::npos;
}
}  // namespace

bool glob_match(std::string_view pattern, std::string_view name) {
    // Greedy match with one backtrack point: the last '*' seen and where in name it started matching.
    std::size_t p = 0, n = 0;
    std::size_t star = std::string_view::npos, star_n = 0;
    while (n < name.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            star_n = n;
            continue;
        }
        if (p < pattern.size()) {
            bool matched = false;
            std::size_t next = p + 1;
            if (pattern[p] == '?') {
                matched = true;
            } else if (pattern[p] == '[') {
                next = match_class(pattern, p, name[n], matched);
                if (next == std::string_view::npos) {
                    matched = name[n] == '[';
                    next = p + 1;
                }
            } else {
                matched = pattern[p] == name[n];
            }
            if (matched) {
                p = next;
                ++n;
                continue;
            }
        }
        if (star == std::string_view::npos) return false;
        p = star + 1;
        n = ++star_n;
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

}  // namespace kreg
