// C on the device in a mapping of its own, with unmapped address space around it (issue 20, item 3): a
// kernel's write past C faults wherever it lands, instead of landing in another allocation, where only
// luck of layout (a value band that happens to lie there) could notice it.
//
//   [ reserved, unmapped ][ mapped chunk: band before C | C | slack < 256 bytes ][ reserved, unmapped ]
//     far_bytes              granularity-rounded           ends the chunk          far_bytes
//
// Built with the driver's virtual memory API (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess),
// reached through the runtime's driver entry points as cuda/device_fill.hpp does, so nothing new is
// linked. C starts 256-byte aligned and ends within 255 bytes of the chunk's end; the band before C and
// the slack after it are the caller's to fill with guard words and check. An access to the reserved
// range faults (a sticky illegal address: the worker ends, the row is crashed).
//
// Where the API cannot be had (an old driver, a device without it), the buffer falls back to cudaMalloc
// with the band on both sides (after: as long as the one before), and fallback_reason() says why.
#pragma once

#include <cuda.h>  // types only; the functions are fetched through the runtime
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/cuda_check.hpp"

namespace kreg {

class FencedDeviceBuffer {
public:
    FencedDeviceBuffer() = default;
    // c_bytes of C after band_bytes (a multiple of 256) of band, on `device`; far_bytes of unmapped
    // address space on each side (at least the chunk's size).
    FencedDeviceBuffer(size_t band_bytes, size_t c_bytes, size_t far_bytes, int device) {
        std::string why;
        c_bytes_ = c_bytes;
        if (map(band_bytes, c_bytes, far_bytes, device, why)) return;
        fallback_reason_ = why;
        after_bytes_ = band_bytes;
        KREG_RUNNER_CUDA_CHECK(cudaMalloc(&fallback_, band_bytes + c_bytes + after_bytes_));
        band_ = static_cast<unsigned char*>(fallback_);
        c_ = band_ + band_bytes;
    }
    ~FencedDeviceBuffer() { release(); }
    FencedDeviceBuffer(FencedDeviceBuffer&& o) noexcept { swap(o); }
    FencedDeviceBuffer& operator=(FencedDeviceBuffer&& o) noexcept {
        swap(o);
        return *this;
    }
    FencedDeviceBuffer(const FencedDeviceBuffer&) = delete;
    FencedDeviceBuffer& operator=(const FencedDeviceBuffer&) = delete;

    float* c() const { return reinterpret_cast<float*>(c_); }
    unsigned char* band() const { return band_; }           // band_bytes before C
    unsigned char* after() const { return c_ + c_bytes_; }  // after_bytes() after C, then unmapped
    size_t after_bytes() const { return after_bytes_; }
    // "" when C lies between unmapped pages; else why it lies in cudaMalloc memory instead.
    const std::string& fallback_reason() const { return fallback_reason_; }

private:
    struct Api {
        CUresult (*reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long) = nullptr;
        CUresult (*free_range)(CUdeviceptr, size_t) = nullptr;
        CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                           unsigned long long) = nullptr;
        CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
        CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) = nullptr;
        CUresult (*unmap)(CUdeviceptr, size_t) = nullptr;
        CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
        CUresult (*granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) = nullptr;
        std::string missing;  // the first entry point that could not be had
    };
    static const Api& api() {
        static const Api table = [] {
            Api t;
            auto get = [&t](const char* name, auto& fn) {
                void* p = nullptr;
                cudaDriverEntryPointQueryResult query{};
                if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &query) != cudaSuccess ||
                    query != cudaDriverEntryPointSuccess || p == nullptr) {
                    (void)cudaGetLastError();
                    if (t.missing.empty()) t.missing = name;
                    return;
                }
                fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
            };
            get("cuMemAddressReserve", t.reserve);
            get("cuMemAddressFree", t.free_range);
            get("cuMemCreate", t.create);
            get("cuMemRelease", t.release);
            get("cuMemMap", t.map);
            get("cuMemUnmap", t.unmap);
            get("cuMemSetAccess", t.set_access);
            get("cuMemGetAllocationGranularity", t.granularity);
            return t;
        }();
        return table;
    }

    static std::string failed(const char* call, CUresult r) {
        const cudaError_t e = static_cast<cudaError_t>(r);  // the codes coincide for the errors that matter
        if (is_sticky(e)) throw CudaError(e, cuda_error_text(e) + "; from " + call + " (mapping C)");
        return std::string(call) + " failed (" + std::to_string(int(r)) + ")";
    }

    bool map(size_t band_bytes, size_t c_bytes, size_t far_bytes, int device, std::string& why) {
        const Api& f = api();
        if (!f.missing.empty()) {
            why = "the driver has no " + f.missing;
            return false;
        }
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        size_t granularity = 0;
        if (CUresult r = f.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM); r != CUDA_SUCCESS) {
            why = failed("cuMemGetAllocationGranularity", r);
            return false;
        }
        const size_t used = band_bytes + (c_bytes + 255) / 256 * 256;
        mapped_ = (used + granularity - 1) / granularity * granularity;
        far_ = (std::max(far_bytes, mapped_) + granularity - 1) / granularity * granularity;
        reserved_ = far_ + mapped_ + far_;
        if (CUresult r = f.reserve(&range_, reserved_, granularity, 0, 0); r != CUDA_SUCCESS) {
            why = failed("cuMemAddressReserve", r);
            range_ = 0;
            return false;
        }
        if (CUresult r = f.create(&handle_, mapped_, &prop, 0); r != CUDA_SUCCESS) {
            why = failed("cuMemCreate", r);
            release();
            return false;
        }
        created_ = true;
        if (CUresult r = f.map(range_ + far_, mapped_, 0, handle_, 0); r != CUDA_SUCCESS) {
            why = failed("cuMemMap", r);
            release();
            return false;
        }
        is_mapped_ = true;
        CUmemAccessDesc access{};
        access.location = prop.location;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if (CUresult r = f.set_access(range_ + far_, mapped_, &access, 1); r != CUDA_SUCCESS) {
            why = failed("cuMemSetAccess", r);
            release();
            return false;
        }
        // C as late in the chunk as its 256-byte alignment allows; the band right before it.
        unsigned char* chunk_end = reinterpret_cast<unsigned char*>(range_ + far_ + mapped_);
        c_ = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(chunk_end) - c_bytes) / 256 * 256);
        band_ = c_ - band_bytes;
        c_bytes_ = c_bytes;
        after_bytes_ = size_t(chunk_end - (c_ + c_bytes));
        return true;
    }

    void release() noexcept {
        if (fallback_ != nullptr) (void)cudaFree(fallback_);
        fallback_ = nullptr;
        if (range_ == 0) return;
        const Api& f = api();
        if (is_mapped_) (void)f.unmap(range_ + far_, mapped_);
        if (created_) (void)f.release(handle_);
        (void)f.free_range(range_, reserved_);
        range_ = 0;
        is_mapped_ = created_ = false;
    }

    void swap(FencedDeviceBuffer& o) noexcept {
        std::swap(range_, o.range_);
        std::swap(reserved_, o.reserved_);
        std::swap(far_, o.far_);
        std::swap(mapped_, o.mapped_);
        std::swap(handle_, o.handle_);
        std::swap(created_, o.created_);
        std::swap(is_mapped_, o.is_mapped_);
        std::swap(fallback_, o.fallback_);
        std::swap(band_, o.band_);
        std::swap(c_, o.c_);
        std::swap(c_bytes_, o.c_bytes_);
        std::swap(after_bytes_, o.after_bytes_);
        std::swap(fallback_reason_, o.fallback_reason_);
    }

    CUdeviceptr range_ = 0;
    size_t reserved_ = 0, far_ = 0, mapped_ = 0;
    CUmemGenericAllocationHandle handle_ = 0;
    bool created_ = false, is_mapped_ = false;
    void* fallback_ = nullptr;
    unsigned char* band_ = nullptr;
    unsigned char* c_ = nullptr;
    size_t c_bytes_ = 0, after_bytes_ = 0;
    std::string fallback_reason_;
};

}  // namespace kreg
