#include "plugin/kernel_meta.hpp"

#include "common/operation_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace kreg {

void to_json(nlohmann::json& j, const KernelMeta& k) {
    std::vector<std::string> dtypes;
    for (DType d : k.dtypes) dtypes.emplace_back(to_string(d));
    j = {{"name", k.name},
         {"description", k.description},
         {"operation", k.operation},
         {"backend", to_string(k.backend)},
         {"dtypes", dtypes},
         {"min_compute_capability", k.min_compute_capability},
         {"m_multiple", k.m_multiple},
         {"n_multiple", k.n_multiple},
         {"k_multiple", k.k_multiple},
         {"max_m", k.max_m},
         {"max_n", k.max_n},
         {"max_k", k.max_k},
         {"honours_alpha_beta", k.honours_alpha_beta},
         {"honours_leading_dims", k.honours_leading_dims},
         {"has_traffic_model", k.has_traffic_model},
         {"block_multiple", k.block_multiple},
         {"max_block", k.max_block},
         {"unavailable_reason", k.unavailable_reason}};
}

void from_json(const nlohmann::json& j, KernelMeta& k) {
    j.at("name").get_to(k.name);
    j.at("description").get_to(k.description);
    j.at("operation").get_to(k.operation);
    const auto backend = parse_backend(j.at("backend").get<std::string>());
    if (!backend) throw std::runtime_error("unknown backend " + j.at("backend").dump());
    k.backend = *backend;
    k.dtypes.clear();
    for (const auto& d : j.at("dtypes")) {
        const auto dtype = parse_dtype(d.get<std::string>());
        if (!dtype) throw std::runtime_error("unknown dtype " + d.dump());
        k.dtypes.push_back(*dtype);
    }
    j.at("min_compute_capability").get_to(k.min_compute_capability);
    j.at("m_multiple").get_to(k.m_multiple);
    j.at("n_multiple").get_to(k.n_multiple);
    j.at("k_multiple").get_to(k.k_multiple);
    j.at("max_m").get_to(k.max_m);
    j.at("max_n").get_to(k.max_n);
    j.at("max_k").get_to(k.max_k);
    j.at("honours_alpha_beta").get_to(k.honours_alpha_beta);
    j.at("honours_leading_dims").get_to(k.honours_leading_dims);
    j.at("has_traffic_model").get_to(k.has_traffic_model);
    // Since ABI 1.1; absent from metadata written before it.
    k.block_multiple = j.value("block_multiple", int64_t{1});
    k.max_block = j.value("max_block", int64_t{0});
    j.at("unavailable_reason").get_to(k.unavailable_reason);
}

void to_json(nlohmann::json& j, const PluginInfo& p) {
    j = {{"path", p.path},           {"name", p.name},     {"version", p.version}, {"abi_major", p.abi_major},
         {"abi_minor", p.abi_minor}, {"sha256", p.sha256}, {"kernels", p.kernels}, {"error", p.error}};
}

void from_json(const nlohmann::json& j, PluginInfo& p) {
    j.at("path").get_to(p.path);
    j.at("name").get_to(p.name);
    j.at("version").get_to(p.version);
    j.at("abi_major").get_to(p.abi_major);
    j.at("abi_minor").get_to(p.abi_minor);
    j.at("sha256").get_to(p.sha256);
    j.at("kernels").get_to(p.kernels);
    j.at("error").get_to(p.error);
}

std::optional<std::string> why_unsupported(const KernelMeta& k, const Shape& shape, DType dtype) {
    if (std::find(k.dtypes.begin(), k.dtypes.end(), dtype) == k.dtypes.end())
        return "dtype " + std::string(to_string(dtype)) + " not supported (kernel supports " +
               describe_dtypes(k.dtypes) + ")";
    struct Limit {
        const char* name;
        int64_t value, multiple, max;
    };
    const Limit limits[] = {{"M", shape.m, k.m_multiple, k.max_m},
                            {"N", shape.n, k.n_multiple, k.max_n},
                            {"K", shape.k, k.k_multiple, k.max_k}};
    // A per-call parameter (operations.def): the operation's own constraint (it divides the dimensions its row
    // lists: whole tiles), then the kernel's on the block.
    if (shape.block > 0) {
        const std::optional<Operation> op = parse_operation(k.operation);
        const ShapeKeyDef* param = op ? operation_row(*op).param() : nullptr;
        const auto divides = [&](Dim d) {
            return param == nullptr || param->divides[0] == d || param->divides[1] == d;
        };
        const Dim which[2] = {Dim::m, Dim::n};
        for (int i = 0; i < 2; ++i)
            if (divides(which[i]) && limits[i].value % shape.block != 0)
                return std::string(limits[i].name) + "=" + std::to_string(limits[i].value) +
                       " is not a multiple of block=" + std::to_string(shape.block) + " (" + k.operation +
                       " works on whole block x block tiles)";
        if (k.block_multiple > 1 && shape.block % k.block_multiple != 0)
            return "block=" + std::to_string(shape.block) + " is not a multiple of " +
                   std::to_string(k.block_multiple) + " (declared by the kernel)";
        if (k.max_block > 0 && shape.block > k.max_block)
            return "block=" + std::to_string(shape.block) + " exceeds the kernel's maximum " +
                   std::to_string(k.max_block);
    }
    for (const Limit& d : limits) {
        if (d.value == 0) continue;  // an operation without the dimension (a transpose's K)
        if (d.multiple > 1 && d.value % d.multiple != 0)
            return std::string(d.name) + "=" + std::to_string(d.value) + " is not a multiple of " +
                   std::to_string(d.multiple) + " (declared by the kernel)";
        if (d.max > 0 && d.value > d.max)
            return std::string(d.name) + "=" + std::to_string(d.value) + " exceeds the kernel's maximum " +
                   std::to_string(d.max);
    }
    return std::nullopt;
}

std::string describe_dtypes(const std::vector<DType>& dtypes) {
    std::string out;
    for (DType d : dtypes) {
        if (!out.empty()) out += ",";
        out += to_string(d);
    }
    return out;
}

}  // namespace kreg
