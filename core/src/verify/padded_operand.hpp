// A host input (A or B) with NaN padding on both sides, so that a kernel that reads outside it gets a
// NaN whose payload names what it read (random_fill.hpp's patterns), instead of whatever the heap holds
// next: the result is wrong in a way the verifier can explain ("computed from a value read past the end
// of B") rather than merely wrong, or right by luck.
//
//   [ padding: before_bits ][ data: count floats ][ padding: after_bits ]
//
// The whole of it lies in a mapping of its own with inaccessible regions on both sides
// (measure/guard_pages.hpp's GuardedFloats, far_guard_bytes long): a write past the padding faults.
// The padding is written once, at construction. data() keeps the alignment of the allocation (up to 256
// bytes on the device, for 16-bit elements too) as long as the padding is a multiple of 128 elements
// (operand_padding_floats is).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "measure/guard_pages.hpp"

namespace kreg {

class PaddedOperand {
public:
    PaddedOperand() = default;
    // Throws std::bad_alloc when the memory cannot be had. name: the mapping's name in a fault's line
    // ("A's padding"; a string literal).
    PaddedOperand(size_t count, size_t padding, uint32_t before_bits, uint32_t after_bits,
                  const char* name = "an input's padding");

    float* data() { return storage_->data() + padding_; }
    const float* data() const { return storage_->data() + padding_; }
    const GuardedFloats& storage() const { return *storage_; }
    size_t size() const { return count_; }
    size_t padding() const { return padding_; }

private:
    std::optional<GuardedFloats> storage_;
    size_t padding_ = 0, count_ = 0;
};

// The padding on each side of a row-major input with cols columns: at least 256 rows of it (a tile
// that overruns the last row stays inside the padding), at least 1024, a multiple of 128. The CUDA runner
// pads its device inputs by as many elements.
size_t operand_padding_floats(int64_t cols);

}  // namespace kreg
