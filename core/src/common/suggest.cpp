#include "common/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace kreg {
namespace {
char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Three rolling rows are enough: a swap looks two rows back.
    const std::size_t n = b.size();
    std::vector<std::size_t> before_previous(n + 1), previous(n + 1), current(n + 1);
    for (std::size_t j = 0; j <= n; ++j) previous[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= n; ++j) {
            const std::size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]))
                current[j] = std::min(current[j], before_previous[j - 2] + 1);
        }
        std::swap(before_previous, previous);
        std::swap(previous, current);
    }
    return previous[n];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    for (const auto& candidate : candidates) {
        const std::size_t distance = edit_distance(word, candidate);
        const std::size_t allowed = std::max(word.size(), candidate.size()) / 3;
        if (distance > allowed || distance >= word.size()) continue;
        if (!best || distance < best_distance) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    const auto match = closest_match(word, candidates);
    return match ? " (did you mean '" + *match + "'?)" : std::string();
}

}  // namespace kreg
