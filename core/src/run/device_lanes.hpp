// runner --devices: which GPUs a sweep runs on at once, and what each one is (its UUID, facts and
// measured ceilings), read in workers so the runner itself never opens a CUDA context.
#pragma once

#include "common/gpu_info.hpp"
#include "run/sweep_request.hpp"
#include "sweep/executor.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kreg {

struct DeviceLane {
    int ordinal = 0;             // as the runner sees the GPU
    std::string uuid;            // "GPU-...": the lane's workers see only this GPU, as device 0
    std::optional<GpuInfo> gpu;  // facts and ceilings read by a worker of this lane
};

// The report's meta.gpu from a worker's device reply (one without "error"): its facts, its ceilings, and
// why there are none when the worker says. Throws std::invalid_argument when a key has the wrong type.
GpuInfo gpu_of_device_reply(const nlohmann::json& reply);

// The GPUs that spec names, each with its UUID, read through `probe`. Returns none and sets `error` when
// there is no GPU, an ordinal is out of range, or a GPU cannot be described.
std::vector<DeviceLane> resolve_device_lanes(const DevicesSpec& spec, Executor& probe, std::string& error);

// Reads every lane's facts and, if asked, ceilings at once, each in a worker that sees only its GPU.
// A lane whose worker cannot describe it, or describes another GPU, sets `error`.
void describe_lanes(std::vector<DeviceLane>& lanes, const ExecutorOptions& base, bool calibrate, std::string& error);

// The options of a lane's executor: base, with the lane's workers pinned to its GPU.
ExecutorOptions lane_options(const ExecutorOptions& base, const DeviceLane& lane);

}  // namespace kreg
