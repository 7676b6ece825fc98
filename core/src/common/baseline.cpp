#include "common/baseline.hpp"

#include <algorithm>

namespace kreg {

Baseline Baseline::same_for_all(std::string kernel) {
    Baseline b;
    b.all_ = std::move(kernel);
    return b;
}

Baseline Baseline::per_dtype(std::map<DType, std::string> kernels) {
    Baseline b;
    b.by_dtype_ = std::move(kernels);
    return b;
}

const std::string* Baseline::kernel_for(DType d) const {
    if (all_) return &*all_;
    const auto it = by_dtype_.find(d);
    return it == by_dtype_.end() ? nullptr : &it->second;
}

std::vector<std::string> Baseline::kernels() const {
    if (all_) return {*all_};
    std::vector<std::string> out;
    for (const auto& [dtype, kernel] : by_dtype_)
        if (std::find(out.begin(), out.end(), kernel) == out.end()) out.push_back(kernel);
    return out;
}

Baseline Baseline::simplified_for(const std::vector<DType>& dtypes) const {
    if (all_ || dtypes.empty()) return *this;
    const std::string* first = kernel_for(dtypes.front());
    if (!first) return *this;
    for (DType d : dtypes) {
        const std::string* k = kernel_for(d);
        if (!k || *k != *first) return *this;
    }
    return same_for_all(*first);
}

nlohmann::json Baseline::to_json() const {
    if (all_) return *all_;
    if (by_dtype_.empty()) return nullptr;
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [dtype, kernel] : by_dtype_) j[std::string(to_string(dtype))] = kernel;
    return j;
}

std::string Baseline::to_text() const {
    if (all_) return *all_;
    if (by_dtype_.empty()) return "none";
    std::string out;
    for (const auto& [dtype, kernel] : by_dtype_) {
        if (!out.empty()) out += ',';
        out += std::string(to_string(dtype)) + "=" + kernel;
    }
    return out;
}

const char* default_baseline_kernel(DType d) {
    switch (d) {
        case DType::fp32:
            return "cublas_sgemm";
        case DType::tf32:
            return "cublas_tf32";
        case DType::bf16:
            return "cublas_bf16";
        case DType::fp16:
            return nullptr;  // no cuBLAS fp16 reference kernel is registered
    }
    return nullptr;
}

Baseline default_baseline(const std::vector<DType>& dtypes, const std::vector<std::string>& kernels) {
    std::map<DType, std::string> chosen;
    for (DType d : dtypes) {
        const char* k = default_baseline_kernel(d);
        if (k && std::find(kernels.begin(), kernels.end(), k) != kernels.end()) chosen[d] = k;
    }
    return Baseline::per_dtype(std::move(chosen));
}

}  // namespace kreg
