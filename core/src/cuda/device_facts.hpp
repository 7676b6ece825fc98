// What the runner records about a CUDA device, and whether a kernel can run on it.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace kreg {

// Facts of one device, for the report header and the roofline:
// {"ordinal", "name", "uuid" ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"), "pci_bus_id",
//  "compute_capability" ("9.0"), "cc_major", "cc_minor", "sm_count", "l2_bytes", "persisting_l2_max_bytes",
//  "shared_per_block_bytes", "shared_per_block_optin_bytes", "shared_per_sm_bytes", "registers_per_sm",
//  "max_threads_per_sm", "memory_bytes", "memory_bus_bits", "sm_clock_khz", "memory_clock_khz",
//  "ecc_enabled", "driver_version", "runtime_version" (both "major.minor"),
//  "peaks": computed_peaks(...) (see cuda/peaks.hpp)}.
// Clocks come from cudaDeviceGetAttribute: CUDA 13 removed clockRate and memoryClockRate from
// cudaDeviceProp. No cuBLAS version: the runner does not link cuBLAS; the cuBLAS plugin's version says which
// cuBLAS it runs on ("1.0.0+cublas.13.1.0", also in the ceilings' "plugin"). Throws CudaError if the device
// cannot be queried.
nlohmann::json describe_device(int device);

// Why a kernel needing min_compute_capability (major*10+minor; 0 for none) cannot run on device, or
// nullopt if it can: "no CUDA device: <plain cause> (cudaGetDeviceCount: cudaErrorNoDevice)" (error_causes.hpp),
// "device 1 requested but only 1 present", "needs compute capability 9.0, device has 8.0".
// Never throws for a missing device; the runner turns the reason into a skipped row.
std::optional<std::string> why_cannot_run(int device, int min_compute_capability);

// How many CUDA devices this process sees (after CUDA_VISIBLE_DEVICES); 0 when none or no driver.
int cuda_device_count();

}  // namespace kreg
