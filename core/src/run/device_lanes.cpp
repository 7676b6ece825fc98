#include "run/device_lanes.hpp"

#include <mutex>
#include <thread>

namespace kreg {

GpuInfo gpu_of_device_reply(const nlohmann::json& reply) {
    return reply.get<GpuInfo>();  // the reply's other keys (op, device_count) are the wire's, not the report's
}

std::vector<DeviceLane> resolve_device_lanes(const DevicesSpec& spec, Executor& probe, std::string& error) {
    const nlohmann::json first = probe.device_info(0, false, 60.0);
    if (first.contains("error")) {
        error = first["error"].get<std::string>();
        return {};
    }
    const int count = first.value("device_count", 0);
    std::vector<int> ordinals = spec.ordinals;
    if (spec.all)
        for (int i = 0; i < count; ++i) ordinals.push_back(i);
    std::vector<DeviceLane> lanes;
    for (int ordinal : ordinals) {
        if (ordinal >= count) {
            error = "--devices: device " + std::to_string(ordinal) + " requested but only " + std::to_string(count) +
                    " present";
            return {};
        }
        const nlohmann::json reply = ordinal == 0 ? first : probe.device_info(ordinal, false, 60.0);
        const nlohmann::json facts = reply.value("facts", nlohmann::json(nullptr));
        if (reply.contains("error") || !facts.is_object() || !facts.value("uuid", nlohmann::json()).is_string()) {
            error = "--devices: cannot describe device " + std::to_string(ordinal) +
                    (reply.contains("error") ? ": " + reply["error"].get<std::string>() : ": no UUID");
            return {};
        }
        lanes.push_back({ordinal, facts["uuid"].get<std::string>(), std::nullopt});
    }
    return lanes;
}

ExecutorOptions lane_options(const ExecutorOptions& base, const DeviceLane& lane) {
    ExecutorOptions o = base;
    o.cuda_visible_devices = lane.uuid;
    return o;
}

void describe_lanes(std::vector<DeviceLane>& lanes, const ExecutorOptions& base, bool calibrate, std::string& error) {
    std::mutex lock;
    std::vector<std::thread> threads;
    for (auto& lane : lanes) {
        threads.emplace_back([&, calibrate] {
            Executor executor(lane_options(base, lane));
            const nlohmann::json reply = executor.device_info(0, calibrate, 300.0);
            std::string why;
            if (reply.contains("error")) {
                why = reply["error"].get<std::string>();
            } else {
                const nlohmann::json facts = reply.value("facts", nlohmann::json(nullptr));
                // The worker saw the GPU as device 0; what it describes must be the lane's GPU.
                if (!facts.is_object() || facts.value("uuid", std::string()) != lane.uuid) {
                    why = "its worker sees another GPU (" +
                          (facts.is_object() ? facts.value("uuid", std::string("?")) : "?") + ")";
                } else {
                    try {
                        lane.gpu = gpu_of_device_reply(reply);
                        lane.gpu->facts["ordinal"] = lane.ordinal;
                    } catch (const std::exception& e) {
                        why = std::string("its worker's description is malformed: ") + e.what();
                    }
                }
            }
            if (!why.empty()) {
                std::lock_guard<std::mutex> g(lock);
                if (error.empty())
                    error = "--devices: device " + std::to_string(lane.ordinal) + " (" + lane.uuid + "): " + why;
            }
        });
    }
    for (auto& t : threads) t.join();
}

}  // namespace kreg
