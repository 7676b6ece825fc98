#include "ops/transpose.hpp"

#include "verify/random_fill.hpp"
#include "verify/verify_gemm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace kreg {
namespace {

uint32_t bits_of(float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

std::string describe_mismatch(float got, float want, int64_t i, int64_t j) {
    char text[200];
    std::snprintf(
        text, sizeof text, "element (%lld, %lld) is %.9g (bits 0x%08x) but the exact result is %.9g (bits 0x%08x)",
        static_cast<long long>(i), static_cast<long long>(j), double(got), bits_of(got), double(want), bits_of(want));
    return text;
}

}  // namespace

std::string TransposeOperation::invalid_shape(const Shape& s) const {
    if (s.m < 1 || s.n < 1 || s.k != 0 || s.block != 0)
        return "invalid transpose shape " + to_string(s) + ": M and N must be >= 1, and there is no K or block";
    return "";
}

size_t TransposeOperation::source_of(const Shape& s, size_t index) const {
    // Output (j, i) of the N x M result holds A's (i, j).
    const size_t j = index / size_t(s.m), i = index % size_t(s.m);
    return i * size_t(s.n) + j;
}

double TransposeOperation::expected(const float* a, const float*, const Shape& s, size_t index,
                                    double& magnitude) const {
    magnitude = 1;
    return double(a[source_of(s, index)]);
}

VerifyResult TransposeOperation::verify(const float* a, const float*, const float* c, const Shape& s, double,
                                        uint64_t) const {
    // Bit for bit, every element: a transpose does no arithmetic, so any difference is a wrong element,
    // and a NaN (C's poison, a padding payload) is never equal to the finite inputs.
    VerifyResult r;
    const OperandGeometry g = geometry(s);
    size_t wrong = 0, first = 0;
    for (size_t x = 0; x < g.c_count; ++x)
        if (bits_of(c[x]) != bits_of(a[source_of(s, x)]) && wrong++ == 0) first = x;
    r.max_rel_err = wrong == 0 ? 0.0 : 1.0;
    r.passed = wrong == 0;
    if (!r.passed) {
        const int64_t cols = g.c_cols, i = int64_t(first) / cols, j = int64_t(first) % cols;
        const float got = c[first], want = a[source_of(s, first)];
        // The poison means never written; anything else is shown with both bit patterns (a quieted
        // signalling NaN or a lost payload differs only there).
        const std::string what = is_poison(got) ? "element (" + std::to_string(i) + ", " + std::to_string(j) +
                                                      ") was never written (it still holds the poison NaN)"
                                                : describe_mismatch(got, want, i, j);
        r.reason = what + " (" + std::to_string(wrong) + " of " + std::to_string(g.c_count) + " elements differ)";
        if (got != got) r.max_rel_err = std::numeric_limits<double>::infinity();
    }
    return r;
}

const std::vector<uint32_t>& transpose_special_bits() {
    static const std::vector<uint32_t> bits{
        0x7fc12345u,  // a quiet NaN with a payload
        0x7f812345u,  // a signalling NaN: any arithmetic (or a conversion) quiets it to 0x7fc12345
        0xffc0beefu,  // a negative quiet NaN with another payload
        0x7f800000u,  // +Inf
        0xff800000u,  // -Inf
        0x80000000u,  // -0 (equal to +0 as a value, not as bits)
        0x00000001u,  // the smallest subnormal (flushed to 0 by FTZ arithmetic)
    };
    return bits;
}

void TransposeOperation::plant_special_values(std::vector<float>& a, uint64_t seed) const {
    if (a.empty()) return;
    // Evenly spaced from a start drawn from the seed, so they move from job to job and are all present
    // once A has as many elements; on smaller matrices later values overwrite earlier ones, which is
    // fine: whatever A holds is what the output must hold.
    const std::vector<uint32_t>& special = transpose_special_bits();
    const uint64_t state = (seed ^ 0x5bd1e9955bd1e995ull) * 6364136223846793005ull + 1442695040888963407ull;
    const size_t start = size_t((state >> 17) % a.size());
    const size_t step = std::max<size_t>(1, a.size() / special.size());
    for (size_t i = 0; i < special.size(); ++i)
        std::memcpy(&a[(start + i * step) % a.size()], &special[i], sizeof(uint32_t));
}

std::string BlockTransposeOperation::invalid_shape(const Shape& s) const {
    if (s.m < 1 || s.n < 1 || s.k != 0 || s.block < 1)
        return "invalid block_transpose shape " + to_string(s) + ": M, N and block must be >= 1, and there is no K";
    if (s.m % s.block != 0 || s.n % s.block != 0)
        return "invalid block_transpose shape " + to_string(s) + ": M and N must be multiples of block";
    return "";
}

size_t BlockTransposeOperation::source_of(const Shape& s, size_t index) const {
    const size_t n = size_t(s.n), b = size_t(s.block);
    const size_t r = index / n, c = index % n;
    const size_t tile_r = r - r % b, tile_c = c - c % b;
    // (tile_r + i, tile_c + j) takes the old (tile_r + j, tile_c + i).
    return (tile_r + (c - tile_c)) * n + (tile_c + (r - tile_r));
}

void reference_transpose(const float* a, float* out, int64_t m, int64_t n) {
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) out[j * m + i] = a[i * n + j];
}

void reference_block_transpose(const float* a, float* out, int64_t m, int64_t n, int64_t block) {
    const Shape s{m, n, 0, block};
    static const BlockTransposeOperation op;
    for (size_t x = 0; x < size_t(m) * size_t(n); ++x) out[x] = a[op.source_of(s, x)];
}

}  // namespace kreg
