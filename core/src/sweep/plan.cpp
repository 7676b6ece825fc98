#include "sweep/plan.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace kreg {

std::vector<PlannedJob> plan_sweep(const SweepConfig& config, const Registry& registry,
                                   const std::vector<std::string>& kernel_names) {
    std::vector<PlannedJob> plan;
    uint64_t id = 0;
    for (const auto& name : kernel_names) {
        const RegistryEntry* entry = registry.find(name);
        if (entry == nullptr) continue;  // resolve_kernel_patterns only returns registered names
        // A sweep measures one operation: a glob such as cuda_* must not pull in the kernels of another
        // (nor of an operation this runner does not know).
        if (entry->kernel.operation != to_string(config.operation)) continue;
        for (DType dtype : config.dtypes) {
            for (const Shape& shape : config.shapes) {
                PlannedJob p;
                p.job.id = id++;
                p.job.kernel = name;
                p.job.plugin_path = entry->plugin_path;
                p.job.operation = config.operation;
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

std::optional<std::string> nothing_measurable(const std::vector<PlannedJob>& plan) {
    if (plan.empty()) return std::nullopt;
    std::map<std::string, size_t> rows_per_reason;
    std::set<Backend> backends;
    for (const auto& p : plan) {
        if (!p.skip_reason) return std::nullopt;
        ++rows_per_reason[*p.skip_reason];
        backends.insert(p.backend);
    }
    const std::string rows =
        backends.size() == 1 ? (*backends.begin() == Backend::cuda ? " CUDA rows" : " CPU rows") : " rows";
    const std::string cannot = std::to_string(plan.size()) + rows + " of this sweep cannot run here";
    if (rows_per_reason.size() == 1) return rows_per_reason.begin()->first + ": the " + cannot;
    // Several reasons (shape limits differ per shape): the most frequent few, so the line stays one line.
    std::vector<std::pair<std::string, size_t>> reasons(rows_per_reason.begin(), rows_per_reason.end());
    std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string line = "nothing can be measured here: all " + cannot + " (";
    const size_t shown = std::min<size_t>(reasons.size(), 3);
    for (size_t i = 0; i < shown; ++i)
        line += (i ? "; " : "") + reasons[i].first + ": " + std::to_string(reasons[i].second);
    if (reasons.size() > shown) line += "; " + std::to_string(reasons.size() - shown) + " other reasons";
    return line + ")";
}

}  // namespace kreg
