// The verification tolerance per dtype and K: a bound on the normalised error max |c - ref| / sum_k |a_ik||b_kj|
// (verify_gemm.hpp) that a correct kernel cannot exceed. The derivation is in docs/TOLERANCES.md; in short,
// for the reduced-precision dtypes
//
//     tol(dtype, K) = e_in + 2 K u_acc (1 + e_in),   u_acc = 2^-23
//
// where 2 K u_acc bounds fp32 accumulation of K exact products in any order and any blocking, with each
// rounding a truncation (tensor cores align and normalise by truncating, so a rounding costs up to one
// ulp, 2^-23, not half of one), and e_in is the error of the inputs the kernel sees against those the fp64
// reference sees:
//   bf16, fp16  e_in = 0: the harness rounds A and B to the dtype before the reference is computed, and a
//               product of two 8-bit (bf16) or 11-bit (fp16) significands is exact in fp32;
//   tf32        e_in = 2 * 2^-10 + 2^-20: A and B are fp32 and the kernel rounds them to 11 significant
//               bits; truncation (what the tensor core does to an fp32 register it is handed) is off by
//               at most 2^-10 relative, cvt.rna by 2^-11, and a product of two rounded inputs by
//               (1 + 2^-10)^2 - 1.
// fp32 keeps its fixed 1e-5 (about 168 u_fp32): the SIMT kernels round to nearest, whose errors do not add
// up in one direction, and no correct fp32 kernel of the lab has come near it up to K = 8192.
#pragma once

#include "common/types.hpp"

#include <cstdint>

namespace kreg {

inline constexpr double kUnitRoundoffFp32 = 0x1p-24;  // round to nearest
inline constexpr double kUnitRoundoffTf32 = 0x1p-11;
inline constexpr double kUnitRoundoffBf16 = 0x1p-8;
inline constexpr double kUnitRoundoffFp16 = 0x1p-11;
inline constexpr double kTensorCoreAccumulationUnit = 0x1p-23;  // one fp32 ulp: a truncation's worst case
inline constexpr double kFp32Tolerance = 1e-5;

// Input term e_in of the bound above: how far the products the kernel sums may be from the reference's.
inline double input_rounding_bound(DType dtype) {
    if (dtype != DType::tf32) return 0.0;
    const double truncation = 2 * kUnitRoundoffTf32;  // 2^-10: truncating to tf32, the worse of the two roundings
    return 2 * truncation + truncation * truncation;
}

// The tolerance the runner uses for dtype at inner dimension k (k >= 1; smaller k is treated as 1).
inline double default_tolerance(DType dtype, int64_t k) {
    if (dtype == DType::fp32) return kFp32Tolerance;
    const double e_in = input_rounding_bound(dtype);
    const double kk = static_cast<double>(k < 1 ? 1 : k);
    return e_in + 2 * kk * kTensorCoreAccumulationUnit * (1 + e_in);
}

}  // namespace kreg
