// Checks a GEMM output C (fp32, row-major, leading dimensions) against an fp64 reference.
//
// The error metric. For every element
//
//     e_ij = |c_ij - ref_ij| / max(sum_k |a_ik| * |b_kj|, tiny)
//
// and max_rel_err = max e_ij. Why this denominator: the rounding error of any fp32 summation order is
// bounded by (a small multiple of) u * sum_k |a_ik| |b_kj| with u = 2^-24, so e_ij is dimensionless and
// comparable across K and input scales. A correct fp32 kernel shows e ~ 1e-7; a bug does not hide in
// it: skipping a single k-term removes |a_ik b_kj| ~ 1/K of the denominator, i.e. e ~ 2e-4 at K = 4096,
// twenty times the fp32 tolerance, and a wrong index gives e ~ 1. A plain relative error |c - ref| /
// |ref| would instead blow up wherever the sum cancels to near zero, and an absolute one would have to
// grow with K.
//
// Finiteness comes first: every element of C must be finite. Any NaN or Inf fails, including an
// element that still holds the poison NaN the runner wrote before the call (never written, or read as
// C although beta = 0). NaN is tested explicitly with std::isfinite: every comparison with NaN is
// false, so a test written as "error > tolerance" would silently pass it. The first non-finite element
// is explained from its bits (describe_non_finite): A and B hold only finite values, while C's poison
// and the padding around A and B are NaNs with payloads of their own (random_fill.hpp), so a payload
// names the memory the NaN came from. Where arithmetic replaced the payload (GPUs do), the reason says
// that the bits cannot tell.
//
// Full reference up to m*n*k = 2^31 multiply-adds (seconds on two cores). Above that the check is
// sampled: every element is still tested for finiteness; a seeded random set of rows (always including
// the first and the last, where edge tiles live) is compared element by element against the fp64
// reference; and a Freivalds projection covers every other element: with a random vector x,
// C*x must equal A*(B*x), which costs O(mk + kn + mn) instead of O(mnk). Its residual, normalised by
// |A|*(|B|*|x|) (the same bound as above, summed over the row), is at most max_j e_ij when every e_ij
// is within tolerance, so the projection never fails a correct result; it catches any row whose error
// does not average out over the row (a wrong or missing row or tile, a single badly wrong element),
// while small errors spread over all rows (a skipped k-term) are caught by the sampled rows.
#pragma once

#include "common/types.hpp"

#include <cstdint>
#include <string>

namespace kreg {

struct VerifyResult {
    bool passed = false;
    double max_rel_err = 0;  // infinite when C holds a NaN or Inf; a lower bound on the true max when sampled
    std::string reason;      // empty when passed; e.g. describe_non_finite's text,
                             // "error 2.1e-03 at (5, 9): got 1.23 expected 1.25 > tolerance 1e-05"
    bool sampled = false;    // true when the sampled check (rows + Freivalds) was used instead of a full reference
};

// Knobs of the check; the defaults are what the runner uses. Tests lower the threshold to exercise the
// sampled path on small shapes.
struct VerifyOptions {
    double full_reference_max_work = double(1ULL << 31);  // m*n*k at or below this: full reference
    int64_t sample_rows = 32;  // rows compared in full by the sampled check (all rows if >= m; 0: none)
};

// Why an element of C at (i, j) is not finite, from its bits alone, claiming no more than they show:
//   exactly C's poison          "unwritten element at (i, j): still holds C's poison NaN (never written, ...)"
//   a harness payload           "NaN at (i, j) computed from the padding after B: a value was read past the
//                                end of B (the NaN carries its payload)"; likewise C's poison (read although
//                                beta = 0), the padding before B, before or after A, C's guard band
//   0x7fffffff                  the canonical NaN: the bits do not say where it came from (GPU arithmetic
//                                returns it for any NaN operand)
//   any other NaN               none of the harness's patterns and no input NaN: an invalid operation,
//                                memory the harness did not fill, or a payload the hardware replaced
//   Inf                         "Inf at (i, j)" / "-Inf at (i, j)"
std::string describe_non_finite(float value, int64_t i, int64_t j);

// Tolerance on max_rel_err by input type: fp32 1e-5; tf32 2e-3 (10-bit mantissa); bf16 1e-2 (7-bit);
// fp16 2e-3 (10-bit). The reduced-precision types round the inputs, so their bound is ~ their unit
// roundoff rather than fp32's.
double default_tolerance(DType dtype);

// C must be m x n with leading dimension ldc; A m x k (lda), B k x n (ldb). seed picks the sampled
// rows and the Freivalds vector (so a failure reproduces). passed is true only if every element is
// finite and the (full or sampled) error is within tolerance.
VerifyResult verify_gemm(const float* a, const float* b, const float* c, int64_t m, int64_t n, int64_t k, int64_t lda,
                         int64_t ldb, int64_t ldc, double tolerance, uint64_t seed, const VerifyOptions& options = {});

}  // namespace kreg
