// `runner tune`: a dispatch table (docs/DISPATCH.md, configs/schema/dispatch-table.schema.json) from verified
// reports. Per (device, dtype), every measured shape's winner is the kernel with the lowest median among its
// verified rows; the table then covers all shapes, measured or not, with the log2 grid model:
//
//   - per dimension, the distinct measured values v_0 < v_1 < ... split the axis at the geometric midpoints
//     floor(sqrt(v_i * v_i+1)): v_i owns [floor(sqrt(v_i-1 * v_i)) + 1, floor(sqrt(v_i * v_i+1))], the first
//     from 1 and the last without an upper bound;
//   - each box of the grid (one interval per dimension) takes the winner of the measured shape nearest to its
//     grid point (v_i, v_j, v_l) in log2 space (squared distance of log2 m, log2 n, log2 k; a tie goes to the
//     shape first in (m, n, k) order), which is the rule's source; boxes next to each other along k with one
//     source merge into one rule.
//
// So a shape between two measured ones goes where the nearer of them (by ratio, not by difference) went, the
// vector-like m = 1 class stays its own where it was measured, and shapes past the largest measured one
// belong to its class. The fallback of each entry is the kernel that won the most measured shapes.
#pragma once

#include "tune/tune_report.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kreg::tune {

struct TuneRequest {
    std::vector<TuneReport> reports;
    std::string kreg_version;
    std::string command;  // the command line that made the table, for made_by
    // Names or globs of the kernels a table may route to (those a dispatch plugin contains); empty: every kernel.
    // The reference (cuBLAS) is measured to give each rule its ratio, but a lab dispatcher cannot call it.
    std::vector<std::string> kernel_patterns;
};

// The table as JSON. Throws TuneError for reports that cannot be combined: one kernel measured from
// different plugin builds (sha256) in two reports, naming both files.
nlohmann::json build_dispatch_table(const TuneRequest& request);

}  // namespace kreg::tune
