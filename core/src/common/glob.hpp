// Shell-style name matching, shared by folders that need it without the config's other types.
#pragma once

#include <string_view>

namespace kreg {

// Shell-style match of the whole name: '*' any run of characters, '?' one character, "[abc]", "[a-z]",
// "[!abc]" or "[^abc]" one character of (not of) the set. A '[' without its ']' matches itself.
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace kreg
