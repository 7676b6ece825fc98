#include "grade/verdict.hpp"

#include "common/operation_table.hpp"
#include "grade/outcome.hpp"
#include "grade/paired_ratio.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kreg {

constexpr double kTierConfidence = 0.95;

const Record* first_not_ok(const std::vector<Record>& rows) {
    for (const Record& r : rows)
        if (r.status != RowStatus::ok || !r.stats) return &r;
    return nullptr;
}

nlohmann::json row_evidence(const Record& r, uint64_t public_seed) {
    nlohmann::json e = {{"kernel", r.kernel},
                        {"m", r.shape.m},
                        {"n", r.shape.n},
                        {"k", r.shape.k},
                        {"seed", public_seed},
                        {"status", to_string(r.status)},
                        {"outcome", classify_outcome(r)},
                        {"reason", r.reason}};
    if (r.operation != Operation::gemm) e["operation"] = std::string(to_string(r.operation));
    if (const ShapeKeyDef* param = operation_row(r.operation).param()) e[param->name] = dim_value(r.shape, param->dim);
    if (r.max_rel_err) e["max_rel_err"] = *r.max_rel_err;
    if (r.tolerance) e["tolerance"] = *r.tolerance;
    if (r.stats) e["median_ms"] = r.stats->median_ms;
    if (r.signal) e["signal"] = *r.signal;
    if (r.exit_code) e["exit_code"] = *r.exit_code;
    if (r.extra.anticheat) e["anticheat"] = *r.extra.anticheat;
    if (r.extra.trusted_check) e["trusted_check"] = *r.extra.trusted_check;
    if (r.extra.timing_claims) e["timing_claims"] = *r.extra.timing_claims;
    if (r.extra.roofline) e["roofline"] = *r.extra.roofline;
    return e;
}

namespace {

bool faster_than_floor(const Record& r) {
    return r.extra.roofline && r.extra.roofline->faster_than_floor.value_or(false);
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string format3(double v) {
    std::ostringstream s;
    s.precision(3);
    s << v;
    return s.str();
}

}  // namespace

CheckResult judge_performance(const PerformanceTier& tier, const PairedRounds& rounds, uint64_t mine_seed,
                              uint64_t ref_seed) {
    CheckResult check{"performance", tier.name, 0, tier.points, false, "", nlohmann::json::object()};
    if (rounds.submission.empty()) {
        check.summary = "not measured";
        return check;
    }
    check.evidence["submission"] = row_evidence(rounds.submission.back(), mine_seed);
    if (!rounds.reference.empty()) check.evidence["reference"] = row_evidence(rounds.reference.back(), ref_seed);
    const Record* flagged = nullptr;
    for (const Record& r : rounds.submission)
        if (!flagged && faster_than_floor(r)) flagged = &r;

    if (const Record* bad = first_not_ok(rounds.submission)) {
        check.evidence["submission"] = row_evidence(*bad, mine_seed);
        check.summary = "submission " + classify_outcome(*bad) + ": " + bad->reason;
    } else if (const Record* bad_ref = first_not_ok(rounds.reference)) {
        check.evidence["reference"] = row_evidence(*bad_ref, ref_seed);
        check.summary = "reference " + tier.reference + " could not be measured: " + bad_ref->reason;
    } else if (rounds.reference.size() != rounds.submission.size()) {
        check.summary = "reference " + tier.reference +
                        " could not be measured: " + std::to_string(rounds.reference.size()) +
                        " reference rounds for " + std::to_string(rounds.submission.size()) + " submission rounds";
    } else if (flagged) {
        check.evidence["submission"] = row_evidence(*flagged, mine_seed);
        const bool cpu_ceiling = flagged->extra.roofline->ceiling.value_or("") == "host_fp32";
        check.summary = cpu_ceiling ? "faster than the host's measured fp32 peak allows: flagged, no points"
                                    : "faster than the roofline floor allows: flagged, no points";
        check.evidence["flag"] = "faster_than_floor";
    } else {
        std::vector<double> ref_ms, mine_ms;
        nlohmann::json pairs = nlohmann::json::array();
        for (size_t i = 0; i < rounds.submission.size(); ++i) {
            ref_ms.push_back(rounds.reference[i].stats->median_ms);
            mine_ms.push_back(rounds.submission[i].stats->median_ms);
            pairs.push_back({{"submission_ms", mine_ms.back()},
                             {"reference_ms", ref_ms.back()},
                             {"ratio", ref_ms.back() / mine_ms.back()}});
            // Each round's own bound: the submission's time above is the bound where the claim was not believed.
            if (rounds.submission[i].extra.timing_claims)
                pairs.back()["timing_claims"] = *rounds.submission[i].extra.timing_claims;
        }
        const RatioInterval interval = paired_ratio(ref_ms, mine_ms, kTierConfidence);
        const TierDecision decision = decide_tier(interval, tier.min_ratio);
        check.passed = decision == TierDecision::above ||
                       (decision == TierDecision::undecided && interval.ratio >= tier.min_ratio);
        check.points = check.passed ? tier.points : 0;
        check.evidence["ratio"] = interval.ratio;
        check.evidence["ratio_interval"] = {
            {"low", interval.low}, {"high", interval.high}, {"confidence", kTierConfidence}};
        check.evidence["rounds"] = pairs;
        const char* how = decision == TierDecision::above ? "interval above the threshold"
                          : decision == TierDecision::below
                              ? "interval below the threshold"
                              : "interval straddles the threshold at the round limit: the point estimate decides";
        check.evidence["decision"] = how;
        check.summary = "ratio " + format3(interval.ratio) + " [" + format3(interval.low) + ", " +
                        format3(interval.high) + "] to " + tier.reference + " (needs " + format3(tier.min_ratio) +
                        "), " + std::to_string(interval.rounds) + (interval.rounds == 1 ? " round: " : " rounds: ") +
                        format3(median_of(mine_ms)) + " ms vs " + format3(median_of(ref_ms)) + " ms" +
                        (decision == TierDecision::undecided ? "; undecided at the limit" : "");
    }
    return check;
}

namespace {
// Why a round has no fraction of the copy ceiling ("" when it has one).
std::string why_no_copy_fraction(const Record& r) {
    if (r.extra.roofline && r.extra.roofline->fraction_of_copy_bandwidth) return "";
    if (r.backend == Backend::cpu)
        return "the graded kernel ran on the CPU; the copy ceiling is the GPU's measured device-to-device copy "
               "bandwidth "
               "(meta.gpu.ceilings.dram_copy_gbps)";
    if (r.extra.roofline && r.extra.roofline->unavailable) return *r.extra.roofline->unavailable;
    return "the row has no roofline evidence";
}
}  // namespace

CheckResult judge_copy_fraction(const PerformanceTier& tier, const std::vector<Record>& rounds, uint64_t mine_seed) {
    CheckResult check{"performance", tier.name, 0, tier.points, false, "", nlohmann::json::object()};
    if (rounds.empty()) {
        check.summary = "not measured";
        return check;
    }
    check.evidence["submission"] = row_evidence(rounds.back(), mine_seed);
    const double needed = tier.min_fraction_of_copy.value_or(1.0);
    const Record* flagged = nullptr;
    const Record* unjudged = nullptr;
    for (const Record& r : rounds) {
        if (!flagged && faster_than_floor(r)) flagged = &r;
        if (!unjudged && !why_no_copy_fraction(r).empty()) unjudged = &r;
    }
    if (const Record* bad = first_not_ok(rounds)) {
        check.evidence["submission"] = row_evidence(*bad, mine_seed);
        check.summary = "submission " + classify_outcome(*bad) + ": " + bad->reason;
    } else if (flagged) {
        check.evidence["submission"] = row_evidence(*flagged, mine_seed);
        check.summary = "faster than the measured device-to-device copy bandwidth allows: flagged, no points";
        check.evidence["flag"] = "faster_than_floor";
    } else if (unjudged) {
        // Without the ceiling there is nothing to compare with: the tier is not judged and earns nothing,
        // and it says so (a silent pass, or a silent zero, would misreport the student).
        const std::string why = why_no_copy_fraction(*unjudged);
        check.evidence["ceiling_unavailable"] = why;
        check.summary = "not judged, no points: the copy ceiling is unavailable: " + why;
    } else {
        std::vector<double> fractions, mine_ms;
        nlohmann::json per_round = nlohmann::json::array();
        for (const Record& r : rounds) {
            fractions.push_back(*r.extra.roofline->fraction_of_copy_bandwidth);
            mine_ms.push_back(r.stats->median_ms);
            per_round.push_back({{"submission_ms", r.stats->median_ms},
                                 {"gbps", r.extra.roofline->achieved_gbps.value_or(0.0)},
                                 {"fraction_of_copy", fractions.back()}});
        }
        const RatioInterval interval = ratio_interval(fractions, kTierConfidence);
        const TierDecision decision = decide_tier(interval, needed);
        check.passed =
            decision == TierDecision::above || (decision == TierDecision::undecided && interval.ratio >= needed);
        check.points = check.passed ? tier.points : 0;
        const double ceiling = rounds.back().extra.roofline->bandwidth_gbps.value_or(0.0);
        check.evidence["fraction_of_copy"] = interval.ratio;
        check.evidence["fraction_interval"] = {
            {"low", interval.low}, {"high", interval.high}, {"confidence", kTierConfidence}};
        check.evidence["ceiling_gbps"] = ceiling;
        check.evidence["rounds"] = per_round;
        const char* how = decision == TierDecision::above ? "interval above the threshold"
                          : decision == TierDecision::below
                              ? "interval below the threshold"
                              : "interval straddles the threshold at the round limit: the point estimate decides";
        check.evidence["decision"] = how;
        check.summary = "fraction of the copy bandwidth " + format3(interval.ratio) + " [" + format3(interval.low) +
                        ", " + format3(interval.high) + "] (needs " + format3(needed) + ") of the " +
                        std::to_string(std::llround(ceiling)) + " GB/s the grader measured, " +
                        std::to_string(interval.rounds) + (interval.rounds == 1 ? " round: " : " rounds: ") +
                        format3(median_of(mine_ms)) + " ms" +
                        (decision == TierDecision::undecided ? "; undecided at the limit" : "");
    }
    return check;
}

bool copy_tier_needs_more_rounds(const PerformanceTier& tier, const std::vector<Record>& rounds) {
    if (rounds.empty()) return true;
    if (first_not_ok(rounds)) return false;
    std::vector<double> fractions;
    for (const Record& r : rounds) {
        if (faster_than_floor(r) || !why_no_copy_fraction(r).empty()) return false;
        fractions.push_back(*r.extra.roofline->fraction_of_copy_bandwidth);
    }
    return decide_tier(ratio_interval(fractions, kTierConfidence), tier.min_fraction_of_copy.value_or(1.0)) ==
           TierDecision::undecided;
}

bool tier_needs_more_rounds(const PerformanceTier& tier, const PairedRounds& rounds) {
    if (rounds.submission.empty()) return true;
    if (first_not_ok(rounds.submission) || first_not_ok(rounds.reference)) return false;
    if (rounds.reference.size() != rounds.submission.size()) return false;
    for (const Record& r : rounds.submission)
        if (faster_than_floor(r)) return false;
    std::vector<double> ref_ms, mine_ms;
    for (size_t i = 0; i < rounds.submission.size(); ++i) {
        ref_ms.push_back(rounds.reference[i].stats->median_ms);
        mine_ms.push_back(rounds.submission[i].stats->median_ms);
    }
    return decide_tier(paired_ratio(ref_ms, mine_ms, kTierConfidence), tier.min_ratio) == TierDecision::undecided;
}

}  // namespace kreg
