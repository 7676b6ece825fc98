#include "cuda/device_facts.hpp"

#include "cuda/cuda_check.hpp"
#include "cuda/error_causes.hpp"
#include "cuda/peaks.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <string>

namespace kreg {
namespace {

// "GPU-" then the 16 bytes as 8-4-4-4-12 lowercase hex, as nvidia-smi -L prints it.
std::string format_uuid(const cudaUUID_t& uuid) {
    std::string s = "GPU-";
    char hex[3];
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
        s += hex;
    }
    return s;
}

// CUDA encodes versions as 1000*major + 10*minor (13000 = 13.0).
std::string cuda_version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

int attribute(cudaDeviceAttr attr, int device) {
    int value = 0;
    KREG_RUNNER_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
    return value;
}

std::string cc_string(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

}  // namespace

nlohmann::json describe_device(int device) {
    cudaDeviceProp p{};
    KREG_RUNNER_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    const int sm_clock_khz = attribute(cudaDevAttrClockRate, device);
    const int memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device);

    int driver = 0, runtime = 0;
    KREG_RUNNER_CUDA_CHECK(cudaDriverGetVersion(&driver));
    KREG_RUNNER_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));

    char pci[32];
    std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);

    nlohmann::json j;
    j["ordinal"] = device;
    j["name"] = std::string(p.name);
    j["uuid"] = format_uuid(p.uuid);
    j["pci_bus_id"] = pci;
    j["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
    j["cc_major"] = p.major;
    j["cc_minor"] = p.minor;
    j["sm_count"] = p.multiProcessorCount;
    j["l2_bytes"] = p.l2CacheSize;
    j["persisting_l2_max_bytes"] = p.persistingL2CacheMaxSize;
    j["shared_per_block_bytes"] = p.sharedMemPerBlock;
    j["shared_per_block_optin_bytes"] = p.sharedMemPerBlockOptin;
    j["shared_per_sm_bytes"] = p.sharedMemPerMultiprocessor;
    j["registers_per_sm"] = p.regsPerMultiprocessor;
    j["max_threads_per_sm"] = p.maxThreadsPerMultiProcessor;
    j["memory_bytes"] = p.totalGlobalMem;
    j["memory_bus_bits"] = p.memoryBusWidth;
    j["sm_clock_khz"] = sm_clock_khz;
    j["memory_clock_khz"] = memory_clock_khz;
    j["ecc_enabled"] = p.ECCEnabled != 0;
    j["driver_version"] = cuda_version_string(driver);
    j["runtime_version"] = cuda_version_string(runtime);
    j["peaks"] = computed_peaks(p.major, p.minor, p.multiProcessorCount, double(sm_clock_khz), double(memory_clock_khz),
                                p.memoryBusWidth);
    return j;
}

std::optional<std::string> why_cannot_run(int device, int min_compute_capability) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return no_cuda_device_reason("cudaGetDeviceCount", cudaGetErrorName(e));
    }
    if (count <= 0) return std::string("no CUDA device: no NVIDIA GPU is visible (cudaGetDeviceCount: 0 devices)");
    if (device < 0 || device >= count)
        return "device " + std::to_string(device) + " requested but only " + std::to_string(count) + " present";
    if (min_compute_capability > 0) {
        int major = 0, minor = 0;
        const cudaError_t e1 = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
        const cudaError_t e2 = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
        if (e1 != cudaSuccess || e2 != cudaSuccess) {
            const cudaError_t bad = e1 != cudaSuccess ? e1 : e2;
            (void)cudaGetLastError();
            return "cannot read the compute capability of device " + std::to_string(device) + " (" +
                   cudaGetErrorName(bad) + ")";
        }
        const int has = major * 10 + minor;
        if (has < min_compute_capability)
            return "needs compute capability " + cc_string(min_compute_capability) + ", device has " + cc_string(has);
    }
    return std::nullopt;
}

int cuda_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

}  // namespace kreg
