// What a graded row earns: the evidence a student's report cites for a row, and the verdict on a
// performance tier from the submission's and the reference's rows of the same run. Pure functions of
// records, so every rule (the roofline flag, the ratio, who failed) is testable without running a kernel.
#pragma once

#include "common/job.hpp"
#include "grade/gradebook.hpp"
#include "grade/rubric.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace kreg {

// {"kernel", "m", "n", "k", "seed", "status", "outcome", "reason"} ("operation" on rows of other operations
// than gemm, and the per-call parameter of an operation with one, such as "block") plus, where the row has them,
// max_rel_err, tolerance, median_ms, signal, exit_code and the anticheat, trusted_check, timing_claims and roofline
// evidence. seed is the published one (the secret mix is not revealed).
nlohmann::json row_evidence(const Record& r, uint64_t public_seed);

// The first of a tier's rounds that is not ok or has no time, or null when every round was measured.
const Record* first_not_ok(const std::vector<Record>& rows);

// One tier's paired measurement: round i ran the submission, then the reference, on the same shape, in
// the same two worker lifetimes (grade/grader.cpp), so that load on the machine during a round slows both.
struct PairedRounds {
    std::vector<Record> submission, reference;  // round i of each; reference may be one shorter when the
                                                // submission's last round failed
    bool at_limit = false;  // no more rounds may be measured (the rubric's max_rounds, or the time limit)
};

// The performance check of one tier. In order:
//   - no round was measured: no points, "not measured";
//   - a submission round did not end ok: no points, the summary says how it ended;
//   - a reference round could not be measured: no points (the submission is not to blame, the summary says so);
//   - a submission round is faster than the roofline floor allows (extra.roofline->faster_than_floor,
//     from annotate_roofline on CUDA rows or annotate_cpu_roofline on CPU rows, whose summary names the
//     host's fp32 peak): flagged (evidence "flag": "faster_than_floor"), no points, whatever its ratio;
//   - otherwise the ratio (reference / submission) and its 95 % interval from the rounds (paired_ratio):
//     the tier's points when the whole interval is at or above tier.min_ratio, none when it is wholly
//     below; an interval that still straddles the threshold at the limit is decided by the point estimate,
//     and the evidence says so.
// evidence: {"submission": row_evidence(last round), "reference": row_evidence(last round), "ratio"?,
// "ratio_interval"? {"low","high","confidence"}, "rounds"? [{"submission_ms","reference_ms","ratio"}],
// "decision"?, "flag"?}.
CheckResult judge_performance(const PerformanceTier& tier, const PairedRounds& rounds, uint64_t mine_seed,
                              uint64_t ref_seed);

// Whether another round would change the verdict: every round so far measured and believed, and the
// interval straddles the threshold (or fewer than two rounds exist).
bool tier_needs_more_rounds(const PerformanceTier& tier, const PairedRounds& rounds);

// The performance check of a tier against the copy ceiling (tier.min_fraction_of_copy; transposes). Each
// submission round's fraction is its extra.roofline.fraction_of_copy_bandwidth: its bandwidth (bytes
// moved / median) over the device-to-device copy bandwidth the grader measured (annotate_roofline with
// meta.gpu.ceilings.dram_copy_gbps). In order:
//   - no round: no points, "not measured";
//   - a round did not end ok: no points, how it ended;
//   - a round faster than the copy ceiling allows (faster_than_floor: more than 1/0.9 of it): flagged, no points;
//   - a round without a fraction (no measured ceiling: no GPU, no measurement, a CPU kernel): NOT judged,
//     no points, the summary says so with the reason (evidence "ceiling_unavailable"); never a pass;
//   - otherwise the fractions' geometric mean and 95 % interval decide as a ratio tier's do.
// evidence: {"submission", "fraction_of_copy"?, "fraction_interval"?, "ceiling_gbps"?, "rounds"?
// [{"submission_ms", "gbps", "fraction_of_copy"}], "decision"?, "flag"?, "ceiling_unavailable"?}.
CheckResult judge_copy_fraction(const PerformanceTier& tier, const std::vector<Record>& submission_rounds,
                                uint64_t mine_seed);

// tier_needs_more_rounds for a tier against the copy ceiling.
bool copy_tier_needs_more_rounds(const PerformanceTier& tier, const std::vector<Record>& submission_rounds);

}  // namespace kreg
