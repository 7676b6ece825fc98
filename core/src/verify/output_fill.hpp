// What C holds before a call, chosen per call so that no kernel can lean on it (issue 20, item 3).
//
// A kernel that computes C += A*B and reads the harness's NaN as 0 was exact while C was always the same
// poison; on real memory it is wrong. So C's initial contents vary from call to call, from a source the
// kernel does not see before the call (the checker's per-call seed in grading, fresh entropy otherwise):
//   - NaN: every element the same quiet NaN, its sign and 22-bit payload drawn for the call (never one
//     of the harness's other patterns). An element still holding it was never written.
//   - finite: element i gets finite_fill_word(key, i), a keyed hash spread over fp32's exponents from
//     2^-8 to 2^40 (some as large as a result can be, some far larger) with random sign and mantissa:
//     a kernel that adds to C, or copies C into some elements, is wrong there. An element still holding
//     its fill and of magnitude >= 2^24 (no correct GEMM or transpose of the harness's inputs, |x| < 1
//     and K < 2^24, gives such a value) is counted as unwritten bit for bit; the smaller ones are judged
//     against the expected result like every other element (full verification, the sampled compare).
// Both are pure functions of (key, index), so the CPU scan, the device scan (pipeline/cuda_kernels.cu)
// and the checker outside the worker (ops/output_export.cpp) recompute the same words.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define KREG_HOST_DEVICE __host__ __device__
#else
#define KREG_HOST_DEVICE
#endif

namespace kreg {

struct OutputFill {
    bool finite = false;
    uint32_t nan_word = 0x7fc0dead;  // NaN fill: the word every element holds
    uint64_t key = 0;                // finite fill: the hash key
};

// splitmix64's finaliser: a bijective mix with full avalanche (also the input streams of verify/random_fill.cpp).
KREG_HOST_DEVICE inline uint64_t output_fill_mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

// Element `index` of a finite fill: sign and mantissa from the hash, biased exponent in [119, 167]
// (2^-8 .. 2^40).
KREG_HOST_DEVICE inline uint32_t finite_fill_word(uint64_t key, uint64_t index) {
    const uint64_t h = output_fill_mix(key ^ (index * 0x9e3779b97f4a7c15ULL));
    const uint32_t sign = uint32_t(h >> 63) << 31;
    const uint32_t exponent = 119u + uint32_t((h >> 32) % 49u);
    return sign | (exponent << 23) | uint32_t(h & 0x7fffffu);
}

// Magnitudes from 2^24 up: never a correct result, so holding the fill there means "never written".
KREG_HOST_DEVICE inline bool fill_word_is_implausible(uint32_t word) { return ((word >> 23) & 0xffu) >= 127u + 24u; }

// True when `word` at `index` is what the fill put there and proves the element unwritten.
KREG_HOST_DEVICE inline bool still_holds_fill(const OutputFill& fill, uint64_t index, uint32_t word) {
    if (!fill.finite) return word == fill.nan_word;
    const uint32_t filled = finite_fill_word(fill.key, index);
    return word == filled && fill_word_is_implausible(filled);
}

// The fill of one call, drawn from `seed` (one 64-bit draw the kernel could not know before the call).
// finite_share: the chance of a finite fill, out of 256 (128: half the calls).
OutputFill draw_output_fill(uint64_t seed, int finite_share = 128);

// The fill of call `call` of a job, from that call's seed: draw_output_fill, except that the second call
// (call 1) is finite whenever the first was not, so every run with more than one call meets a finite C
// on a checked call at least once (a kernel that treats NaN as 0 fails every finite call, and the call
// after the first is scanned and sampled in sweeps, verified in full in strict runs). The worker and the
// checker outside it (ops/output_export.cpp) both call this, with the same seeds.
OutputFill call_output_fill(uint64_t call, uint64_t seed, bool first_call_finite);

// The fill seed of call `call` of a job checked outside the worker: C is filled before the call's own seed
// is asked for (so that the fill lies outside the grader's window), hence from the seed issued for the
// call before it, or for the first call from the job's seed. Both sides know these; the kernel sees its C
// during the call anyway, so knowing the fill earlier tells it nothing more.
uint64_t checked_fill_seed(uint64_t call, uint64_t job_seed, uint64_t previous_call_seed);

// Writes the fill over c[0, count).
void write_output_fill(const OutputFill& fill, float* c, size_t count);

// "still holds the NaN C was filled with" or "still holds the value C was filled with", for messages.
const char* fill_description(const OutputFill& fill);

}  // namespace kreg
