// The fp64 reference every kernel is checked against.
//
// Inputs are fp32, products and sums are fp64: with |a|, |b| < 1 and K up to millions, the reference's
// own rounding (~K * 2^-53 relative) is many orders below the fp32 tolerances it is used to judge.
// Row-major with leading dimensions, like kreg_gemm_args. Cache-blocked (panels of B converted to
// fp64 once per block) and multi-threaded over rows with std::thread, so 1024^3 takes seconds.
#pragma once

#include <cstdint>

namespace kreg {

// c[i*ldc + j] = sum_k a[i*lda + k] * b[k*ldb + j] for i < m, j < n, accumulated in fp64.
// If magnitude is not null, also magnitude[i*ldc + j] = sum_k |a_ik| * |b_kj| (same layout as c): the
// scale of the fp32 rounding error of that element, which verify_gemm normalises by.
void reference_gemm_fp64(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                         double* c, int64_t ldc, double* magnitude = nullptr);

// The same for a subset of the rows of C: row r of c (and of magnitude) is row rows[r] of A*B, for
// r < row_count. Used by the sampled check of shapes too large for a full reference.
void reference_gemm_rows_fp64(const int64_t* rows, int64_t row_count, int64_t n, int64_t k, const float* a, int64_t lda,
                              const float* b, int64_t ldb, double* c, int64_t ldc, double* magnitude = nullptr);

}  // namespace kreg
