#include "sweep/plan.hpp"

namespace kreg {

std::vector<PlannedJob> plan_sweep(const SweepConfig& config, const Registry& registry,
                                   const std::vector<std::string>& kernel_names) {
    std::vector<PlannedJob> plan;
    uint64_t id = 0;
    for (const auto& name : kernel_names) {
        const RegistryEntry* entry = registry.find(name);
        if (entry == nullptr) continue;  // resolve_kernel_patterns only returns registered names
        for (DType dtype : config.dtypes) {
            for (const Shape& shape : config.shapes) {
                PlannedJob p;
                p.job.id = id++;
                p.job.kernel = name;
                p.job.plugin_path = entry->plugin_path;
                p.job.shape = shape;
                p.job.dtype = dtype;
                p.job.seed = config.seed;
                p.job.settings = config.settings;
                p.backend = entry->kernel.backend;
                p.plugin_name = entry->plugin_name;
                if (auto why = why_unsupported(entry->kernel, shape, dtype))
                    p.skip_reason = *why;
                else if (!entry->kernel.unavailable_reason.empty())
                    p.skip_reason = entry->kernel.unavailable_reason;
                plan.push_back(std::move(p));
            }
        }
    }
    return plan;
}

Record skipped_record(const PlannedJob& planned) {
    Record r = record_for(planned.job, RowStatus::skipped, planned.skip_reason.value_or(""));
    r.backend = planned.backend;
    r.plugin = planned.plugin_name;
    return r;
}

}  // namespace kreg
