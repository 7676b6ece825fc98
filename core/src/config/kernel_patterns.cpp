// Kernel names and globs from a config or the command line, resolved against the registry's names.
#include "config/sweep_config.hpp"

#include "common/glob.hpp"
#include "common/suggest.hpp"

#include <algorithm>

namespace kreg {
namespace {
bool is_glob(std::string_view pattern) { return pattern.find_first_of("*?[") != std::string_view::npos; }

std::string list_names(const std::vector<std::string>& names) {
    constexpr std::size_t kShown = 12;
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < kShown; ++i) out += (i ? ", " : "") + names[i];
    if (names.size() > kShown) out += ", ... (" + std::to_string(names.size()) + " in all)";
    return out;
}
}  // namespace

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
