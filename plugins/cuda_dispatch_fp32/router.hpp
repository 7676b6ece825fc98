// Which of its kernels cuda_dispatch_fp32 runs for a call: the dispatch table's choice for the device and the shape,
// or the built-in fallback where there is no table or no entry for the device. Host code only (nlohmann/json stays
// out of nvcc); router.cpp implements it.
#pragma once

#include <cstdint>
#include <string>

namespace kreg_dispatch_fp32 {

// The kernels this plugin contains (compiled in from their own headers), by registered name.
enum class Variant { warptiled, splitk, small_tile, gemv };
const char* variant_name(Variant v);
// "cuda_09_warptiled, cuda_splitk, cuda_small_tile, cuda_gemv", for messages.
std::string variant_names();

struct Route {
    Variant variant;
    std::string reason;  // the table's rule or fallback, or why the built-in fallback decided
};

// The fallback used without a table entry for the device, documented in the README: m <= 8 or n = 1 -> cuda_gemv
// (memory bound: B or A read once), else cuda_splitk (step 9's tiles, K split where they do not fill the GPU).
Route builtin_route(int64_t m, int64_t n, int64_t k);

class Router {
public:
    // Loads the table (KREG_DISPATCH_TABLE, else the embedded one, else none) and takes its entry for
    // (device, "fp32"). Throws kreg::Error (invalid argument) naming the table, the JSON path and the reason for a
    // malformed table or a rule naming a kernel this plugin cannot run.
    explicit Router(const std::string& device);
    ~Router();
    Router(const Router&) = delete;
    Router& operator=(const Router&) = delete;

    Route route(int64_t m, int64_t n, int64_t k) const;
    // Which table decides, in words: "embedded configs/dispatch/h200.json (sha256 ...), entry NVIDIA H200/fp32",
    // or why none does.
    const std::string& table_description() const { return table_description_; }

private:
    struct Impl;
    Impl* impl_ = nullptr;
    std::string table_description_;
};

// Whether this build embeds a table, and which: for the kernel's description.
std::string embedded_table_origin();

}  // namespace kreg_dispatch_fp32
