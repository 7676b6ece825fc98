// ConfigError, the list of accepted keys and the canonical JSON form of a parsed config.
#include "config/sweep_config.hpp"

namespace kreg {
namespace {
std::string compose(const std::string& file, const std::string& json_path, const std::string& message) {
    return json_path.empty() ? file + ": " + message : file + ": " + json_path + ": " + message;
}
}  // namespace

ConfigError::ConfigError(std::string file, std::string json_path, std::string message)
    : std::runtime_error(compose(file, json_path, message)),
      file_(std::move(file)),
      json_path_(std::move(json_path)),
      message_(std::move(message)) {}

const std::vector<std::string>& sweep_config_keys() {
    static const std::vector<std::string> keys{"$schema",       "name",         "description", "operation", "kernels",
                                               "shapes",        "dtypes",       "seed",        "warmup",    "repeats",
                                               "time_budget_s", "noise_target", "verify",      "tolerance", "timeout_s",
                                               "warm_cache",    "device",       "baseline",    "output",    "timer"};
    return keys;
}

nlohmann::json SweepConfig::to_json() const {
    nlohmann::json shapes_json = nlohmann::json::array();
    for (const auto& s : shapes) shapes_json.push_back(shape_spec_json(operation, s));
    nlohmann::json dtypes_json = nlohmann::json::array();
    for (DType d : dtypes) dtypes_json.push_back(std::string(to_string(d)));

    nlohmann::json j = {{"source", source},
                        {"name", name},
                        {"description", description},
                        {"kernels", kernels},
                        {"shapes", shapes_json},
                        {"dtypes", dtypes_json},
                        {"seed", seed},
                        {"warmup", settings.warmup},
                        {"repeats", settings.repeats},
                        {"verify", settings.verify},
                        {"timeout_s", settings.timeout_s},
                        {"warm_cache", settings.warm_cache},
                        {"device", settings.device}};
    // GEMM configs stay as they were; other operations name theirs.
    if (operation != Operation::gemm) j["operation"] = std::string(to_string(operation));
    // Unset optionals are left out rather than written as null, so the result parses back.
    if (settings.time_budget_s) j["time_budget_s"] = *settings.time_budget_s;
    if (settings.tolerance) j["tolerance"] = *settings.tolerance;
    j["noise_target"] = settings.noise_target.value_or(0.0);
    if (settings.timer != TimerChoice::automatic)
        j["timer"] = to_string(settings.timer);  // the default stays unwritten
    if (baseline) j["baseline"] = baseline.to_json();
    nlohmann::json out = nlohmann::json::object();
    if (output.json) out["json"] = *output.json;
    if (output.csv) out["csv"] = *output.csv;
    j["output"] = out;
    return j;
}

}  // namespace kreg
