// Shared pieces of the CUDA transpose lab (plugins/cuda_t1_naive .. cuda_t4_vectorized, cuda_copy and
// cuda_block_transpose). Header-only and included by relative path, so this folder has no
// CMakeLists.txt and is not a plugin.
//
// What lives here is what every step needs and no step teaches: the device-side parameters, the launch
// record, the grid (with its 65535 limit on gridDim.y), the traffic model and the argument checks.
//
// Conventions: row-major. transpose: B[N x M] = A[M x N]^T, element (i, j) of A is a[i * lda + j] and
// lands at b[j * ldb + i]; lda >= N, ldb >= M. block_transpose: A (M x N, lda >= N) in place, each
// block x block tile transposed where it stands. Sizes travel to the device as int (checked on the host:
// <= 2^30); offsets are formed in size_t.
#pragma once

#include "launch_info.cuh"

#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace kreg_transpose {

// Kernel parameters of every transpose kernel (passed by value).
struct Fp32Transpose {
    const float* a;  // M x N, leading dimension lda
    float* b;        // N x M, leading dimension ldb
    int m, n;
    int lda, ldb;
};

// Kernel parameters of the in-place block transpose.
struct Fp32BlockTranspose {
    float* a;  // M x N, leading dimension lda; M and N multiples of block
    int m, n;
    int lda;
};

// Largest M, N and leading dimension accepted: keeps every int index (row0 + 64, col + 3) far from overflow.
constexpr int64_t kMaxDim = int64_t{1} << 30;

// CUDA's limit on gridDim.y. The kernels loop over row tiles with a stride of gridDim.y tiles, so a
// matrix of any height runs on a grid capped here.
constexpr int kMaxGridY = 65535;

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// One launch: which kernel, and its configuration.
template <class Params>
struct LaunchPlanOf {
    void (*kernel)(Params);
    dim3 grid;
    dim3 block;
    unsigned dynamic_smem;
};
using TransposeLaunch = LaunchPlanOf<Fp32Transpose>;
using BlockTransposeLaunch = LaunchPlanOf<Fp32BlockTranspose>;

// Grid over tiles of A: x along A's columns (N / tile_cols blocks), y along A's rows, capped at 65535.
inline dim3 tile_grid(int m, int n, int tile_rows, int tile_cols) {
    return dim3(static_cast<unsigned>(ceil_div(n, tile_cols)),
                static_cast<unsigned>(std::min(ceil_div(m, tile_rows), kMaxGridY)), 1);
}

// Bytes a transpose must move: A read once, B written once. Every kernel of the lab is judged against
// this minimum (the roofline is the device-to-device copy bandwidth).
inline double transpose_bytes(int64_t m, int64_t n) { return 8.0 * static_cast<double>(m) * static_cast<double>(n); }

// Checks the sizes and pointers of a transpose and converts them for the device. Throws kreg::Error.
inline Fp32Transpose fp32_transpose(int64_t m, int64_t n, int64_t lda, int64_t ldb, const void* a, void* b) {
    if (m < 1 || n < 1) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m and n must be >= 1");
    if (m > kMaxDim || n > kMaxDim || lda > kMaxDim || ldb > kMaxDim)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n and leading dimensions must be <= 2^30");
    if (lda < n || ldb < m)
        throw kreg::Error(
            KREG_STATUS_INVALID_ARGUMENT,
            "leading dimensions must be >= the row length (lda >= n, ldb >= m), got lda = " + std::to_string(lda) +
                ", ldb = " + std::to_string(ldb) + " for " + std::to_string(m) + " x " + std::to_string(n));
    if (a == nullptr || b == nullptr) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
    return {static_cast<const float*>(a), static_cast<float*>(b), static_cast<int>(m),
            static_cast<int>(n),          static_cast<int>(lda),  static_cast<int>(ldb)};
}

// The same for the in-place block transpose; block must lie in [1, max_block] and divide M and N.
inline Fp32BlockTranspose fp32_block_transpose(int64_t m, int64_t n, int64_t lda, int64_t block, int max_block,
                                               void* a) {
    if (m < 1 || n < 1) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m and n must be >= 1");
    if (m > kMaxDim || n > kMaxDim || lda > kMaxDim)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n and lda must be <= 2^30");
    if (lda < n)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                          "lda must be >= n, got lda = " + std::to_string(lda) + ", n = " + std::to_string(n));
    if (block < 1 || block > max_block)
        throw kreg::Error(
            KREG_STATUS_UNSUPPORTED,
            "block = " + std::to_string(block) + " is outside this kernel's range 1.." + std::to_string(max_block));
    if (m % block != 0 || n % block != 0)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m = " + std::to_string(m) + " and n = " + std::to_string(n) +
                                                            " must be multiples of block = " + std::to_string(block));
    if (a == nullptr) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
    return {static_cast<float*>(a), static_cast<int>(m), static_cast<int>(n), static_cast<int>(lda)};
}

// Launches plan with params on stream and checks the launch.
template <class Params>
void launch(const LaunchPlanOf<Params>& plan, const Params& params, cudaStream_t stream) {
    plan.kernel<<<plan.grid, plan.block, plan.dynamic_smem, stream>>>(params);
    KREG_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------------------
// The ABI side (kreg_transpose_args, kreg_block_transpose_args; ABI 1.1)

inline Fp32Transpose fp32_transpose(const kreg_transpose_args& args) {
    if (args.struct_size < sizeof(kreg_transpose_args))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                          "kreg_transpose_args.struct_size is smaller than this plugin's ABI");
    if (args.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "this kernel transposes fp32 only");
    return fp32_transpose(args.m, args.n, args.lda, args.ldb, args.a, args.b);
}

inline Fp32BlockTranspose fp32_block_transpose(const kreg_block_transpose_args& args, int max_block) {
    if (args.struct_size < sizeof(kreg_block_transpose_args))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                          "kreg_block_transpose_args.struct_size is smaller than this plugin's ABI");
    if (args.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "this kernel transposes fp32 only");
    return fp32_block_transpose(args.m, args.n, args.lda, args.block, max_block, args.a);
}

// Traffic model for the ABI (k is 0 for transpose, the block for block_transpose: neither changes it).
inline double model_bytes(int64_t m, int64_t n, int64_t /*k*/, kreg_dtype /*dtype*/) { return transpose_bytes(m, n); }

// Spec shared by the transpose kernels: CUDA, fp32, any M and N, leading dimensions honoured.
inline kreg::KernelSpec cuda_spec(const char* name, const char* description) {
    kreg::KernelSpec s;
    s.name = name;
    s.description = description;
    s.backend = KREG_BACKEND_CUDA;
    s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
    s.min_compute_capability = 70;
    s.flags = KREG_KERNEL_HONOURS_LEADING_DIMS;
    s.model_global_bytes = &model_bytes;
    return s;
}

// Base of every transpose kernel class: Derived provides `TransposeLaunch plan(const Fp32Transpose&)`;
// run and describe use the same plan, so the record always matches what ran.
template <class Derived>
class TransposeKernel : public kreg::ITransposeKernel {
public:
    void run_transpose(const kreg_transpose_args& args) override {
        const Fp32Transpose p = fp32_transpose(args);
        launch(static_cast<Derived*>(this)->plan(p), p, static_cast<cudaStream_t>(args.stream));
    }
    bool describe_launch(const kreg_transpose_args& args, kreg_launch_info& info) override {
        kreg_cuda::fill_launch_info(static_cast<Derived*>(this)->plan(fp32_transpose(args)), info);
        return true;
    }
};

// Base of the block transpose kernel classes: Derived provides kMaxBlock and
// `BlockTransposeLaunch plan(const Fp32BlockTranspose&, int block)`.
template <class Derived>
class BlockTransposeKernel : public kreg::IBlockTransposeKernel {
public:
    void run_block_transpose(const kreg_block_transpose_args& args) override {
        const Fp32BlockTranspose p = fp32_block_transpose(args, Derived::kMaxBlock);
        launch(static_cast<Derived*>(this)->plan(p, static_cast<int>(args.block)), p,
               static_cast<cudaStream_t>(args.stream));
    }
    bool describe_launch(const kreg_block_transpose_args& args, kreg_launch_info& info) override {
        const Fp32BlockTranspose p = fp32_block_transpose(args, Derived::kMaxBlock);
        kreg_cuda::fill_launch_info(static_cast<Derived*>(this)->plan(p, static_cast<int>(args.block)), info);
        return true;
    }
};

// ---------------------------------------------------------------------------------------------------
// Device helpers

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace kreg_transpose
