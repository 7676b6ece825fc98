#include "grade/verdict.hpp"

#include "grade/outcome.hpp"

#include <sstream>

namespace kreg {

nlohmann::json row_evidence(const Record& r, uint64_t public_seed) {
    nlohmann::json e = {{"kernel", r.kernel},       {"m", r.shape.m},         {"n", r.shape.n},
                        {"k", r.shape.k},           {"seed", public_seed},    {"status", to_string(r.status)},
                        {"outcome", classify_outcome(r)}, {"reason", r.reason}};
    if (r.max_rel_err) e["max_rel_err"] = *r.max_rel_err;
    if (r.tolerance) e["tolerance"] = *r.tolerance;
    if (r.stats) e["median_ms"] = r.stats->median_ms;
    if (r.signal) e["signal"] = *r.signal;
    if (r.exit_code) e["exit_code"] = *r.exit_code;
    for (const char* key : {"anticheat", "trusted_check", "timing_claims", "roofline"})
        if (r.extra.contains(key)) e[key] = r.extra[key];
    return e;
}

CheckResult judge_performance(const PerformanceTier& tier, const Record& mine, uint64_t mine_seed, const Record& ref,
                              uint64_t ref_seed) {
    CheckResult check{"performance", tier.name, 0, tier.points, false, "", nlohmann::json::object()};
    check.evidence = {{"submission", row_evidence(mine, mine_seed)}, {"reference", row_evidence(ref, ref_seed)}};
    const bool suspicious = mine.extra.contains("roofline") && mine.extra["roofline"].value("faster_than_floor", false);
    if (mine.status != RowStatus::ok || !mine.stats) {
        check.summary = "submission " + classify_outcome(mine) + ": " + mine.reason;
    } else if (ref.status != RowStatus::ok || !ref.stats) {
        check.summary = "reference " + tier.reference + " could not be measured: " + ref.reason;
    } else if (suspicious) {
        const bool cpu_ceiling = mine.extra["roofline"].value("ceiling", "") == "host_fp32";
        check.summary = cpu_ceiling ? "faster than the host's measured fp32 peak allows: flagged, no points"
                                    : "faster than the roofline floor allows: flagged, no points";
        check.evidence["flag"] = "faster_than_floor";
    } else {
        const double ratio = ref.stats->median_ms / mine.stats->median_ms;
        check.evidence["ratio"] = ratio;
        check.passed = ratio >= tier.min_ratio;
        check.points = check.passed ? tier.points : 0;
        std::ostringstream s;
        s.precision(3);
        s << "ratio " << ratio << " to " << tier.reference << " (needs " << tier.min_ratio << "): " << mine.stats->median_ms
          << " ms vs " << ref.stats->median_ms << " ms";
        check.summary = s.str();
    }
    return check;
}

}  // namespace kreg
