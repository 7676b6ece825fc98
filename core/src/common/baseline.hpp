// A sweep's baseline: the kernel each row's speed-up is relative to. Either one kernel for every dtype
// ("baseline": "cublas_sgemm") or one per dtype ({"bf16": "cublas_bf16", "tf32": "cublas_tf32"}), since a
// bf16 kernel is only fairly compared with a bf16 reference. Rows of a dtype with no baseline get no
// speed-up. Parsed from configs (config/sweep_parse.cpp) and --baseline (config/overrides.cpp); written
// to the report's "baseline" by to_json().
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/types.hpp"

namespace kreg {

class Baseline {
public:
    Baseline() = default;  // none: no row gets a speed-up
    static Baseline same_for_all(std::string kernel);
    // An empty map is none.
    static Baseline per_dtype(std::map<DType, std::string> kernels);

    bool none() const { return !all_ && by_dtype_.empty(); }
    explicit operator bool() const { return !none(); }
    bool is_same_for_all() const { return all_.has_value(); }

    // The kernel rows of dtype d are compared with, or nullptr when d has none.
    const std::string* kernel_for(DType d) const;
    // Every kernel named, each once (dtype order for the per-dtype form).
    std::vector<std::string> kernels() const;
    // The per-dtype entries; empty for the same-for-all form.
    const std::map<DType, std::string>& per_dtype_kernels() const { return by_dtype_; }

    // For a sweep over dtypes: the same-for-all form when every one of them has one and the same kernel
    // (the rows cannot tell the difference, and the report then keeps its plain "baseline": "name").
    Baseline simplified_for(const std::vector<DType>& dtypes) const;

    // null, "name", or {"<dtype>": "name", ...}.
    nlohmann::json to_json() const;
    // "name", "fp32=a,bf16=b" (the --baseline syntax), or "none".
    std::string to_text() const;

    friend bool operator==(const Baseline& a, const Baseline& b) {
        return a.all_ == b.all_ && a.by_dtype_ == b.by_dtype_;
    }
    friend bool operator!=(const Baseline& a, const Baseline& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const Baseline& b) { return os << b.to_text(); }

private:
    std::optional<std::string> all_;
    std::map<DType, std::string> by_dtype_;
};

// The cuBLAS kernel a dtype's rows are compared with by default: fp32 cublas_sgemm, tf32 cublas_tf32,
// bf16 cublas_bf16; nullptr for a dtype without one (fp16).
const char* default_baseline_kernel(DType d);

// For each of dtypes, its default_baseline_kernel() where that kernel is among kernels (the sweep's
// resolved kernel names); none when no dtype has one.
Baseline default_baseline(const std::vector<DType>& dtypes, const std::vector<std::string>& kernels);

}  // namespace kreg
