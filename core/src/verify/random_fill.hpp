// Reproducible inputs and poisoned outputs for checked GEMM runs.
//
// fill_uniform is counter-based: element i of (seed, stream) is a pure function of those three numbers
// (splitmix64 of a mixed key), so any slice can be filled independently, by any thread, in any order,
// and a job's inputs are the same on every run and every machine. Values are uniform in [-1, 1):
// never zeros or constants, which would hide indexing bugs (a kernel that reads the wrong element of
// a constant matrix still gets the right answer).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kreg {

// data[i] = uniform in [-1, 1) drawn from (seed, stream, i), for i in [0, count). Multiples of 2^-23,
// so every value is exactly representable in fp32 (and in tf32/bf16/fp16 after the caller rounds).
void fill_uniform(float* data, size_t count, uint64_t seed, uint64_t stream);

// The bit pattern poison_nan writes: a quiet NaN with a payload a computation is unlikely to produce,
// so verification can tell "never written" from "computed a NaN".
inline constexpr uint32_t kPoisonBits = 0x7fc0dead;

// Overwrites data[0, count) with the poison NaN, so an element the kernel never writes fails
// verification instead of passing with a stale correct value.
void poison_nan(float* data, size_t count);

// True if value has exactly the poison bit pattern.
bool is_poison(float value);

}  // namespace kreg
