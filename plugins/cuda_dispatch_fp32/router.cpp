#include "router.hpp"

#include "dispatch_table.hpp"

#include <kreg/kernel.hpp>

#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#if KREG_DISPATCH_EMBEDS_TABLE
#include "cuda_dispatch_fp32_embedded_table.hpp"
#endif

namespace kreg_dispatch_fp32 {

namespace {

constexpr Variant kVariants[] = {Variant::warptiled, Variant::splitk, Variant::small_tile, Variant::gemv};

std::optional<Variant> variant_of(const std::string& name) {
    for (Variant v : kVariants)
        if (name == variant_name(v)) return v;
    return std::nullopt;
}

// The table this call of the plugin reads, if any: the override file, else the embedded table.
std::optional<kreg::dispatch::Table> active_table() {
    const char* override_path = std::getenv(kreg::dispatch::kTableOverrideVariable);
    const bool overridden = override_path != nullptr && *override_path != '\0';
#if KREG_DISPATCH_EMBEDS_TABLE
    (void)overridden;
    return kreg::dispatch::load_active_table(kreg::dispatch::embedded::kTableJson,
                                             kreg::dispatch::embedded::kTableOrigin);
#else
    if (!overridden) return std::nullopt;
    return kreg::dispatch::load_active_table("", "");  // reads the override file
#endif
}

}  // namespace

const char* variant_name(Variant v) {
    switch (v) {
        case Variant::warptiled:
            return "cuda_09_warptiled";
        case Variant::splitk:
            return "cuda_splitk";
        case Variant::small_tile:
            return "cuda_small_tile";
        case Variant::gemv:
            return "cuda_gemv";
    }
    return "?";
}

std::string variant_names() {
    std::string out;
    for (Variant v : kVariants) out += (out.empty() ? "" : ", ") + std::string(variant_name(v));
    return out;
}

Route builtin_route(int64_t m, int64_t n, int64_t /*k*/) {
    if (n == 1 || m <= 8) return {Variant::gemv, "built-in fallback: m <= 8 or n = 1"};
    return {Variant::splitk, "built-in fallback: m > 8 and n > 1"};
}

std::string embedded_table_origin() {
#if KREG_DISPATCH_EMBEDS_TABLE
    return kreg::dispatch::embedded::kTableOrigin;
#else
    return "";
#endif
}

struct Router::Impl {
    kreg::dispatch::Entry entry;
    std::vector<Variant> rule_variants;
    Variant fallback_variant = Variant::splitk;
};

Router::Router(const std::string& device) {
    std::optional<kreg::dispatch::Table> table;
    try {
        table = active_table();
    } catch (const kreg::dispatch::TableError& e) {
        throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, std::string("cuda_dispatch_fp32: ") + e.what());
    }
    if (!table) {
        table_description_ =
            "no table (configs/dispatch/h200.json was absent when this plugin was built and KREG_DISPATCH_TABLE is "
            "unset): built-in fallback for every shape";
        return;
    }
    const kreg::dispatch::Entry* entry = table->find(device, "fp32");
    if (entry == nullptr) {
        table_description_ = table->origin + " has no entry for " + device + "/fp32: built-in fallback for every shape";
        return;
    }
    size_t entry_index = 0;
    while (&table->entries[entry_index] != entry) ++entry_index;
    const std::string path = "/tables/" + std::to_string(entry_index);
    auto routable = [&](const std::string& kernel, const std::string& where) {
        const std::optional<Variant> v = variant_of(kernel);
        if (!v)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                              "cuda_dispatch_fp32: " + table->origin + ": " + where + ": \"" + kernel +
                                  "\" is not a kernel this plugin runs (it runs " + variant_names() + ")");
        return *v;
    };
    auto impl = std::make_unique<Impl>();
    impl->entry = *entry;
    impl->fallback_variant = routable(entry->fallback, path + "/fallback");
    for (size_t i = 0; i < entry->rules.size(); ++i)
        impl->rule_variants.push_back(
            routable(entry->rules[i].kernel, path + "/rules/" + std::to_string(i) + "/kernel"));
    table_description_ = table->origin + ", entry " + device + "/fp32 (" + std::to_string(entry->rules.size()) +
                         " rules, fallback " + entry->fallback + ")";
    impl_ = impl.release();
}

Router::~Router() { delete impl_; }

Route Router::route(int64_t m, int64_t n, int64_t k) const {
    if (impl_ == nullptr) return builtin_route(m, n, k);
    const kreg::dispatch::Choice choice = kreg::dispatch::choose(impl_->entry, m, n, k);
    const Variant v =
        choice.rule_index >= 0 ? impl_->rule_variants[static_cast<size_t>(choice.rule_index)] : impl_->fallback_variant;
    return {v, choice.reason};
}

}  // namespace kreg_dispatch_fp32
