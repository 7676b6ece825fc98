// A worker's answer to a run, as the parent reads it. On the wire (docs/ARCHITECTURE.md, "worker protocol")
// it is {"op":"result","claim":{...}}: the worker's row less what only the parent may say (plugin_path,
// exit_code, signal: worker/session.hpp's result_claim_keys, wire_reply), a claim about the job the parent asked
// for, not a report row. ResultClaim holds only what a worker may say; parse_result_message reads it strictly
// (every key known, every value of its type, bounded sizes), and the parent makes the row from the claim and its
// own job (claim_to_row): the row's identity, plugin path and end are the parent's.
#pragma once

#include "common/job.hpp"
#include "common/record_extras.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

struct ResultClaim {
    uint64_t job_id = 0, seed = 0;
    std::string kernel, plugin;  // plugin: the name from its descriptor ("" if it never loaded)
    Backend backend = Backend::cpu;
    DType dtype = DType::fp32;
    Operation operation = Operation::gemm;
    Shape shape;
    RowStatus status = RowStatus::ok;
    std::string reason, timer;
    std::vector<double> samples_ms;
    RecordExtras extra;
    std::optional<double> max_rel_err, tolerance, gflops, gbps;
    std::optional<TimingStats> stats;
    EndCause end_cause = EndCause::none;
};

// The most samples, and the largest evidence bag (its JSON's bytes), a claim may carry.
inline constexpr size_t kMaxClaimSamples = 100000;
inline constexpr size_t kMaxClaimExtraBytes = 64 * 1024;

// Reads a worker's {"op":"result","claim":{...}}. "" and the claim, or the violation: "sent a claim with the
// unknown field 'plugin_path'", "sent a malformed claim: /m: expected an integer, found \"512\"", ...
std::string parse_result_message(const nlohmann::json& message, ResultClaim& claim);

// The row of job made from a claim about it: "" and the row, or why the claim is refused (it answers for
// another job, or claims an end cause only the runner observes). The claim's texts are made printable and
// bounded (reason: max_text bytes). rlimit_caps_memory: the worker's memory is capped by RLIMIT_DATA alone
// (no cgroup), where its allocator's sight of a refusal (memory_refused) is the only trace of the cap;
// elsewhere that claim reads as a failure.
std::string claim_to_row(const ResultClaim& claim, const Job& job, bool rlimit_caps_memory, size_t max_text,
                         Record& row);

}  // namespace kreg
