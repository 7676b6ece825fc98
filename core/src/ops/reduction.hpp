// reduction: out = x[0] + ... + x[n-1], n fp32 inputs (A, n x 1), one fp32 output (C, 1 x 1), any order. Checked
// against the exact sum (fp64) within a bound derived in docs/TOLERANCES.md ("Reduction"):
//
//     |out - sum| <= gamma_D * sum |x_i|,  gamma_D = D u / (1 - D u),  u = 2^-24,  D(n) = 256 + ceil(n / 2^16)
//
// D bounds the fp32 additions on any element's path to the result: a tree of depth ceil(log2 n), chains of
// at most 256 elements, and grid-stride chains of n / 65536 (a grid of >= 65536 threads, or 16384 threads
// of four-float vectors) all fit. The operands, the work model (4 n + 4 bytes) and the roofline bound (the
// device-to-device copy bandwidth) are the operation's row of common/operations.def; x is an n x 1 column
// there, so that the harness pads it by 256 rows of 1 float, not of n.
//
// Inputs: the harness's uniform draw in [-1, 1) (multiples of 2^-23), and three sentinels of one sign and
// magnitude S(n) = the power of two >= max(1, 4 n tol(n)) planted at x[0], x[n-1] and a seeded position
// inside: any one of them dropped or counted twice moves the sum by S, more than the tolerance allows at
// every n (a single ordinary element of |x| < 1 is below it once n tol(n) > 1, n > ~65,000).
#pragma once

#include "ops/operation.hpp"

namespace kreg {

class ReductionOperation final : public OperationDef {
public:
    Operation id() const override { return Operation::reduction; }
    std::string invalid_shape(const Shape& shape) const override;
    bool exact() const override { return false; }
    double default_tolerance(const Shape& shape, DType dtype) const override;
    VerifyResult verify(const float* a, const float* b, const float* c, const Shape& shape, double tolerance,
                        uint64_t seed) const override;
    double expected(const float* a, const float* b, const Shape& shape, size_t index, double& magnitude) const override;
    void plant_special_values(std::vector<float>& a, uint64_t seed) const override;
    bool plants_special_values() const override { return true; }
};

// D(n) of the bound above: the fp32 additions a correct kernel may put on any element's path.
int64_t reduction_depth(int64_t n);
// The bound gamma_D(n) on |out - sum| / sum |x_i| (the reduction's default tolerance).
double reduction_tolerance(int64_t n);
// The sentinels' magnitude S(n) (a power of two) and where they go for a job's seed (x[0], x[n-1] and one
// position inside; fewer when n < 3).
float reduction_sentinel(int64_t n);
std::vector<size_t> reduction_sentinel_positions(int64_t n, uint64_t seed);

// The exact sum of x (fp64: every partial sum of the harness's inputs is a multiple of 2^-23 below 2^30 in
// magnitude for n <= 2^29, so it is exact) and sum |x_i|.
double reference_sum(const float* x, int64_t n, double& abs_sum);

}  // namespace kreg
