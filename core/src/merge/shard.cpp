#include "merge/shard.hpp"

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

uint64_t jobs_in_shard(uint64_t plan_size, int index, int count) {
    const uint64_t first = uint64_t(index - 1);
    return plan_size > first ? (plan_size - first + uint64_t(count) - 1) / uint64_t(count) : 0;
}

std::string shard_tag(int index, int count) {
    return "shard-" + std::to_string(index) + "-of-" + std::to_string(count);
}

std::string with_shard_tag(std::string path_template, const std::string& tag) {
    static const std::string placeholder = "{shard}";
    for (size_t at = path_template.find(placeholder); at != std::string::npos;
         at = path_template.find(placeholder, at + tag.size()))
        path_template.replace(at, placeholder.size(), tag);
    return path_template;
}

std::vector<std::string> argv_with_shard(const std::vector<std::string>& argv, int index, int count) {
    const std::string value = std::to_string(index) + "/" + std::to_string(count);
    std::vector<std::string> out;
    bool replaced = false;
    for (size_t i = 0; i < argv.size(); ++i) {
        if (argv[i] == "--shard" && i + 1 < argv.size()) {
            out.push_back("--shard");
            out.push_back(value);
            ++i;
            replaced = true;
        } else if (argv[i].rfind("--shard=", 0) == 0) {
            out.push_back("--shard=" + value);
            replaced = true;
        } else {
            out.push_back(argv[i]);
        }
    }
    if (!replaced) {
        out.push_back("--shard");
        out.push_back(value);
    }
    return out;
}

namespace {
// One word for a POSIX shell, quoted only where it must be.
std::string quoted(const std::string& word) {
    const bool plain = !word.empty() && word.find_first_not_of(
                                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                            "_-./=:,+@%") == std::string::npos;
    if (plain) return word;
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}
}  // namespace

std::string shell_command(const std::string& cwd, const std::vector<std::string>& argv) {
    std::string out = cwd.empty() ? "" : "cd " + quoted(cwd) + " && ";
    for (size_t i = 0; i < argv.size(); ++i) out += (i ? " " : "") + quoted(argv[i]);
    return out;
}

}  // namespace kreg
