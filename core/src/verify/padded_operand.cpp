#include "verify/padded_operand.hpp"

#include "verify/random_fill.hpp"

#include <algorithm>

namespace kreg {

PaddedOperand::PaddedOperand(size_t count, size_t padding, uint32_t before_bits, uint32_t after_bits)
    : storage_(count + 2 * padding), padding_(padding), count_(count) {
    fill_bits(storage_.data(), padding, before_bits);
    fill_bits(storage_.data() + padding + count, padding, after_bits);
}

size_t operand_padding_floats(int64_t cols) {
    const size_t rows = 256 * size_t(std::max<int64_t>(cols, 1));
    return (std::max<size_t>(rows, 1024) + 127) / 128 * 128;
}

}  // namespace kreg
