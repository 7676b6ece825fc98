// What a graded row earns: the evidence a student's report cites for a row, and the verdict on a
// performance tier from the submission's and the reference's rows of the same run. Pure functions of
// records, so every rule (the roofline flag, the ratio, who failed) is testable without running a kernel.
#pragma once

#include "common/job.hpp"
#include "grade/gradebook.hpp"
#include "grade/rubric.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace kreg {

// {"kernel", "m", "n", "k", "seed", "status", "outcome", "reason"} plus, where the row has them,
// max_rel_err, tolerance, median_ms, signal, exit_code and the anticheat, trusted_check, timing_claims and roofline
// evidence. seed is the published one (the secret mix is not revealed).
nlohmann::json row_evidence(const Record& r, uint64_t public_seed);

// The performance check of one tier. In order:
//   - the submission's row did not end ok: no points, the summary says how it ended;
//   - the reference could not be measured: no points (the submission is not to blame, the summary says so);
//   - the submission is faster than the roofline floor allows (extra["roofline"]["faster_than_floor"],
//     from annotate_roofline on CUDA rows or annotate_cpu_roofline on CPU rows, whose summary names the
//     host's fp32 peak): flagged (evidence "flag": "faster_than_floor"), no points, whatever its ratio;
//   - otherwise ratio = reference median / submission median, and the tier's points when
//     ratio >= tier.min_ratio.
// evidence: {"submission": row_evidence(mine), "reference": row_evidence(ref), "ratio"?, "flag"?}.
CheckResult judge_performance(const PerformanceTier& tier, const Record& mine, uint64_t mine_seed, const Record& ref,
                              uint64_t ref_seed);

}  // namespace kreg
