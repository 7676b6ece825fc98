#include "cuda/host_convert.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

namespace kreg {

std::vector<uint16_t> round_to_bf16(float* values, size_t count) {
    std::vector<uint16_t> out(count);
    for (size_t i = 0; i < count; ++i) {
        const __nv_bfloat16 h = __float2bfloat16_rn(values[i]);
        std::memcpy(&out[i], &h, sizeof(uint16_t));
        values[i] = __bfloat162float(h);
    }
    return out;
}

std::vector<uint16_t> round_to_fp16(float* values, size_t count) {
    std::vector<uint16_t> out(count);
    for (size_t i = 0; i < count; ++i) {
        const __half h = __float2half_rn(values[i]);
        std::memcpy(&out[i], &h, sizeof(uint16_t));
        values[i] = __half2float(h);
    }
    return out;
}

}  // namespace kreg
