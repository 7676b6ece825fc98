#include "ops/operation.hpp"

#include "ops/gemm.hpp"
#include "ops/reduction.hpp"
#include "ops/transpose.hpp"
#include "verify/tolerance.hpp"

namespace kreg {

const OperationDef& operation_def(Operation op) {
    static const GemmOperation gemm;
    static const TransposeOperation transpose;
    static const BlockTransposeOperation block_transpose;
    static const ReductionOperation reduction;
    switch (op) {
        case Operation::gemm:
            return gemm;
        case Operation::transpose:
            return transpose;
        case Operation::block_transpose:
            return block_transpose;
        case Operation::reduction:
            return reduction;
    }
    return gemm;
}

double OperationDef::default_tolerance(const Shape& shape, DType dtype) const {
    return exact() ? 0.0 : ::kreg::default_tolerance(dtype, shape.k);
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
