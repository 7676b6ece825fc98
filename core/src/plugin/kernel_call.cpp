#include "plugin/kernel_call.hpp"

#include "common/operation_table.hpp"

#include <cstdio>

namespace kreg {
namespace {

kreg_gemm_args gemm_args_of(const kreg_call& c) {
    kreg_gemm_args args{};
    args.struct_size = sizeof args;
    args.m = c.sizes[0];
    args.n = c.sizes[1];
    args.k = c.sizes[2];
    args.lda = c.lda;
    args.ldb = c.ldb;
    args.ldc = c.ldc;
    args.alpha = c.alpha;
    args.beta = c.beta;
    args.dtype = c.dtype;
    args.a = c.a;
    args.b = c.b;
    args.c = c.c;
    args.stream = c.stream;
    return args;
}

// The call's output c is the transpose's b.
kreg_transpose_args transpose_args_of(const kreg_call& c) {
    kreg_transpose_args args{};
    args.struct_size = sizeof args;
    args.m = c.sizes[0];
    args.n = c.sizes[1];
    args.lda = c.lda;
    args.ldb = c.ldc;
    args.dtype = c.dtype;
    args.a = c.a;
    args.b = c.c;
    args.stream = c.stream;
    return args;
}

// In place: the call's c is the matrix (the struct's a), its third size the tile edge.
kreg_block_transpose_args block_transpose_args_of(const kreg_call& c) {
    kreg_block_transpose_args args{};
    args.struct_size = sizeof args;
    args.m = c.sizes[0];
    args.n = c.sizes[1];
    args.lda = c.ldc;
    args.block = c.sizes[2];
    args.dtype = c.dtype;
    args.a = c.c;
    args.stream = c.stream;
    return args;
}

kreg_status no_entry(const kreg_kernel_info& info, char* error, size_t error_size) {
    if (error != nullptr && error_size > 0)
        std::snprintf(error, error_size, "the kernel has no run entry for operation %d", int(info.operation));
    return KREG_STATUS_INTERNAL_ERROR;
}

}  // namespace

kreg_status run_kernel_call(const kreg_kernel_info& info, void* instance, const kreg_call& call, char* error,
                            size_t error_size) {
    if (info.run != nullptr) return info.run(instance, &call, error, error_size);
    switch (info.operation) {
        case KREG_OPERATION_GEMM: {
            if (info.run_gemm == nullptr) break;
            const kreg_gemm_args args = gemm_args_of(call);
            return info.run_gemm(instance, &args, error, error_size);
        }
        case KREG_OPERATION_TRANSPOSE: {
            if (info.run_transpose == nullptr) break;
            const kreg_transpose_args args = transpose_args_of(call);
            return info.run_transpose(instance, &args, error, error_size);
        }
        case KREG_OPERATION_BLOCK_TRANSPOSE: {
            if (info.run_block_transpose == nullptr) break;
            const kreg_block_transpose_args args = block_transpose_args_of(call);
            return info.run_block_transpose(instance, &args, error, error_size);
        }
        default:
            break;
    }
    return no_entry(info, error, error_size);
}

kreg_status describe_kernel_call_launch(const kreg_kernel_info& info, void* instance, const kreg_call& call,
                                        kreg_launch_info& launch, char* error, size_t error_size) {
    if (info.run != nullptr)  // a kernel on the generic entry describes its launches there, or not at all
        return info.describe_call_launch != nullptr
                   ? info.describe_call_launch(instance, &call, &launch, error, error_size)
                   : KREG_STATUS_UNSUPPORTED;
    if (info.operation == KREG_OPERATION_GEMM && info.describe_launch != nullptr) {
        const kreg_gemm_args args = gemm_args_of(call);
        return info.describe_launch(instance, &args, &launch, error, error_size);
    }
    if (info.operation == KREG_OPERATION_TRANSPOSE && info.describe_transpose_launch != nullptr) {
        const kreg_transpose_args args = transpose_args_of(call);
        return info.describe_transpose_launch(instance, &args, &launch, error, error_size);
    }
    if (info.operation == KREG_OPERATION_BLOCK_TRANSPOSE && info.describe_block_transpose_launch != nullptr) {
        const kreg_block_transpose_args args = block_transpose_args_of(call);
        return info.describe_block_transpose_launch(instance, &args, &launch, error, error_size);
    }
    return KREG_STATUS_UNSUPPORTED;
}

std::string missing_run_entry(const kreg_kernel_info& info) {
    const OperationRow* row = operation_row(info.operation);
    if (info.run != nullptr || row == nullptr) return "";
    const std::string kind = "is a " + std::string(row->name) + " kernel without ";
    switch (info.operation) {
        case KREG_OPERATION_GEMM:
            return info.run_gemm != nullptr ? "" : kind + "run or run_gemm";
        case KREG_OPERATION_TRANSPOSE:
            return info.run_transpose != nullptr ? "" : kind + "run or run_transpose (ABI 1.1)";
        case KREG_OPERATION_BLOCK_TRANSPOSE:
            return info.run_block_transpose != nullptr ? "" : kind + "run or run_block_transpose (ABI 1.1)";
        default:
            return kind + "run (ABI 1.3)";
    }
}

}  // namespace kreg
