// Shared pieces of the CUDA fp32 GEMM lab (plugins/01_naive .. 09_warptiled). Header-only and included by
// relative path, so this folder has no CMakeLists.txt and is not a plugin.
//
// What lives here is what every step needs and no step teaches: argument checks, the launch record,
// the traffic model, guarded loads/stores with the alpha/beta epilogue, and the cp.async wrappers.
//
// Conventions: row-major, C[M x N] = alpha * A[M x K] * B[K x N] + beta * C, leading dimensions honoured.
// Sizes travel to the device as int (checked on the host); row offsets are formed in size_t.
#pragma once

#include "launch_info.cuh"

#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace kreg_cuda {

// The kernel parameters of every SIMT fp32 kernel (passed by value).
struct Fp32Gemm {
    const float* a;
    const float* b;
    float* c;
    int m, n, k;
    int lda, ldb, ldc;
    float alpha, beta;
};

// Largest M, N, K and leading dimension accepted: keeps every int index (including col + 3 and
// row0 + tile) far from overflow.
constexpr int64_t kMaxDim = int64_t{1} << 30;

// The checks of every CUDA GEMM kernel here (01-12) on its arguments. `dtypes` is the KREG_DTYPE_BIT mask of what
// the kernel computes, `unsupported` the message for any other dtype. Throws kreg::Error with the reason.
inline void check_gemm_args(const kreg_gemm_args& args, uint32_t dtypes, const char* unsupported) {
    if (args.struct_size < sizeof(kreg_gemm_args))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_gemm_args.struct_size is smaller than this plugin's ABI");
    if (static_cast<unsigned>(args.dtype) >= 32u || (dtypes & KREG_DTYPE_BIT(args.dtype)) == 0)
        throw kreg::Error(KREG_STATUS_UNSUPPORTED, unsupported);
    if (args.m < 1 || args.n < 1 || args.k < 1)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n and k must be >= 1");
    if (args.m > kMaxDim || args.n > kMaxDim || args.k > kMaxDim || args.lda > kMaxDim || args.ldb > kMaxDim ||
        args.ldc > kMaxDim)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n, k and leading dimensions must be <= 2^30");
    if (args.lda < args.k || args.ldb < args.n || args.ldc < args.n)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                          "leading dimensions must be >= the row length (lda>=k, ldb>=n, ldc>=n)");
    if (args.a == nullptr || args.b == nullptr || args.c == nullptr)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
}

// Checks the arguments and converts them for the device. Throws kreg::Error with the reason.
inline Fp32Gemm fp32_gemm(const kreg_gemm_args& args) {
    check_gemm_args(args, KREG_DTYPE_BIT(KREG_DTYPE_FP32), "this kernel computes fp32 only");
    Fp32Gemm p;
    p.a = static_cast<const float*>(args.a);
    p.b = static_cast<const float*>(args.b);
    p.c = static_cast<float*>(args.c);
    p.m = static_cast<int>(args.m);
    p.n = static_cast<int>(args.n);
    p.k = static_cast<int>(args.k);
    p.lda = static_cast<int>(args.lda);
    p.ldb = static_cast<int>(args.ldb);
    p.ldc = static_cast<int>(args.ldc);
    p.alpha = static_cast<float>(args.alpha);
    p.beta = static_cast<float>(args.beta);
    return p;
}

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// One launch: which kernel, and its configuration. Every SIMT kernel takes a single Fp32Gemm.
struct LaunchPlan {
    void (*kernel)(Fp32Gemm);
    dim3 grid;
    dim3 block;
    unsigned dynamic_smem;
};

// Grid of (N / bn) x (M / bm) blocks, x along the columns of C. Throws if M needs more than 65535 rows of blocks.
inline dim3 tile_grid(const Fp32Gemm& p, int bm, int bn) {
    const int gy = ceil_div(p.m, bm);
    if (gy > 65535)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                          "m = " + std::to_string(p.m) + " needs " + std::to_string(gy) + " block rows (max 65535)");
    return dim3(static_cast<unsigned>(ceil_div(p.n, bn)), static_cast<unsigned>(gy), 1);
}

// Lets `kernel` use `bytes` of dynamic shared memory on the current device (needed above 48 KiB).
// Does the work once per device: `configured_device` remembers the last device it was done for.
inline void allow_dynamic_smem(const void* kernel, int bytes, const char* name, int& configured_device) {
    int device = 0;
    KREG_CUDA_CHECK(cudaGetDevice(&device));
    if (device == configured_device) return;
    int optin = 0;
    KREG_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (optin < bytes)
        throw kreg::Error(KREG_STATUS_UNSUPPORTED, std::string(name) + " needs " + std::to_string(bytes) +
                                                       " B of shared memory per block; device " +
                                                       std::to_string(device) + " allows " + std::to_string(optin) +
                                                       " B");
    KREG_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    configured_device = device;
}

// Base of every SIMT kernel class: Derived provides `LaunchPlan plan(const Fp32Gemm&)`; run and describe
// use the same plan, so the record always matches what ran.
template <class Derived>
class SimtKernel : public kreg::IKernel {
public:
    void run_gemm(const kreg_gemm_args& args) override {
        const Fp32Gemm p = fp32_gemm(args);
        const LaunchPlan plan = static_cast<Derived*>(this)->plan(p);
        plan.kernel<<<plan.grid, plan.block, plan.dynamic_smem, static_cast<cudaStream_t>(args.stream)>>>(p);
        KREG_CUDA_CHECK_LAUNCH();
#ifdef KREG_TEST_SLOWDOWN_PERCENT
        // Test builds only (tests/fixtures: fixture_cuda_09_slowed): the same kernel made a few percent
        // slower, for checking that `runner compare` finds exactly such a regression. It computes the
        // first KREG_TEST_SLOWDOWN_PERCENT % of C's rows a second time; with beta = 0 (as the harness
        // calls) that writes the same values again, so the result stays correct.
        Fp32Gemm head = p;
        head.m = std::max(1, static_cast<int>(static_cast<int64_t>(p.m) * KREG_TEST_SLOWDOWN_PERCENT / 100));
        if (p.beta == 0.0f) {
            const LaunchPlan again = static_cast<Derived*>(this)->plan(head);
            again.kernel<<<again.grid, again.block, again.dynamic_smem, static_cast<cudaStream_t>(args.stream)>>>(head);
            KREG_CUDA_CHECK_LAUNCH();
        }
#endif
    }

    bool describe_launch(const kreg_gemm_args& args, kreg_launch_info& info) override {
        const LaunchPlan plan = static_cast<Derived*>(this)->plan(fp32_gemm(args));
        fill_launch_info(plan, info);
        return true;
    }
};

// Traffic model of a kernel whose blocks each own a BM x BN tile of C and stream the matching
// BM x K panel of A and K x BN panel of B from global memory: A is read ceil(N/BN) times, B
// ceil(M/BM) times, C written once. Intensity 2MNK / bytes tends to 1 / (2 (1/BM + 1/BN)) FLOP/B per
// 4 bytes: BM = BN = T gives T/4 FLOP/B; BM = BN = 1 is the naive kernel's 0.25 FLOP/B.
template <int BM, int BN>
double block_tile_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype /*dtype*/) {
    const double reads_of_a = static_cast<double>((n + BN - 1) / BN);
    const double reads_of_b = static_cast<double>((m + BM - 1) / BM);
    return 4.0 * (static_cast<double>(m) * k * reads_of_a + static_cast<double>(k) * n * reads_of_b +
                  static_cast<double>(m) * n);
}

// Spec shared by the SIMT kernels: fp32, any shape, alpha/beta and leading dimensions honoured.
inline kreg::KernelSpec simt_spec(const char* name, const char* description, int32_t min_cc,
                                  double (*model)(int64_t, int64_t, int64_t, kreg_dtype)) {
    kreg::KernelSpec s;
    s.name = name;
    s.description = description;
    s.backend = KREG_BACKEND_CUDA;
    s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
    s.min_compute_capability = min_cc;
    s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
    s.model_global_bytes = model;
    return s;
}

// ---------------------------------------------------------------------------------------------------
// Device helpers

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Epilogue for one element: C = alpha * acc + beta * C. C is not read when beta == 0 (it may hold NaN).
__device__ __forceinline__ void store_output(const Fp32Gemm& p, int row, int col, float acc) {
    if (row >= p.m || col >= p.n) return;
    float* out = p.c + static_cast<size_t>(row) * p.ldc + col;
    float v = p.alpha * acc;
    if (p.beta != 0.0f) v = fmaf(p.beta, *out, v);
    *out = v;
}

// Epilogue for four consecutive columns col..col+3 of one row: a 16-byte store when the whole vector is
// inside C and aligned, else element by element.
__device__ __forceinline__ void store_output4(const Fp32Gemm& p, int row, int col, float4 acc) {
    if (row >= p.m || col >= p.n) return;
    float* out = p.c + static_cast<size_t>(row) * p.ldc + col;
    if (col + 3 < p.n && aligned16(out)) {
        float4 v = make_float4(p.alpha * acc.x, p.alpha * acc.y, p.alpha * acc.z, p.alpha * acc.w);
        if (p.beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4*>(out);
            v.x = fmaf(p.beta, old.x, v.x);
            v.y = fmaf(p.beta, old.y, v.y);
            v.z = fmaf(p.beta, old.z, v.z);
            v.w = fmaf(p.beta, old.w, v.w);
        }
        *reinterpret_cast<float4*>(out) = v;
        return;
    }
    store_output(p, row, col, acc.x);
    store_output(p, row, col + 1, acc.y);
    store_output(p, row, col + 2, acc.z);
    store_output(p, row, col + 3, acc.w);
}

// The epilogue of the tensor-core steps (10_mma, 11_wgmma, 12_wgmma_ws), whose kernel parameters differ in
// type but all carry c, m, n, ldc, alpha and beta: alpha * acc + beta * C for the element at out, C read only
// if beta != 0 (it may hold NaN).
template <class P>
__device__ __forceinline__ float alpha_beta(const P& p, const float* out, float acc) {
    const float v = p.alpha * acc;
    return p.beta != 0.0f ? fmaf(p.beta, *out, v) : v;
}

// Stores (row, col) and (row, col + 1) of C, the parts inside C only; one 8-byte store where both are inside
// and aligned.
template <class P>
__device__ __forceinline__ void store_pair(const P& p, int row, int col, float v0, float v1) {
    if (row >= p.m || col >= p.n) return;
    float* out = p.c + static_cast<size_t>(row) * p.ldc + col;
    if (col + 1 < p.n && (reinterpret_cast<uintptr_t>(out) & 7u) == 0) {
        float2 v;
        v.x = alpha_beta(p, out, v0);
        v.y = alpha_beta(p, out + 1, v1);
        *reinterpret_cast<float2*>(out) = v;
        return;
    }
    out[0] = alpha_beta(p, out, v0);
    if (col + 1 < p.n) out[1] = alpha_beta(p, out + 1, v1);
}

// Stores (row, col) of C if it is inside C.
template <class P>
__device__ __forceinline__ void store_one(const P& p, int row, int col, float v) {
    if (row >= p.m || col >= p.n) return;
    float* out = p.c + static_cast<size_t>(row) * p.ldc + col;
    *out = alpha_beta(p, out, v);
}

// Element (row, col) of a rows x cols row-major matrix, or 0 outside it.
__device__ __forceinline__ float load_or_zero(const float* base, int ld, int row, int col, int rows, int cols) {
    return (row < rows && col < cols) ? base[static_cast<size_t>(row) * ld + col] : 0.0f;
}

// Elements (row, col..col+3), zero outside the matrix: one 16-byte load when the vector is in range and
// aligned (col is a multiple of 4 at every call site, so alignment depends only on base and ld), else scalar.
__device__ __forceinline__ float4 load4_or_zero(const float* base, int ld, int row, int col, int rows, int cols) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= rows || col >= cols) return v;
    const float* src = base + static_cast<size_t>(row) * ld + col;
    if (col + 3 < cols && aligned16(src)) return *reinterpret_cast<const float4*>(src);
    v.x = src[0];
    if (col + 1 < cols) v.y = src[1];
    if (col + 2 < cols) v.z = src[2];
    if (col + 3 < cols) v.w = src[3];
    return v;
}

// cp.async (sm_80+): global -> shared without passing through registers. The zero-fill form copies
// src_bytes (0..cp-size) and writes zeros for the rest, so out-of-range elements cost no branch on the
// consumer side and read nothing from global memory.
__device__ __forceinline__ void cp_async4(float* smem_dst, const float* gmem_src, bool in_range) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    const int src_bytes = in_range ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes) : "memory");
}

// 16-byte copy, both addresses 16-byte aligned; src_bytes in {0, 4, 8, 12, 16}.
__device__ __forceinline__ void cp_async16(float* smem_dst, const float* gmem_src, int src_bytes) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes)
                 : "memory");
}

// The same two copies with the shared destination already as a 32-bit shared-window address, for
// kernels that compute their copy addresses once and only offset them afterwards.
__device__ __forceinline__ void cp_async4_at(unsigned smem_dst, const float* gmem_src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_dst), "l"(gmem_src), "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async16_at(unsigned smem_dst, const float* gmem_src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_dst), "l"(gmem_src), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// Copies the BM x BK tile of A at (row0, k0) into shared memory transposed, as[k * LDS + m], with 4-byte
// cp.async: a 16-byte copy cannot transpose. Works for any lda and alignment. With BK = 8 a warp covers
// 4 rows x 8 k, and (LDS mod 32) == 4 puts those 32 writes in 32 distinct banks.
template <int BM, int BK, int THREADS, int LDS>
__device__ __forceinline__ void async_load_a_transposed(float* as, const Fp32Gemm& p, int row0, int k0, int tid) {
    static_assert((BM * BK) % THREADS == 0, "A tile must split evenly over the threads");
#pragma unroll
    for (int l = 0; l < BM * BK / THREADS; ++l) {
        const int e = tid + l * THREADS;
        const int m = e / BK, kk = e % BK;
        const bool ok = row0 + m < p.m && k0 + kk < p.k;
        const float* src = ok ? p.a + static_cast<size_t>(row0 + m) * p.lda + (k0 + kk) : p.a;
        cp_async4(as + kk * LDS + m, src, ok);
    }
}

// Copies the BK x BN tile of B at (k0, col0) into shared memory as bs[k * BN + n]. Each thread moves
// 4-float vectors: one 16-byte cp.async when the vector is inside B and aligned, else four 4-byte ones,
// zero-filled (src-size 0, from B's base, which is valid) where outside the matrix. A partial 16-byte copy
// (src-size 4..12) would be cheaper at the right edge, but compute-sanitizer reports it as a 16-byte read
// past the allocation, so edges take the 4-byte path.
template <int BK, int BN, int THREADS>
__device__ __forceinline__ void async_load_b(float* bs, const Fp32Gemm& p, int k0, int col0, int tid) {
    constexpr int kVecsPerRow = BN / 4;
    static_assert((BK * kVecsPerRow) % THREADS == 0, "B tile must split evenly over the threads");
#pragma unroll
    for (int l = 0; l < BK * kVecsPerRow / THREADS; ++l) {
        const int e = tid + l * THREADS;
        const int r = e / kVecsPerRow, c = (e % kVecsPerRow) * 4;
        const int row = k0 + r, col = col0 + c;
        float* dst = bs + r * BN + c;
        const bool row_ok = row < p.k;
        const float* src = row_ok ? p.b + static_cast<size_t>(row) * p.ldb + col : p.b;
        if (row_ok && col + 3 < p.n && aligned16(src)) {
            cp_async16(dst, src, 16);
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const bool ok = row_ok && col + q < p.n;
                cp_async4(dst + q, ok ? src + q : p.b, ok);
            }
        }
    }
}

}  // namespace kreg_cuda
