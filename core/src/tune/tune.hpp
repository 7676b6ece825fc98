// `runner tune`: a dispatch table (docs/DISPATCH.md, configs/schema/dispatch-table.schema.json) from verified
// reports. Per (device, dtype), every measured shape's winner is the kernel with the lowest median among its
// verified rows; the table then covers all shapes, measured or not, with the log2 grid model:
//
//   - per dimension, the distinct measured values v_0 < v_1 < ... split the axis at the geometric midpoints
//     floor(sqrt(v_i * v_i+1)): v_i owns [floor(sqrt(v_i-1 * v_i)) + 1, floor(sqrt(v_i * v_i+1))], the first
//     from 1 and the last without an upper bound;
//   - each box of the grid (one interval per dimension) is routed from its grid point (v_i, v_j, v_l): a
//     measured point keeps its winner; any other takes the kernel least behind the fastest, in the weighted
//     mean of log(time / fastest time), over the 4 measured shapes nearest in log2 space (squared distance of
//     log2 m, log2 n, log2 k; weight 1 / (distance + 1/4); ties first in (m, n, k) order, then by name). The
//     nearest shape is the rule's source; boxes next to each other along k with one kernel and one source
//     merge into one rule.
//
// So a shape between measured ones goes where the measurements around it (by ratio, not by difference) say,
// the vector-like m = 1 class stays its own where it was measured, and shapes past the largest measured one
// belong to its class. The fallback of each entry is the kernel that won the most measured shapes. Each entry
// also says how the model generalises: every measured shape routed by a table built without it.
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

// "; leave-one-out: 0.984 of the fastest (geometric mean), 42 of 46 shapes within 5 %" for one entry of a
// table, or "" when it has none.
std::string leave_one_out_text(const nlohmann::json& entry);

}  // namespace kreg::tune
