#include "verify/random_fill.hpp"

#include <cstring>

#include "verify/output_fill.hpp"  // output_fill_mix: splitmix64's finaliser, shared with C's fill

namespace kreg {
namespace {
uint64_t mix64(uint64_t x) { return output_fill_mix(x); }
}  // namespace

// A graded call's inputs are drawn inside the grader's window on the call (ops/output_export.hpp), where
// every microsecond of harness work lowers the bound an honest kernel is given (grade/timing_claims.hpp).
// The loop is integer arithmetic and an exact conversion, so each clone draws the same bits; with 64-bit
// vector multiplies (AVX-512) it is about 5 times faster than the baseline x86-64 loop (256^3: 0.02 ms for A
// and B against 0.11 ms on the 2-core VM). The clone is chosen once, when the library is loaded (ifunc).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
void fill_uniform(float* data, size_t count, uint64_t seed, uint64_t stream) {
    // One key per (seed, stream); mixing before adding the index keeps nearby streams uncorrelated.
    const uint64_t key = mix64(mix64(seed + 0x9e3779b97f4a7c15ULL) ^ (stream * 0xd1b54a32d192ed03ULL));
    for (size_t i = 0; i < count; ++i) {
        const uint64_t bits = mix64(key + uint64_t(i) * 0x9e3779b97f4a7c15ULL);
        // Top 24 bits -> integer in [0, 2^24) -> [-1, 1) in steps of 2^-23: exact in fp32.
        const int32_t u = int32_t(bits >> 40);
        data[i] = float(u - (1 << 23)) * (1.0f / float(1 << 23));
    }
}

void fill_bits(float* data, size_t count, uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    for (size_t i = 0; i < count; ++i) data[i] = value;
}

void poison_nan(float* data, size_t count) { fill_bits(data, count, kPoisonBits); }

bool is_poison(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits == kPoisonBits;
}

}  // namespace kreg
