// "Did you mean ...?" for names typed by a person: config keys, dtypes, kernel names.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

// Optimal-string-alignment (restricted Damerau-Levenshtein) distance, compared case-insensitively:
// insertions, deletions, substitutions and swaps of two adjacent characters each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to word, when it is close enough to be a plausible typo: at most one edit per
// three characters of the longer word, and fewer edits than word has characters (so that "x" does not
// suggest "m"). Ties go to the earlier candidate. nullopt when none qualifies.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" for the closest match, or "" when there is none; ready to append to a message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace kreg
