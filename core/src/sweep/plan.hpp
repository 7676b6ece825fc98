// A sweep plan: the jobs a config asks for, in order, with the ones that cannot run on this machine
// already decided (skipped, with the reason) so no worker is started for them.
#pragma once

#include "common/job.hpp"
#include "config/sweep_config.hpp"
#include "plugin/registry.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kreg {

struct PlannedJob {
    Job job;
    Backend backend = Backend::cpu;
    std::string plugin_name;
    std::optional<std::string> skip_reason;
};

// kernel_names are already resolved against the registry (resolve_kernel_patterns). Order: kernel,
// then dtype, then shape, so that consecutive jobs share a plugin and a worker.
std::vector<PlannedJob> plan_sweep(const SweepConfig& config, const Registry& registry,
                                   const std::vector<std::string>& kernel_names);

// The row a skipped job gets.
Record skipped_record(const PlannedJob& planned);

// One line saying why nothing of this plan can be measured on this machine ("no CUDA device (...): the
// 154 CUDA rows of this sweep cannot run here"), or nullopt when some job runs (or the plan is empty).
// A sweep that measures nothing is an error: a CI job must not pass on a machine that cannot run it.
std::optional<std::string> nothing_measurable(const std::vector<PlannedJob>& plan);

}  // namespace kreg
