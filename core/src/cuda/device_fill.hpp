// Device memory the harness fills with a 32-bit pattern, and the NaN-padded device inputs built on it:
// the device side of verify/padded_operand.hpp. Header-only, so that every CUDA runner can use it
// without a build change.
#pragma once

#include "cuda/cuda_check.hpp"
#include "cuda/resources.hpp"
#include "verify/padded_operand.hpp"

#include <cuda.h>  // types of cuMemsetD32Async only; the function is fetched through the runtime
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace kreg {

// count 32-bit words of bits at data, queued on stream. cuMemsetD32Async is reached through the
// runtime's driver entry point (no link against libcuda); where it cannot be had, an all-ones byte
// memset (a NaN too, but without the pattern's payload) does instead. Returns the word actually written
// (bits, or 0xFFFFFFFF after the fallback), so a scan for it looks for the right one. A sticky error
// throws CudaError naming what, so the worker ends.
inline uint32_t fill_device_words(void* data, size_t count, uint32_t bits, cudaStream_t stream, const char* what) {
    using MemsetD32AsyncFn = CUresult (*)(CUdeviceptr, unsigned int, size_t, CUstream);
    static const MemsetD32AsyncFn fn = [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult query{};
        if (cudaGetDriverEntryPointByVersion("cuMemsetD32Async", &p, 12000, cudaEnableDefault, &query) != cudaSuccess ||
            query != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            return MemsetD32AsyncFn(nullptr);
        }
        return reinterpret_cast<MemsetD32AsyncFn>(p);
    }();
    if (fn != nullptr) {
        const CUresult r = fn(reinterpret_cast<CUdeviceptr>(data), bits, count, stream);
        if (r == CUDA_SUCCESS) return bits;
        // Driver and runtime error codes coincide for the errors that matter here (700-series faults).
        const cudaError_t e = static_cast<cudaError_t>(r);
        if (is_sticky(e)) throw CudaError(e, cuda_error_text(e) + "; from cuMemsetD32Async (" + what + ")");
    }
    KREG_RUNNER_CUDA_CHECK(cudaMemsetAsync(data, 0xFF, count * sizeof(uint32_t), stream));
    return 0xFFFFFFFFu;
}

// A device input (A or B) between two NaN paddings of operand_padding_floats(cols) elements each,
// written once, at construction, on stream (the caller waits for the stream before the first call): a
// kernel that reads outside the input reads a NaN, not another allocation. 4-byte elements (fp32, tf32)
// get the side's pattern (kPadBeforeABits, ...), whose payload the verifier can name; 2-byte ones
// (bf16, fp16) all-ones NaNs, which name no side. get() and bytes() are the input itself.
class PaddedDeviceOperand {
public:
    PaddedDeviceOperand(size_t count, size_t element_bytes, int64_t cols, uint32_t before_bits, uint32_t after_bits,
                        cudaStream_t stream)
        : padding_bytes_(operand_padding_floats(cols) * element_bytes),
          bytes_(count * element_bytes),
          storage_(bytes_ + 2 * padding_bytes_) {
        unsigned char* base = storage_.as<unsigned char>();
        unsigned char* after = base + padding_bytes_ + bytes_;
        if (element_bytes == sizeof(uint32_t)) {
            fill_device_words(base, padding_bytes_ / sizeof(uint32_t), before_bits, stream, "padding an input");
            fill_device_words(after, padding_bytes_ / sizeof(uint32_t), after_bits, stream, "padding an input");
        } else {
            KREG_RUNNER_CUDA_CHECK(cudaMemsetAsync(base, 0xFF, padding_bytes_, stream));
            KREG_RUNNER_CUDA_CHECK(cudaMemsetAsync(after, 0xFF, padding_bytes_, stream));
        }
    }
    void* get() const { return storage_.as<unsigned char>() + padding_bytes_; }
    size_t bytes() const { return bytes_; }

private:
    size_t padding_bytes_, bytes_;
    DeviceBuffer storage_;
};

}  // namespace kreg
