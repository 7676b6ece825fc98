#include "report/shard_meta.hpp"

#include <stdexcept>

namespace kreg {

nlohmann::json to_json(const SweepShardMeta& m) {
    return {{"index", m.index},
            {"count", m.count},
            {"plan_size", m.plan_size},
            {"plan_sha256", m.plan_sha256},
            {"config_sha256", m.config_sha256},
            {"cwd", m.cwd}};
}

SweepShardMeta sweep_shard_meta_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw std::invalid_argument("/meta/shard: not an object");
    auto field = [&](const char* key) -> const nlohmann::json& {
        const auto it = j.find(key);
        if (it == j.end()) throw std::invalid_argument(std::string("/meta/shard/") + key + ": missing");
        return *it;
    };
    auto whole = [&](const char* key, long long min) {
        const nlohmann::json& v = field(key);
        if (!v.is_number_integer() || v.get<long long>() < min)
            throw std::invalid_argument(std::string("/meta/shard/") + key +
                                        ": expected an integer >= " + std::to_string(min) + ", found " + v.dump());
        return v.get<long long>();
    };
    auto text = [&](const char* key) {
        const nlohmann::json& v = field(key);
        if (!v.is_string())
            throw std::invalid_argument(std::string("/meta/shard/") + key + ": expected a string, found " + v.dump());
        return v.get<std::string>();
    };
    SweepShardMeta m;
    m.index = int(whole("index", 1));
    m.count = int(whole("count", 1));
    if (m.index > m.count)
        throw std::invalid_argument("/meta/shard/index: " + std::to_string(m.index) + " is more than count " +
                                    std::to_string(m.count));
    m.plan_size = uint64_t(whole("plan_size", 0));
    m.plan_sha256 = text("plan_sha256");
    m.config_sha256 = text("config_sha256");
    m.cwd = text("cwd");
    return m;
}

void to_json(nlohmann::json& j, const SweepShardMeta& m) { j = to_json(m); }
void from_json(const nlohmann::json& j, SweepShardMeta& m) { m = sweep_shard_meta_from_json(j); }

}  // namespace kreg
