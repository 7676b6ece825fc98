#include "common/gpu_info.hpp"

#include "common/field_table.hpp"

namespace kreg {
namespace {

const auto kPluginFields =
    std::make_tuple(field("name", &CeilingPlugin::name), field("version", &CeilingPlugin::version),
                    field("path", &CeilingPlugin::path), field("sha256", &CeilingPlugin::sha256));

const auto kCeilingFields = std::make_tuple(
    field("dram_copy_gbps", &GpuCeilings::dram_copy_gbps, Absent::omit),
    field("sgemm_tflops", &GpuCeilings::sgemm_tflops), field("tf32_tflops", &GpuCeilings::tf32_tflops),
    field("bf16_tflops", &GpuCeilings::bf16_tflops), field("unavailable", &GpuCeilings::unavailable, Absent::omit),
    field("size", &GpuCeilings::size, Absent::omit), field("copy_bytes", &GpuCeilings::copy_bytes, Absent::omit),
    field("repeats", &GpuCeilings::repeats, Absent::omit), field("seconds", &GpuCeilings::seconds, Absent::omit),
    field("plugin", &GpuCeilings::plugin, Absent::omit));

const auto kGpuFields = std::make_tuple(field("facts", &GpuInfo::facts), field("ceilings", &GpuInfo::ceilings),
                                        field(kCeilingsUnavailableKey, &GpuInfo::ceilings_unavailable, Absent::omit));

}  // namespace

void to_json(nlohmann::json& j, const CeilingPlugin& p) { j = fields_to_json(p, kPluginFields); }
void from_json(const nlohmann::json& j, CeilingPlugin& p) { fields_from_json(j, p, kPluginFields); }
void to_json(nlohmann::json& j, const GpuCeilings& c) { j = fields_to_json(c, kCeilingFields); }
void from_json(const nlohmann::json& j, GpuCeilings& c) { fields_from_json(j, c, kCeilingFields); }
void to_json(nlohmann::json& j, const GpuInfo& g) { j = fields_to_json(g, kGpuFields); }

void from_json(const nlohmann::json& j, GpuInfo& g) {
    fields_from_json(j, g, kGpuFields);
    if (!g.facts.is_null() && !g.facts.is_object())
        throw std::invalid_argument("/facts: expected an object, found " + g.facts.dump());
}

std::string GpuInfo::name() const {
    if (facts.is_object())
        if (const auto it = facts.find("name"); it != facts.end() && it->is_string()) return it->get<std::string>();
    return "?";
}

std::optional<std::string> GpuInfo::uuid() const {
    if (facts.is_object())
        if (const auto it = facts.find("uuid"); it != facts.end() && it->is_string()) return it->get<std::string>();
    return std::nullopt;
}

std::optional<double> GpuInfo::dram_copy_gbps() const { return ceilings ? ceilings->dram_copy_gbps : std::nullopt; }

std::vector<std::string> gpu_info_keys() { return field_keys(kGpuFields); }
std::vector<std::string> gpu_ceilings_keys() { return field_keys(kCeilingFields); }
std::vector<std::string> ceiling_plugin_keys() { return field_keys(kPluginFields); }

}  // namespace kreg
