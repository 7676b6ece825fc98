// The secret seed: staff mix it into every published case seed so that the inputs of a grading run cannot
// be computed in advance from the public rubric.
#include "grade/rubric.hpp"

#include <cstdlib>

namespace kreg {
namespace {
constexpr const char* kEnvironmentSource = "<environment>";

// splitmix64's finaliser: a bijection of 64-bit values with full avalanche.
uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

[[noreturn]] void bad_secret(const std::string& why) {
    throw ConfigError(kEnvironmentSource, kSecretSeedVariable, why);
}
}  // namespace

uint64_t mix_secret_seed(uint64_t case_seed, uint64_t secret) {
    if (secret == 0) return case_seed;
    // Keyed by the mixed secret, then mixed again: for one secret a bijection of case_seed (xor and
    // splitmix64 both are), and every output bit depends on every bit of both.
    return splitmix64(splitmix64(secret) ^ case_seed);
}

uint64_t parse_secret_seed(const std::string& text) {
    if (text.empty()) bad_secret("is empty");
    const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const std::string digits = hex ? text.substr(2) : text;
    uint64_t value = 0;
    const uint64_t base = hex ? 16 : 10;
    for (char c : digits) {
        uint64_t d;
        if (c >= '0' && c <= '9')
            d = uint64_t(c - '0');
        else if (hex && c >= 'a' && c <= 'f')
            d = uint64_t(c - 'a' + 10);
        else if (hex && c >= 'A' && c <= 'F')
            d = uint64_t(c - 'A' + 10);
        else
            bad_secret("expected a decimal or 0x-prefixed hexadecimal integer (the value is not shown)");
        if (value > (UINT64_MAX - d) / base) bad_secret("does not fit in 64 bits");
        value = value * base + d;
    }
    if (value == 0) bad_secret("must not be 0 (0 means no secret; unset the variable instead)");
    return value;
}

std::optional<uint64_t> secret_seed_from_environment() {
    const char* text = std::getenv(kSecretSeedVariable);
    if (text == nullptr || *text == '\0') return std::nullopt;
    return parse_secret_seed(text);
}

}  // namespace kreg
