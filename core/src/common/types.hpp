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

// What a kernel computes (abi.h's kreg_operation). Each has its folder in core/src/ops.
enum class Operation {
    gemm = KREG_OPERATION_GEMM,
    transpose = KREG_OPERATION_TRANSPOSE,
    block_transpose = KREG_OPERATION_BLOCK_TRANSPOSE
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

// A problem size. GEMM: M x N x K. Transposes have no K (k is 0): A is M x N; block_transpose also has
// its tile edge in block (0 for every other operation).
struct Shape {
    int64_t m = 1, n = 1, k = 1;
    int64_t block = 0;
    friend bool operator==(const Shape& a, const Shape& b) {
        return a.m == b.m && a.n == b.n && a.k == b.k && a.block == b.block;
    }
    friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
    double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};
std::string to_string(const Shape& s);  // "MxNxK"; transposes "MxN", block transposes "MxN/bB"

}  // namespace kreg
