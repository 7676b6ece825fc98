#include "grade/paired_ratio.hpp"

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kreg {

double student_t_quantile(double confidence, int degrees) {
    if (degrees < 1) throw std::invalid_argument("student_t_quantile: degrees of freedom must be >= 1");
    // Upper quantiles t_{(1+c)/2, df} for df 1..30 (standard tables); beyond, the Cornish-Fisher
    // expansion around the normal quantile, accurate to ~1e-4 there.
    static const std::array<double, 30> t90{6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812,
                                            1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725,
                                            1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697};
    static const std::array<double, 30> t95{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                            2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                            2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    static const std::array<double, 30> t99{63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
                                            3.106,  3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845,
                                            2.831,  2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750};
    const std::array<double, 30>* table = nullptr;
    double z = 0;
    if (std::abs(confidence - 0.90) < 1e-9)
        table = &t90, z = 1.6448536;
    else if (std::abs(confidence - 0.95) < 1e-9)
        table = &t95, z = 1.9599640;
    else if (std::abs(confidence - 0.99) < 1e-9)
        table = &t99, z = 2.5758293;
    else
        throw std::invalid_argument("student_t_quantile: confidence must be 0.90, 0.95 or 0.99, got " +
                                    std::to_string(confidence));
    if (degrees <= 30) return (*table)[size_t(degrees - 1)];
    const double d = degrees, z3 = z * z * z, z5 = z3 * z * z;
    return z + (z3 + z) / (4 * d) + (5 * z5 + 16 * z3 + 3 * z) / (96 * d * d);
}

RatioInterval paired_ratio(const std::vector<double>& reference_ms, const std::vector<double>& submission_ms,
                           double confidence) {
    if (reference_ms.empty() || reference_ms.size() != submission_ms.size())
        throw std::invalid_argument("paired_ratio: needs as many reference as submission rounds, at least one");
    std::vector<double> ratios;
    for (size_t i = 0; i < reference_ms.size(); ++i) {
        if (!(reference_ms[i] > 0) || !(submission_ms[i] > 0) || !std::isfinite(reference_ms[i]) ||
            !std::isfinite(submission_ms[i]))
            throw std::invalid_argument("paired_ratio: round " + std::to_string(i) +
                                        " has a time that is not a positive finite number");
        ratios.push_back(reference_ms[i] / submission_ms[i]);
    }
    return ratio_interval(ratios, confidence);
}

RatioInterval ratio_interval(const std::vector<double>& ratios, double confidence) {
    if (ratios.empty()) throw std::invalid_argument("ratio_interval: needs at least one round");
    std::vector<double> logs;
    for (size_t i = 0; i < ratios.size(); ++i) {
        if (!(ratios[i] > 0) || !std::isfinite(ratios[i]))
            throw std::invalid_argument("ratio_interval: round " + std::to_string(i) +
                                        " has a ratio that is not a positive finite number");
        logs.push_back(std::log(ratios[i]));
    }
    const double n = double(logs.size());
    double mean = 0;
    for (double v : logs) mean += v;
    mean /= n;
    RatioInterval out;
    out.rounds = int(logs.size());
    out.ratio = out.low = out.high = std::exp(mean);
    if (logs.size() < 2) return out;
    double ss = 0;
    for (double v : logs) ss += (v - mean) * (v - mean);
    const double half = student_t_quantile(confidence, int(logs.size()) - 1) * std::sqrt(ss / (n - 1) / n);
    out.low = std::exp(mean - half);
    out.high = std::exp(mean + half);
    return out;
}

TierDecision decide_tier(const RatioInterval& interval, double min_ratio) {
    if (interval.rounds < 2) return TierDecision::undecided;
    if (interval.low >= min_ratio) return TierDecision::above;
    if (interval.high < min_ratio) return TierDecision::below;
    return TierDecision::undecided;
}

}  // namespace kreg
