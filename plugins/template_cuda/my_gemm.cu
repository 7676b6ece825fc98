// student_gemm: your starting point for the CUDA lab (grading/lab3.json). A correct, naive CUDA GEMM;
// make it faster and keep it correct.
//
// C = alpha * A * B + beta * C, all row-major, fp32, device pointers (see struct kreg_gemm_args in
// <kreg/abi.h>). One thread computes one element of C from a row of A and a column of B read straight
// from global memory: 2K loads for 2K FLOPs, so the kernel waits on loads, far below the FMA peak.
// threadIdx.x runs along the columns of C, so a warp's loads of B and its stores to C are coalesced and
// its load of A is a single broadcast.
//
// The lab's next steps, one at a time, measuring after each (lab3 scores you against cuda_02_tiled16,
// cuda_04_coarsened and cuBLAS):
//   1. Shared-memory tiles: a block stages a tile of A and a tile of B in shared memory and every thread
//      reuses each staged element tile-width times; global loads fall by that factor.
//   2. Padding: a warp reading down a column of a 32-wide tile hits one bank 32 times; one extra word
//      per tile row spreads those reads over all 32 banks.
//   3. Coarsening: each thread computes a few outputs, so one shared load feeds several FMAs.
//   4. Register blocking: a small block of C (4x4, 8x8) per thread kept in registers, built as outer
//      products of a column of the A tile and a row of the B tile.
//   5. Vectorized loads: float4 (16-byte) global loads and shared stores, only where the address is
//      16-byte aligned (it depends on lda/ldb and the base pointer) and inside the matrix.
//   6. Double buffering: load the next tile while computing on the current one, one barrier per tile.
//   7. cp.async (sm_80+): copy global -> shared without going through registers, several stages deep;
//      set min_compute_capability to 80 then.
// Every step adds edges where M, N or K is not a multiple of the tile: check 1x1x1, 17^3 and 33x65x17
// after each change, not just the big square sizes.
#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kBlockX = 32;           // columns of C per block: one warp along a row of C
constexpr int kBlockY = 8;            // rows of C per block
constexpr int64_t kMaxGridY = 65535;  // CUDA's limit on gridDim.y, which counts blocks of rows

__global__ void __launch_bounds__(kBlockX* kBlockY)
    naive_gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
               int64_t ldc, float alpha, float beta) {
    const int64_t row = int64_t(blockIdx.y) * kBlockY + threadIdx.y;
    const int64_t col = int64_t(blockIdx.x) * kBlockX + threadIdx.x;
    // The grid is rounded up to whole blocks; threads past the edge of C would write out of bounds.
    if (row >= m || col >= n) return;
    const float* a_row = a + row * lda;
    const float* b_col = b + col;
    float acc = 0.0f;
    for (int64_t p = 0; p < k; ++p) acc = fmaf(a_row[p], b_col[p * ldb], acc);
    float* out = c + row * ldc + col;
    // beta == 0 must not read C (it may hold garbage or NaN), as in BLAS.
    *out = beta == 0.0f ? alpha * acc : fmaf(beta, *out, alpha * acc);
}

void check_arguments(const kreg_gemm_args& args) {
    if (args.struct_size < sizeof(kreg_gemm_args))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_gemm_args is smaller than this plugin expects");
    if (args.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
    if (args.m < 1 || args.n < 1 || args.k < 1)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n and k must be >= 1");
    if (args.m > kMaxGridY * kBlockY)
        throw kreg::Error(KREG_STATUS_UNSUPPORTED, "m needs more than 65535 blocks of rows");
    if (args.lda < args.k || args.ldb < args.n || args.ldc < args.n)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "a leading dimension is smaller than its row");
    if (args.a == nullptr || args.b == nullptr || args.c == nullptr)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
}

// One place decides the launch, so what runs and what the report records (describe_launch) agree.
struct Launch {
    dim3 grid;
    dim3 block;
};

Launch plan(const kreg_gemm_args& args) {
    return {dim3(unsigned((args.n + kBlockX - 1) / kBlockX), unsigned((args.m + kBlockY - 1) / kBlockY)),
            dim3(kBlockX, kBlockY)};
}

// Optional traffic model for the roofline: every thread reads its own row of A and column of B, so A
// is read N times and B M times. Once you tile, a BM x BN block tile reads A ceil(N/BN) times and B
// ceil(M/BM) times; keep this in step with your kernel, or delete it (and the spec line).
double student_model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype /*dtype*/) {
    const double elements =
        double(m) * double(k) * double(n) + double(k) * double(n) * double(m) + double(m) * double(n);
    return elements * sizeof(float);
}

class StudentGemm final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "student_gemm";  // what lab3.json grades; unique across every loaded plugin
        s.description = "naive: one thread per element of C, operands straight from global memory";
        s.backend = KREG_BACKEND_CUDA;
        s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
        // Any shape; say so if yours needs e.g. m % 64 == 0. Larger m is skipped, not failed.
        s.m_multiple = s.n_multiple = s.k_multiple = 1;
        s.max_m = kMaxGridY * kBlockY;
        // This kernel computes the full alpha*A*B + beta*C and accepts padded rows (lda > k, ...), so it
        // may be called with either. Clear a flag if you drop that support: you are then only asked
        // for C = A*B with packed rows.
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        s.model_global_bytes = &student_model_bytes;
        return s;
    }

    // Asynchronous: launch on the runner's stream and return; the runner synchronises and times it.
    void run_gemm(const kreg_gemm_args& args) override {
        check_arguments(args);
        const Launch launch = plan(args);
        naive_gemm<<<launch.grid, launch.block, 0, static_cast<cudaStream_t>(args.stream)>>>(
            static_cast<const float*>(args.a), static_cast<const float*>(args.b), static_cast<float*>(args.c), args.m,
            args.n, args.k, args.lda, args.ldb, args.ldc, float(args.alpha), float(args.beta));
        KREG_CUDA_CHECK_LAUNCH();
    }

    // Lets the report show the grid, block, registers and shared memory of every run.
    bool describe_launch(const kreg_gemm_args& args, kreg_launch_info& info) override {
        check_arguments(args);
        const Launch launch = plan(args);
        info.device_function = reinterpret_cast<const void*>(&naive_gemm);
        info.grid[0] = launch.grid.x;
        info.grid[1] = launch.grid.y;
        info.grid[2] = launch.grid.z;
        info.block[0] = launch.block.x;
        info.block[1] = launch.block.y;
        info.block[2] = launch.block.z;
        info.dynamic_shared_bytes = 0;
        return true;
    }
};

}  // namespace

// The plugin's name and version (shown by `runner --list` and recorded in every report), then every
// kernel class it provides: KREG_PLUGIN("my_gemm", "0.1.0", StudentGemm, StudentGemmV2)
KREG_PLUGIN("my_gemm", "0.1.0", StudentGemm)
