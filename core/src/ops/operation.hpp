// What one operation is, to the runner: its operands, its reference, how its output is checked, and the
// work one call does. The measurement protocol (pipeline/pipeline.hpp) is written once against this
// interface. An operation's OperationDef is only part of adding one: the ABI, the config, the reports and
// the table name operations too, file by file in docs/ADDING_AN_OPERATION.md.
//
// Every operation is described with at most two inputs, A and B, and one output C, all fp32 host
// values as the reference sees them (row-major, packed). An in-place operation (block_transpose) gets
// one buffer: the harness copies A into C before every call (instead of poisoning C) and hands the
// kernel C; its check compares C with the reference computed from A.
#pragma once

#include "common/types.hpp"

#include <kreg/abi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

struct VerifyResult;

// Sizes of the operands of one call, in elements (fp32 for the reference; the backend stores the
// dtype's element). cols: the row length, for positions in messages and for input-change reports.
struct OperandGeometry {
    size_t a_count = 0, b_count = 0, c_count = 0;
    int64_t a_cols = 1, b_cols = 1, c_cols = 1;
    bool in_place = false;  // C starts as a copy of A instead of poison; the kernel gets only C
};

// The device pointers (or host pointers) of one call, and the stream, as a backend lays them out.
struct CallOperands {
    void* a = nullptr;
    void* b = nullptr;
    void* c = nullptr;
    void* stream = nullptr;
};

class OperationDef {
public:
    virtual ~OperationDef() = default;
    virtual Operation id() const = 0;
    // Why the shape is not a problem of this operation ("" when it is). The config parser produces only
    // well-formed shapes; this guards jobs that come from elsewhere (a worker's request).
    virtual std::string invalid_shape(const Shape& shape) const = 0;
    // The operands' sizes: the extents in the operation's row of common/operations.def.
    OperandGeometry geometry(const Shape& shape) const;
    // Whether the check is exact (bit for bit) rather than within a tolerance.
    virtual bool exact() const = 0;
    // The full check of C against the reference from A and B; tolerance and seed are GEMM's (ignored
    // by exact operations).
    virtual VerifyResult verify(const float* a, const float* b, const float* c, const Shape& shape, double tolerance,
                                uint64_t seed) const = 0;
    // The expected value of C's element at flat index (for the sampled check after every call), and the
    // magnitude its error is normalised by (1 for exact operations).
    virtual double expected(const float* a, const float* b, const Shape& shape, size_t index,
                            double& magnitude) const = 0;
    // Exact operations: the flat index into A of the value C's element at `index` must equal bit for bit
    // (the sampled check compares bits, never values, so a NaN payload counts). Others never call it.
    virtual size_t exact_source(const Shape& /*shape*/, size_t index) const { return index; }
    // Called on A's host values after they are drawn (on strict runs checked outside the worker, by
    // fill_call_inputs, so the checker draws the same): exact operations plant values a kernel doing arithmetic would
    // change (NaN payloads, a signalling NaN, -0, Inf, a subnormal), so "bit for bit" is tested, not only "finite
    // values equal".
    virtual void plant_special_values(std::vector<float>& /*a*/, uint64_t /*seed*/) const {}
    // The work of one call (flops, bytes moved, the roofline bound) is not here: it is data, in the
    // operation's row of common/operations.def (common/operation_table.hpp), so that measure/ and report/
    // read it without this folder.
    // The ABI call of these operands (kreg_call): the shape keys' values in the table's order, the packed
    // row lengths as leading dimensions, the operands the operation has (in place: C alone).
    kreg_call abi_call(const Shape& shape, DType dtype, const CallOperands& operands) const;
    // One call of the kernel with the operands laid out by a backend, through the entry its ABI version has
    // (plugin/kernel_call.hpp): "" on OK, else "kernel returned <STATUS>: <message>".
    std::string call(const kreg_kernel_info& info, void* instance, const Shape& shape, DType dtype,
                     const CallOperands& operands) const;
    // The kernel's launch description for these operands, if it gives one: status and info filled.
    kreg_status describe_launch(const kreg_kernel_info& info, void* instance, const Shape& shape, DType dtype,
                                const CallOperands& operands, kreg_launch_info& launch, char* error,
                                size_t error_size) const;
    // The variant the kernel says it runs for these operands (ABI 1.2's describe_gemm_variant): status, and the
    // text in buffer. Operations without such an entry answer KREG_STATUS_UNSUPPORTED.
    virtual kreg_status describe_variant(const kreg_kernel_info& /*info*/, void* /*instance*/, const Shape& /*shape*/,
                                         DType /*dtype*/, const CallOperands& /*operands*/, char* /*buffer*/,
                                         size_t /*buffer_size*/) const {
        return KREG_STATUS_UNSUPPORTED;
    }
};

const OperationDef& operation_def(Operation op);

// "RUNTIME_ERROR" for KREG_STATUS_RUNTIME_ERROR, and so on.
const char* kreg_status_name(kreg_status status);
// The text of a non-OK status with the kernel's message.
std::string kernel_failure(kreg_status status, const char* message);

}  // namespace kreg
