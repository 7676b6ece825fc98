// Kernel names and globs from a config or the command line, resolved against the registry's names.
#include "config/sweep_config.hpp"

#include "common/suggest.hpp"

#include <algorithm>

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

bool is_glob(std::string_view pattern) { return pattern.find_first_of("*?[") != std::string_view::npos; }

std::string list_names(const std::vector<std::string>& names) {
    constexpr std::size_t kShown = 12;
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < kShown; ++i) out += (i ? ", " : "") + names[i];
    if (names.size() > kShown) out += ", ... (" + std::to_string(names.size()) + " in all)";
    return out;
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

std::vector<std::string> resolve_kernel_patterns(const std::vector<std::string>& patterns,
                                                 const std::vector<std::string>& available, const std::string& source,
                                                 std::vector<std::string>* unmatched_globs) {
    const bool from_command_line = source == kCommandLineSource;
    std::vector<bool> selected(available.size(), false);
    for (std::size_t i = 0; i < patterns.size(); ++i) {
        const std::string& pattern = patterns[i];
        bool any = false;
        for (std::size_t j = 0; j < available.size(); ++j)
            if (glob_match(pattern, available[j])) any = selected[j] = true;
        if (any) continue;
        if (unmatched_globs != nullptr && is_glob(pattern)) {
            unmatched_globs->push_back(pattern);
            continue;
        }

        std::string message =
            is_glob(pattern) ? "no kernel matches '" + pattern + "'" : "unknown kernel '" + pattern + "'";
        const std::string hint = did_you_mean(pattern, available);
        if (!hint.empty())
            message += hint;
        else if (available.empty())
            message += " (no kernels are loaded)";
        else
            message += " (available: " + list_names(available) + ")";
        throw ConfigError(source, from_command_line ? "--kernels" : "/kernels/" + std::to_string(i), message);
    }
    std::vector<std::string> names;
    for (std::size_t j = 0; j < available.size(); ++j)
        if (selected[j] && std::find(names.begin(), names.end(), available[j]) == names.end())
            names.push_back(available[j]);
    if (names.empty() && unmatched_globs != nullptr && !unmatched_globs->empty())
        throw ConfigError(source, from_command_line ? "--kernels" : "/kernels",
                          "no kernel matches any of the patterns" +
                              (available.empty() ? std::string(" (no kernels are loaded)")
                                                 : " (available: " + list_names(available) + ")"));
    return names;
}

}  // namespace kreg
