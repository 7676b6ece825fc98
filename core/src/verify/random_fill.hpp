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

// The harness's NaN patterns. Each is a quiet NaN with its own payload (the 22 mantissa bits below the
// quiet bit), so that a NaN found in C can be traced to the memory it came from (verify_gemm.hpp,
// describe_nan): arithmetic on a NaN usually returns one input NaN's payload (x86 SSE/AVX and Arm
// do, FMA included), quieted and possibly with another sign, but not always (NVIDIA GPUs return the
// canonical NaN 0x7fffffff), so a payload proves an origin and a missing payload proves nothing.
//
// C before every call: an element that still holds exactly this was never written.
inline constexpr uint32_t kPoisonBits = 0x7fc0dead;
// The padding before and after A and before and after B (PaddedOperand): a read outside an input lands in it.
inline constexpr uint32_t kPadBeforeABits = 0x7fc0aa01;
inline constexpr uint32_t kPadAfterABits = 0x7fc0aa02;
inline constexpr uint32_t kPadBeforeBBits = 0x7fc0bb01;
inline constexpr uint32_t kPadAfterBBits = 0x7fc0bb02;

// Overwrites data[0, count) with the poison NaN, so an element the kernel never writes fails
// verification instead of passing with a stale correct value.
void poison_nan(float* data, size_t count);

// Overwrites data[0, count) with the float whose bits are bits.
void fill_bits(float* data, size_t count, uint32_t bits);

// True if value has exactly the poison bit pattern.
bool is_poison(float value);

}  // namespace kreg
