#include "ops/operation.hpp"

#include "ops/gemm.hpp"
#include "ops/transpose.hpp"

#include "common/operation_table.hpp"
#include "plugin/kernel_call.hpp"

namespace kreg {

OperandGeometry OperationDef::geometry(const Shape& s) const {
    const OperationRow& row = operation_row(id());
    OperandGeometry g;
    g.a_count = element_count(s, row.a);
    g.b_count = element_count(s, row.b);
    g.c_count = element_count(s, row.c);
    g.a_cols = row_length(s, row.a);
    g.b_cols = row_length(s, row.b);
    g.c_cols = row_length(s, row.c);
    g.in_place = row.in_place;
    return g;
}

kreg_call OperationDef::abi_call(const Shape& s, DType dtype, const CallOperands& o) const {
    const OperationRow& row = operation_row(id());
    kreg_call call{};
    call.struct_size = sizeof call;
    call.operation = row.abi;
    call.dtype = static_cast<kreg_dtype>(dtype);
    const std::vector<int64_t> values = key_values(id(), s);
    for (size_t i = 0; i < values.size() && i < KREG_CALL_MAX_SIZES; ++i) call.sizes[i] = values[i];
    const bool has_a = !row.in_place && element_count(s, row.a) > 0, has_b = element_count(s, row.b) > 0;
    call.lda = has_a ? row_length(s, row.a) : 0;
    call.ldb = has_b ? row_length(s, row.b) : 0;
    call.ldc = row_length(s, row.c);
    call.alpha = 1.0;
    call.beta = 0.0;
    call.a = has_a ? o.a : nullptr;
    call.b = has_b ? o.b : nullptr;
    call.c = o.c;
    call.stream = o.stream;
    return call;
}

std::string OperationDef::call(const kreg_kernel_info& info, void* instance, const Shape& shape, DType dtype,
                               const CallOperands& operands) const {
    const kreg_call call = abi_call(shape, dtype, operands);
    char error[1024];
    error[0] = '\0';
    const kreg_status status = run_kernel_call(info, instance, call, error, sizeof error);
    if (status == KREG_STATUS_OK) return "";
    error[sizeof error - 1] = '\0';
    return kernel_failure(status, error);
}

kreg_status OperationDef::describe_launch(const kreg_kernel_info& info, void* instance, const Shape& shape, DType dtype,
                                          const CallOperands& operands, kreg_launch_info& launch, char* error,
                                          size_t error_size) const {
    return describe_kernel_call_launch(info, instance, abi_call(shape, dtype, operands), launch, error, error_size);
}

const OperationDef& operation_def(Operation op) {
    static const GemmOperation gemm;
    static const TransposeOperation transpose;
    static const BlockTransposeOperation block_transpose;
    switch (op) {
        case Operation::gemm:
            return gemm;
        case Operation::transpose:
            return transpose;
        case Operation::block_transpose:
            return block_transpose;
    }
    return gemm;
}

const char* kreg_status_name(kreg_status status) {
    switch (status) {
        case KREG_STATUS_OK:
            return "OK";
        case KREG_STATUS_INVALID_ARGUMENT:
            return "INVALID_ARGUMENT";
        case KREG_STATUS_UNSUPPORTED:
            return "UNSUPPORTED";
        case KREG_STATUS_OUT_OF_MEMORY:
            return "OUT_OF_MEMORY";
        case KREG_STATUS_RUNTIME_ERROR:
            return "RUNTIME_ERROR";
        case KREG_STATUS_INTERNAL_ERROR:
            return "INTERNAL_ERROR";
    }
    return "UNKNOWN_STATUS";
}

std::string kernel_failure(kreg_status status, const char* message) {
    return std::string("kernel returned ") + kreg_status_name(status) + ": " +
           (message != nullptr && message[0] != '\0' ? message : "(no message)");
}

}  // namespace kreg
