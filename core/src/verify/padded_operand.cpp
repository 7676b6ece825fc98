#include "verify/padded_operand.hpp"

#include "verify/random_fill.hpp"

#include <algorithm>

namespace kreg {

PaddedOperand::PaddedOperand(size_t count, size_t padding, uint32_t before_bits, uint32_t after_bits, const char* name)
    : padding_(padding), count_(count) {
    // GuardedFloats ends the storage on a page boundary: rounding it to 64 floats keeps data() 256-byte
    // aligned (padding is a multiple of 128), the extra floats are padding after the data.
    const size_t floats = (count + 2 * padding + 63) / 64 * 64;
    storage_.emplace(floats, 0, far_guard_bytes(floats * sizeof(float), 0), name);
    fill_bits(storage_->data(), padding, before_bits);
    fill_bits(storage_->data() + padding + count, floats - padding - count, after_bits);
}

size_t operand_padding_floats(int64_t cols) {
    const size_t rows = 256 * size_t(std::max<int64_t>(cols, 1));
    return (std::max<size_t>(rows, 1024) + 127) / 128 * 128;
}

}  // namespace kreg
