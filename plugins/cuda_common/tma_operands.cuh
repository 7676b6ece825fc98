// A and B as TMA can read them, for the Hopper steps (11_wgmma, 12_wgmma_ws). Header-only, included by
// relative path like the rest of this folder.
//
// A tensor map needs a 16-byte aligned base and a row pitch that is a multiple of 16 bytes. A or B that is not
// so (odd K or N, an odd leading dimension, an offset base) is first copied, on the call's stream, into rows
// padded to the next multiple of 16 bytes, in a buffer the kernel instance keeps; the tensor map then describes
// the copy. The copy is part of the call, so its cost is in the measured time.
#pragma once

#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace kreg_cuda {

// Copies a rows x cols matrix of T (pitch ld_src elements, any alignment) to dst, whose pitch ld_dst is a
// multiple of 16 bytes and whose base is 16-byte aligned: 16 bytes per thread, one vector store. Columns
// cols..ld_dst-1 get zeros (TMA never reads them: its tensor map says the matrix is cols wide).
template <class T>
__global__ void repack_rows(const T* __restrict__ src, int64_t ld_src, T* __restrict__ dst, int64_t ld_dst,
                            int64_t rows, int64_t cols) {
    constexpr int kPer = 16 / sizeof(T);
    const int64_t chunks_per_row = ld_dst / kPer, total = rows * chunks_per_row;
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
        const int64_t r = i / chunks_per_row, c = (i % chunks_per_row) * kPer;
        const T* s = src + r * ld_src + c;
        alignas(16) T v[kPer];
#pragma unroll
        for (int e = 0; e < kPer; ++e) v[e] = c + e < cols ? s[e] : T{0};
        *reinterpret_cast<uint4*>(dst + r * ld_dst + c) = *reinterpret_cast<const uint4*>(v);
    }
}

// A and B as the tensor maps should describe them, and their pitches in elements.
struct TmaOperands {
    const void* a;
    const void* b;
    int64_t lda, ldb;
};

// The padded copies of one kernel instance. Not copyable: it owns its device buffer.
class PaddedOperands {
public:
    PaddedOperands() = default;
    PaddedOperands(const PaddedOperands&) = delete;
    PaddedOperands& operator=(const PaddedOperands&) = delete;
    ~PaddedOperands() {
        if (buffer_ != nullptr) cudaFree(buffer_);
    }

    // The call's A (m x k) and B (k x n), of elem_bytes (2 or 4) each: as given where TMA can read them, else
    // copied to padded rows on `stream`.
    TmaOperands prepare(const kreg_gemm_args& args, int elem_bytes, cudaStream_t stream) {
        const int64_t per16 = 16 / elem_bytes;  // elements per 16 bytes
        const bool a_ok = aligned16(args.a) && args.lda % per16 == 0;
        const bool b_ok = aligned16(args.b) && args.ldb % per16 == 0;
        TmaOperands out{args.a, args.b, a_ok ? args.lda : round_up(args.k, per16),
                        b_ok ? args.ldb : round_up(args.n, per16)};
        const size_t a_bytes = a_ok ? 0 : static_cast<size_t>(round_up(args.m * out.lda * elem_bytes, 256));
        const size_t b_bytes = b_ok ? 0 : static_cast<size_t>(round_up(args.k * out.ldb * elem_bytes, 256));
        if (a_bytes + b_bytes == 0) return out;
        uint8_t* buffer = static_cast<uint8_t*>(buffer_for(a_bytes + b_bytes));
        if (!a_ok) {
            copy(args.a, args.lda, buffer, out.lda, args.m, args.k, elem_bytes, stream);
            out.a = buffer;
        }
        if (!b_ok) {
            copy(args.b, args.ldb, buffer + a_bytes, out.ldb, args.k, args.n, elem_bytes, stream);
            out.b = buffer + a_bytes;
        }
        return out;
    }

    static bool aligned16(const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; }

private:
    static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

    void* buffer_for(size_t bytes) {
        int device = 0;
        KREG_CUDA_CHECK(cudaGetDevice(&device));
        if (buffer_ != nullptr && bytes_ >= bytes && device_ == device) return buffer_;
        if (buffer_ != nullptr) {
            KREG_CUDA_CHECK(cudaFree(buffer_));  // waits for the device: no earlier call still reads it
            buffer_ = nullptr;
        }
        KREG_CUDA_CHECK(cudaMalloc(&buffer_, bytes));
        bytes_ = bytes;
        device_ = device;
        return buffer_;
    }

    static void copy(const void* src, int64_t ld_src, void* dst, int64_t ld_dst, int64_t rows, int64_t cols,
                     int elem_bytes, cudaStream_t stream) {
        const int64_t chunks = rows * (ld_dst * elem_bytes / 16);
        const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((chunks + 255) / 256, 132 * 32));
        if (elem_bytes == 4)
            repack_rows<float><<<blocks, 256, 0, stream>>>(static_cast<const float*>(src), ld_src,
                                                           static_cast<float*>(dst), ld_dst, rows, cols);
        else
            repack_rows<uint16_t><<<blocks, 256, 0, stream>>>(static_cast<const uint16_t*>(src), ld_src,
                                                              static_cast<uint16_t*>(dst), ld_dst, rows, cols);
        KREG_CUDA_CHECK_LAUNCH();
    }

    void* buffer_ = nullptr;
    size_t bytes_ = 0;
    int device_ = -1;
};

}  // namespace kreg_cuda
