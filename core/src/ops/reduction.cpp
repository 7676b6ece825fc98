#include "ops/reduction.hpp"

#include "verify/tolerance.hpp"
#include "verify/verify_gemm.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace kreg {
namespace {

std::string describe_error(float got, double want, double abs_sum, double error, double tolerance) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "the sum is %.9g but the exact sum is %.17g: error %.3g, %.2e of sum |x_i| = %.9g > tolerance %.2e "
                  "(an element dropped or counted twice moves the sum by its value)",
                  double(got), want, std::abs(double(got) - want), error, abs_sum, tolerance);
    return text;
}

}  // namespace

int64_t reduction_depth(int64_t n) {
    const int64_t count = n < 1 ? 1 : n;
    return 256 + (count + 65535) / 65536;
}

double reduction_tolerance(int64_t n) {
    const double du = double(reduction_depth(n)) * kUnitRoundoffFp32;
    return du / (1 - du);  // gamma_D; D u < 1 for every n below 2^40
}

float reduction_sentinel(int64_t n) {
    const double wanted = 4.0 * double(n < 1 ? 1 : n) * reduction_tolerance(n);
    return float(std::max(1.0, std::exp2(std::ceil(std::log2(wanted)))));
}

std::vector<size_t> reduction_sentinel_positions(int64_t n, uint64_t seed) {
    if (n < 1) return {};
    const size_t last = size_t(n) - 1;
    std::vector<size_t> at{0};
    if (last > 0) at.push_back(last);
    if (last > 1) {
        const uint64_t state = (seed ^ 0x2545f4914f6cdd1dull) * 6364136223846793005ull + 1442695040888963407ull;
        at.push_back(1 + size_t((state >> 17) % (last - 1)));  // strictly inside
    }
    return at;
}

double reference_sum(const float* x, int64_t n, double& abs_sum) {
    double sum = 0;
    abs_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
        sum += double(x[i]);
        abs_sum += std::abs(double(x[i]));
    }
    return sum;
}

std::string ReductionOperation::invalid_shape(const Shape& s) const {
    // The table's shapes of a reduction carry n alone (m, k and block 0).
    if (s.n < 1 || s.m != 0 || s.k != 0 || s.block != 0)
        return "invalid reduction shape " + to_string(s) + ": n must be >= 1, and there is no m, k or block";
    return "";
}

double ReductionOperation::default_tolerance(const Shape& s, DType) const { return reduction_tolerance(s.n); }

void ReductionOperation::plant_special_values(std::vector<float>& a, uint64_t seed) const {
    const int64_t n = int64_t(a.size());
    const float sign = ((seed >> 7) & 1) != 0 ? -1.0f : 1.0f;  // one sign for all three: none cancels another
    for (size_t at : reduction_sentinel_positions(n, seed)) a[at] = sign * reduction_sentinel(n);
}

double ReductionOperation::expected(const float* a, const float*, const Shape& s, size_t, double& magnitude) const {
    return reference_sum(a, s.n, magnitude);
}

VerifyResult ReductionOperation::verify(const float* a, const float*, const float* c, const Shape& s, double tolerance,
                                        uint64_t) const {
    VerifyResult r;
    const float got = c[0];
    // NaN and Inf never pass, whatever the tolerance: the inputs are finite. The poison is named as such.
    if (!std::isfinite(got)) {
        r.max_rel_err = std::numeric_limits<double>::infinity();
        r.reason = describe_non_finite(got, 0, 0);
        return r;
    }
    double abs_sum = 0;
    const double want = reference_sum(a, s.n, abs_sum);
    const double error = std::abs(double(got) - want) / std::max(abs_sum, 1e-300);
    r.max_rel_err = error;
    r.passed = error <= tolerance;
    if (!r.passed) r.reason = describe_error(got, want, abs_sum, error, tolerance);
    return r;
}

}  // namespace kreg
