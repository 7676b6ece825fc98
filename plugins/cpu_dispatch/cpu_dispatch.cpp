// cpu_dispatch: one GEMM kernel that routes each call to the CPU kernel a dispatch table chose for its shape.
//
// The table (docs/DISPATCH.md) is made by `runner tune` from a verified CPU report and compiled in (table.json,
// embedded by kreg_embed_dispatch_table), so the plugin opens no file inside the grader's sandbox;
// KREG_DISPATCH_TABLE=<file> replaces it for tests and for engineers trying a new table. The kernels it routes
// to are compiled into this .so from their own sources (cpu_naive/naive_gemm.cpp, cpu_blocked/blocked_gemm.cpp):
// no dlopen of sibling plugins, no second copy of their code. Each row's extra.variant names the kernel, the
// rule that chose it and the table.
//
// Fallback: the table's entry for ("cpu", dtype) answers every shape (its own fallback where no rule matches);
// with no such entry, kBuiltInFallback runs and the row says so.
#include "../cpu_blocked/blocked_gemm.hpp"
#include "../cpu_naive/naive_gemm.hpp"
#include "cpu_dispatch_embedded_table.hpp"
#include "dispatch_table.hpp"

#include <kreg/kernel.hpp>

#include <string>

namespace {

struct Variant {
    const char* name;
    void (*run)(const kreg_gemm_args& args);
};
// Every kernel this plugin can route to, by its registered name (the name a report and a table use).
constexpr Variant kVariants[] = {{"cpu_naive", &kreg::cpu_naive::run}, {"cpu_blocked", &kreg::cpu_blocked::run}};
// Used for a dtype the table has no "cpu" entry for: the kernel that is never slow by much.
constexpr const char* kBuiltInFallback = "cpu_blocked";
constexpr const char* kDevice = "cpu";  // the device name `runner tune` gives CPU rows

const Variant* find_variant(const std::string& name) {
    for (const Variant& v : kVariants)
        if (name == v.name) return &v;
    return nullptr;
}

// A table may name only kernels compiled in here; checked once, when the instance is made.
void check_kernels_known(const kreg::dispatch::Table& table) {
    std::string known;
    for (const Variant& v : kVariants) known += std::string(known.empty() ? "" : ", ") + v.name;
    for (const auto& entry : table.entries) {
        if (entry.device != kDevice) continue;  // other devices' entries are for other dispatch plugins
        std::vector<std::string> names = {entry.fallback};
        for (const auto& rule : entry.rules) names.push_back(rule.kernel);
        for (const std::string& name : names)
            if (find_variant(name) == nullptr)
                throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                                  table.origin + ": the cpu/" + entry.dtype + " entry routes to '" + name +
                                      "', which cpu_dispatch does not contain (" + known + ")");
    }
}

std::string dtype_name(kreg_dtype dtype) {
    switch (dtype) {
        case KREG_DTYPE_FP32:
            return "fp32";
        case KREG_DTYPE_TF32:
            return "tf32";
        case KREG_DTYPE_BF16:
            return "bf16";
        case KREG_DTYPE_FP16:
            return "fp16";
    }
    return "dtype " + std::to_string(int(dtype));
}

class CpuDispatch final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "cpu_dispatch";
        s.description = "routes each shape to the CPU kernel its dispatch table (runner tune) measured fastest";
        s.backend = KREG_BACKEND_CPU;
        // Every kernel it routes to honours both, so the dispatcher does.
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        return s;
    }

    CpuDispatch()
        : table_(kreg::dispatch::load_active_table(kreg::dispatch::embedded::kTableJson,
                                                   kreg::dispatch::embedded::kTableOrigin)) {
        check_kernels_known(table_);
    }

    void run_gemm(const kreg_gemm_args& args) override { choose(args).first->run(args); }

    std::string describe_variant(const kreg_gemm_args& args) override {
        const auto [variant, why] = choose(args);
        return std::string(variant->name) + ": " + why + " of " + table_.origin;
    }

private:
    // The variant for args and why, from args alone (describe_variant and run_gemm agree by construction).
    std::pair<const Variant*, std::string> choose(const kreg_gemm_args& args) const {
        const kreg::dispatch::Entry* entry = table_.find(kDevice, dtype_name(args.dtype));
        if (entry == nullptr)
            return {find_variant(kBuiltInFallback),
                    std::string("built-in fallback: no cpu/") + dtype_name(args.dtype) + " entry"};
        const kreg::dispatch::Choice choice = kreg::dispatch::choose(*entry, args.m, args.n, args.k);
        return {find_variant(choice.kernel), choice.reason};
    }

    kreg::dispatch::Table table_;
};

}  // namespace

KREG_PLUGIN("cpu_dispatch", "1.0.0", CpuDispatch)
