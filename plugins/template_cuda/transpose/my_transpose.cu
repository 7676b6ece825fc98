// student_transpose: your starting point for the CUDA transpose lab (grading/transpose.json). A correct,
// naive CUDA transpose; make it reach copy speed and keep it correct.
//
// B[N x M] = A[M x N]^T: b[j * ldb + i] = a[i * lda + j], row-major fp32, device pointers (see struct
// kreg_transpose_args in <kreg/abi.h>). The runner checks every element bit for bit (NaN payloads too:
// move the bits, do no arithmetic on them). One thread moves one element; threadIdx.x runs along a row
// of A, so the reads are coalesced and the writes, ldb floats apart, are not.
//
// The lab's steps (plugins/cuda_t1_naive .. cuda_t4_vectorized in the kreg sources; transpose.json
// scores you against cuda_t1_naive, cuda_t3_padded and 80 % of the copy bandwidth the grader measures):
//   1. A 32x32 tile in shared memory: read rows of A into it, __syncthreads(), write rows of B from its
//      columns. Both global sides are now coalesced; the column reads are a 32-way bank conflict.
//   2. Pad the tile to [32][33]: the column then walks all 32 banks. Check with
//      `runner --profile --plugin build/my_transpose.so --kernels student_transpose` (needs ncu).
//   3. More bytes in flight per thread: several elements per thread, float4 loads and stores where the
//      address is 16-byte aligned and the vector is inside the matrix, scalar elsewhere.
// Every step adds edges: check 1x1, 1x300, 17x33 and padded leading dimensions after each change.
#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace {

constexpr int kBlockX = 32;           // columns of A per block: one warp along a row
constexpr int kBlockY = 8;            // rows of A per block
constexpr int64_t kMaxGridY = 65535;  // CUDA's limit on gridDim.y: the kernel loops over rows beyond it

__global__ void __launch_bounds__(kBlockX* kBlockY)
    naive_transpose(const float* a, float* b, int64_t m, int64_t n, int64_t lda, int64_t ldb) {
    const int64_t col = int64_t(blockIdx.x) * kBlockX + threadIdx.x;
    if (col >= n) return;  // the grid is rounded up to whole blocks
    for (int64_t row = int64_t(blockIdx.y) * kBlockY + threadIdx.y; row < m; row += int64_t(gridDim.y) * kBlockY)
        b[col * ldb + row] = a[row * lda + col];
}

void check_arguments(const kreg_transpose_args& args) {
    if (args.struct_size < sizeof(kreg_transpose_args))
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "kreg_transpose_args is smaller than this plugin expects");
    if (args.dtype != KREG_DTYPE_FP32) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "only fp32 is implemented");
    if (args.m < 1 || args.n < 1) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m and n must be >= 1");
    if (args.lda < args.n || args.ldb < args.m)
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "a leading dimension is smaller than its row");
    if (args.a == nullptr || args.b == nullptr) throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
}

struct Launch {
    dim3 grid;
    dim3 block;
};

Launch plan(const kreg_transpose_args& args) {
    const int64_t rows_of_blocks = std::min<int64_t>((args.m + kBlockY - 1) / kBlockY, kMaxGridY);
    return {dim3(unsigned((args.n + kBlockX - 1) / kBlockX), unsigned(rows_of_blocks)), dim3(kBlockX, kBlockY)};
}

// A transpose reads every element once and writes it once: 8 bytes per element is the minimum, and what
// the roofline (the device-to-device copy bandwidth) is measured against.
double student_model_bytes(int64_t m, int64_t n, int64_t /*k*/, kreg_dtype /*dtype*/) {
    return 8.0 * double(m) * double(n);
}

class StudentTranspose final : public kreg::ITransposeKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "student_transpose";  // what transpose.json grades
        s.description = "naive: one thread per element, coalesced reads, strided writes";
        s.backend = KREG_BACKEND_CUDA;
        s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
        s.flags = KREG_KERNEL_HONOURS_LEADING_DIMS;  // accepts lda > n and ldb > m
        s.model_global_bytes = &student_model_bytes;
        return s;
    }

    void run_transpose(const kreg_transpose_args& args) override {
        check_arguments(args);
        const Launch launch = plan(args);
        naive_transpose<<<launch.grid, launch.block, 0, static_cast<cudaStream_t>(args.stream)>>>(
            static_cast<const float*>(args.a), static_cast<float*>(args.b), args.m, args.n, args.lda, args.ldb);
        KREG_CUDA_CHECK_LAUNCH();
    }

    bool describe_launch(const kreg_transpose_args& args, kreg_launch_info& info) override {
        check_arguments(args);
        const Launch launch = plan(args);
        info.device_function = reinterpret_cast<const void*>(&naive_transpose);
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

KREG_PLUGIN("my_transpose", "0.1.0", StudentTranspose)
