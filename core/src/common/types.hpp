// Vocabulary shared by every part of the runner: element types, backends, shapes and row statuses.
#pragma once

#include <kreg/abi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

enum class DType { fp32 = KREG_DTYPE_FP32, tf32 = KREG_DTYPE_TF32, bf16 = KREG_DTYPE_BF16, fp16 = KREG_DTYPE_FP16 };
std::string_view to_string(DType d);
std::optional<DType> parse_dtype(std::string_view s);
const std::vector<DType>& all_dtypes();

// What a kernel computes (abi.h's kreg_operation): one value per row of common/operations.def, whose
// values (shape keys, work model, rate) common/operation_table.hpp gives; its OperationDef lives in core/src/ops.
enum class Operation {
#define KREG_OPERATION(ident, abi_value, ...) ident = abi_value,
#include "common/operations.def"
#undef KREG_OPERATION
};
std::string_view to_string(Operation o);
std::optional<Operation> parse_operation(std::string_view s);
const std::vector<Operation>& all_operations();

enum class Backend { cpu = KREG_BACKEND_CPU, cuda = KREG_BACKEND_CUDA };
std::string_view to_string(Backend b);
std::optional<Backend> parse_backend(std::string_view s);

// Every way a row can end. Each path that ends a job ends in exactly one of these.
enum class RowStatus {
    ok,            // verified (or verification off) and timed
    wrong_result,  // ran, but the output did not match the reference (NaN/Inf included)
    skipped,       // not run, for a stated reason (shape constraint, no device, dtype unsupported...)
    failed,        // the kernel returned an error status, or the harness could not run it
    crashed,       // the worker died (signal, exit, sticky CUDA error) while running it
    timeout        // the worker exceeded its time limit and was killed
};
std::string_view to_string(RowStatus s);
std::optional<RowStatus> parse_row_status(std::string_view s);
const std::vector<RowStatus>& all_row_statuses();

// Why a row ended, typed where it was seen and never read back from a message (docs/GRADING.md, "Outcomes").
// The worker may claim only kernel_failed (a kernel's status), cuda_error (a sticky CUDA error it hit) and
// memory_refused (its allocator saw RLIMIT_DATA refuse a request: worker/allocation_watch.hpp);
// every other cause is the parent's own observation: a signal or exit status from the reaper, a time limit
// the parent enforced, memory.events of the worker's cgroup (or its peak RSS), SIGSYS from seccomp, a
// reply out of protocol.
enum class EndCause {
    none,             // ran to its end (ok, wrong_result, skipped), or a refusal decided before running
    kernel_failed,    // worker's claim: the kernel or the pipeline returned a failure status
    cuda_error,       // worker's claim: a sticky CUDA error ended the context
    memory_refused,   // worker's claim: its allocator saw RLIMIT_DATA refuse a request (no cgroup caps memory)
    signal,           // parent: the worker was killed by a signal (not SIGSYS)
    exited,           // parent: the worker exited on its own
    call_timeout,     // parent: one call ran past the per-call limit (the watchdog's exit code)
    job_timeout,      // parent: the job ran past its time limit; worker killed
    load_timeout,     // parent: loading ran past its time limit; worker killed
    memory_cap,       // parent: the memory cap was reached (memory.events, or peak RSS at the limit)
    sandbox_refusal,  // parent: seccomp killed the worker (SIGSYS)
    protocol_breach,  // parent: the worker wrote out of protocol or its claims contradicted what was seen
    // parent: the runner could not start or confine a worker, or the worker ended before its hello. No plugin
    // code had run (a worker loads its plugin only after the hello), so the failure is the runner's, never the
    // plugin's: a grader records it as its own error, retried by the next run, not as the student's outcome.
    worker_not_started,
};
std::string_view to_string(EndCause c);
std::optional<EndCause> parse_end_cause(std::string_view s);
// kernel_failed, cuda_error and memory_refused: what a worker may say about its own end (none of them makes a
// row better than a kernel's failure).
bool worker_may_claim(EndCause c);

// A problem size: the members an operation's shape keys name (operations.def: GEMM m, n, k; transposes
// m and n; a per-call parameter such as a tile edge in block); the members it lacks are 0.
struct Shape {
    int64_t m = 1, n = 1, k = 1;
    int64_t block = 0;
    friend bool operator==(const Shape& a, const Shape& b) {
        return a.m == b.m && a.n == b.n && a.k == b.k && a.block == b.block;
    }
    friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
};
std::string to_string(const Shape& s);  // "MxNxK"; without k "MxN"; with a block "MxN/bB"; without m "N"

}  // namespace kreg
