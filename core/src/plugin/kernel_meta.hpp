// What the runner knows about a plugin and its kernels, copied out of the plugin's descriptor so it
// can travel from the worker that read it to the parent (which never loads plugins itself).
#pragma once

#include "common/types.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

struct KernelMeta {
    std::string name;
    std::string description;
    std::string operation = "gemm";
    Backend backend = Backend::cpu;
    std::vector<DType> dtypes;
    int min_compute_capability = 0;
    int64_t m_multiple = 1, n_multiple = 1, k_multiple = 1;
    int64_t max_m = 0, max_n = 0, max_k = 0;
    bool honours_alpha_beta = false;
    bool honours_leading_dims = false;
    bool has_traffic_model = false;
    int64_t block_multiple = 1, max_block = 0;  // an operation with a per-call block: the blocks the kernel accepts
    std::string unavailable_reason;             // empty when it can run on this machine
};

struct PluginInfo {
    std::string path;
    std::string name;
    std::string version;
    int abi_major = 0, abi_minor = 0;
    std::string sha256;
    std::vector<KernelMeta> kernels;
    std::string error;  // why the plugin could not be used; empty when it loaded
    // How the loading worker ended when it did, as the parent saw it (never sent by a worker, not in the JSON):
    // what a grader's load outcome is derived from, not error's text.
    EndCause load_end = EndCause::none;
    std::optional<std::string> load_signal;
};

void to_json(nlohmann::json& j, const KernelMeta& k);
void from_json(const nlohmann::json& j, KernelMeta& k);
void to_json(nlohmann::json& j, const PluginInfo& p);
void from_json(const nlohmann::json& j, PluginInfo& p);

// Reason a kernel cannot run this (shape, dtype), or nullopt. Device availability is separate.
std::optional<std::string> why_unsupported(const KernelMeta& k, const Shape& shape, DType dtype);

std::string describe_dtypes(const std::vector<DType>& dtypes);  // "fp32,bf16"

}  // namespace kreg
