// fp32 -> bf16 / fp16 on the host, round-to-nearest-even (the CUDA headers' host conversions), for
// uploading 16-bit operands. The fp32 array is overwritten with the rounded values, so the reference
// sees exactly what the kernel sees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kreg {

// Returns the 16-bit bit patterns of values rounded to bf16 and stores the rounded values back.
std::vector<uint16_t> round_to_bf16(float* values, size_t count);
// The same for IEEE fp16.
std::vector<uint16_t> round_to_fp16(float* values, size_t count);

}  // namespace kreg
