#include "verify/output_fill.hpp"

#include <cstring>

#include "verify/random_fill.hpp"

namespace kreg {

OutputFill draw_output_fill(uint64_t seed, int finite_share) {
    const uint64_t h = output_fill_mix(seed + 0x6a09e667f3bcc909ULL);
    OutputFill fill;
    fill.finite = int(h & 0xffu) < finite_share;
    fill.key = output_fill_mix(h ^ 0xbb67ae8584caa73bULL);
    // Payloads the harness gives a meaning elsewhere (padding, guard band, transposes' planted NaNs) are
    // skipped, so a NaN found in C still says where it came from; so is the all-ones word.
    constexpr uint32_t kPayload = 0x003fffffu;
    const uint32_t reserved[] = {
        kPadBeforeABits, kPadAfterABits, kPadBeforeBBits, kPadAfterBBits, 0x7fa5a5a5u /* kGuardBits */,
        0x7fc12345u,     0xffc0beefu,    0xffffffffu};
    for (uint64_t draw = h >> 8;; draw = output_fill_mix(draw)) {
        const uint32_t word = (uint32_t(draw >> 63) << 31) | 0x7fc00000u | (uint32_t(draw) & kPayload);
        bool taken = (word & kPayload) == 0;  // the canonical NaN 0x7fc00000 is what arithmetic makes
        for (uint32_t r : reserved) taken = taken || (word & kPayload) == (r & kPayload);
        if (!taken) {
            fill.nan_word = word;
            break;
        }
    }
    return fill;
}

OutputFill call_output_fill(uint64_t call, uint64_t seed, bool first_call_finite) {
    OutputFill fill = draw_output_fill(seed);
    if (call == 1 && !first_call_finite) fill.finite = true;
    return fill;
}

uint64_t checked_fill_seed(uint64_t call, uint64_t job_seed, uint64_t previous_call_seed) {
    return call == 0 ? job_seed ^ 0x6a09e667f3bcc908ULL : previous_call_seed ^ 0xbb67ae8584caa73bULL;
}

void write_output_fill(const OutputFill& fill, float* c, size_t count) {
    if (!fill.finite) {
        fill_bits(c, count, fill.nan_word);
        return;
    }
    for (size_t i = 0; i < count; ++i) {
        const uint32_t word = finite_fill_word(fill.key, i);
        std::memcpy(&c[i], &word, sizeof word);
    }
}

const char* fill_description(const OutputFill& fill) {
    return fill.finite ? "still holds the value C was filled with before the call"
                       : "still holds the NaN C was filled with before the call";
}

}  // namespace kreg
