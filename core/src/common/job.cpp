#include "common/job.hpp"

#include "common/operation_table.hpp"

#include <stdexcept>

namespace kreg {
namespace {
template <class T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
    if (v)
        j[key] = *v;
    else
        j[key] = nullptr;
}
template <class T>
void get_optional(const nlohmann::json& j, const char* key, std::optional<T>& v) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        v.reset();
    else
        v = it->get<T>();
}
template <class Enum, class Parse>
Enum get_enum(const nlohmann::json& j, const char* key, Parse parse) {
    const auto text = j.at(key).get<std::string>();
    const auto value = parse(text);
    if (!value) throw std::runtime_error(std::string("unknown ") + key + " '" + text + "'");
    return *value;
}
}  // namespace

const char* to_string(TimerChoice choice) {
    switch (choice) {
        case TimerChoice::cupti:
            return "cupti";
        case TimerChoice::events:
            return "events";
        case TimerChoice::automatic:
            break;
    }
    return "auto";
}

std::optional<TimerChoice> parse_timer_choice(const std::string& text) {
    for (TimerChoice c : {TimerChoice::automatic, TimerChoice::cupti, TimerChoice::events})
        if (text == to_string(c)) return c;
    return std::nullopt;
}

std::optional<double>& rate_of(Record& r) {
    return operation_row(r.operation).bound == Bound::compute ? r.gflops : r.gbps;
}
const std::optional<double>& rate_of(const Record& r) {
    return operation_row(r.operation).bound == Bound::compute ? r.gflops : r.gbps;
}

void to_json(nlohmann::json& j, const RunSettings& s) {
    j = {{"warmup", s.warmup},         {"repeats", s.repeats},       {"verify", s.verify},
         {"timeout_s", s.timeout_s},   {"warm_cache", s.warm_cache}, {"device", s.device},
         {"profile", s.profile},       {"strict", s.strict},         {"checked_outside", s.checked_outside},
         {"timer", to_string(s.timer)}};
    put_optional(j, "time_budget_s", s.time_budget_s);
    put_optional(j, "tolerance", s.tolerance);
    put_optional(j, "call_timeout_s", s.call_timeout_s);
    put_optional(j, "noise_target", s.noise_target);
}
void from_json(const nlohmann::json& j, RunSettings& s) {
    j.at("warmup").get_to(s.warmup);
    j.at("repeats").get_to(s.repeats);
    j.at("verify").get_to(s.verify);
    j.at("timeout_s").get_to(s.timeout_s);
    j.at("warm_cache").get_to(s.warm_cache);
    j.at("device").get_to(s.device);
    s.profile = j.value("profile", false);
    s.strict = j.value("strict", false);
    s.checked_outside = j.value("checked_outside", false);
    s.timer = TimerChoice::automatic;
    if (j.contains("timer")) s.timer = get_enum<TimerChoice>(j, "timer", parse_timer_choice);
    get_optional(j, "time_budget_s", s.time_budget_s);
    get_optional(j, "tolerance", s.tolerance);
    get_optional(j, "call_timeout_s", s.call_timeout_s);
    get_optional(j, "noise_target", s.noise_target);
}

nlohmann::json shape_spec_json(Operation op, const Shape& s) {
    nlohmann::json j = nlohmann::json::object();
    for (const ShapeKeyDef& k : operation_row(op).shape_keys()) j[k.name] = dim_value(s, k.dim);
    return j;
}

void to_json(nlohmann::json& j, const Shape& s) {
    j = {{"m", s.m}, {"n", s.n}, {"k", s.k}};
    if (s.block > 0) j["block"] = s.block;
}
void from_json(const nlohmann::json& j, Shape& s) {
    j.at("m").get_to(s.m);
    j.at("n").get_to(s.n);
    j.at("k").get_to(s.k);
    s.block = j.value("block", int64_t{0});
}

void to_json(nlohmann::json& j, const Job& job) {
    j = {{"id", job.id},
         {"kernel", job.kernel},
         {"plugin_path", job.plugin_path},
         {"shape", job.shape},
         {"dtype", to_string(job.dtype)},
         {"seed", job.seed},
         {"settings", job.settings}};
    if (job.operation != Operation::gemm) j["operation"] = to_string(job.operation);
}
void from_json(const nlohmann::json& j, Job& job) {
    j.at("id").get_to(job.id);
    j.at("kernel").get_to(job.kernel);
    j.at("plugin_path").get_to(job.plugin_path);
    j.at("shape").get_to(job.shape);
    if (j.contains("operation")) job.operation = get_enum<Operation>(j, "operation", parse_operation);
    job.dtype = get_enum<DType>(j, "dtype", parse_dtype);
    j.at("seed").get_to(job.seed);
    j.at("settings").get_to(job.settings);
}

void to_json(nlohmann::json& j, const TimingStats& s) {
    j = {{"count", s.count},     {"median_ms", s.median_ms}, {"min_ms", s.min_ms},
         {"mean_ms", s.mean_ms}, {"stddev_ms", s.stddev_ms}, {"cv", s.cv}};
    if (s.median_ci_low_ms) j["median_ci_low_ms"] = *s.median_ci_low_ms;
    if (s.median_ci_high_ms) j["median_ci_high_ms"] = *s.median_ci_high_ms;
}
void from_json(const nlohmann::json& j, TimingStats& s) {
    j.at("count").get_to(s.count);
    j.at("median_ms").get_to(s.median_ms);
    j.at("min_ms").get_to(s.min_ms);
    j.at("mean_ms").get_to(s.mean_ms);
    j.at("stddev_ms").get_to(s.stddev_ms);
    j.at("cv").get_to(s.cv);
    get_optional(j, "median_ci_low_ms", s.median_ci_low_ms);
    get_optional(j, "median_ci_high_ms", s.median_ci_high_ms);
}

void to_json(nlohmann::json& j, const Record& r) {
    j = {{"job_id", r.job_id},
         {"kernel", r.kernel},
         {"plugin", r.plugin},
         {"plugin_path", r.plugin_path},
         {"backend", to_string(r.backend)},
         {"dtype", to_string(r.dtype)},
         {"m", r.shape.m},
         {"n", r.shape.n},
         {"k", r.shape.k},
         {"seed", r.seed},
         {"status", to_string(r.status)},
         {"reason", r.reason},
         {"timer", r.timer},
         {"samples_ms", r.samples_ms},
         {"extra", r.extra}};
    put_optional(j, "max_rel_err", r.max_rel_err);
    put_optional(j, "tolerance", r.tolerance);
    put_optional(j, "stats", r.stats);
    put_optional(j, "gflops", r.gflops);
    put_optional(j, "exit_code", r.exit_code);
    put_optional(j, "signal", r.signal);
    if (r.end_cause != EndCause::none) j["end_cause"] = to_string(r.end_cause);  // rows that ran to their end unchanged
    // Only other operations name theirs, so every GEMM row (and report) stays as it was.
    if (r.operation != Operation::gemm) j["operation"] = to_string(r.operation);
    if (r.shape.block > 0) j["block"] = r.shape.block;
    if (r.gbps) j["gbps"] = *r.gbps;
}
void from_json(const nlohmann::json& j, Record& r) {
    j.at("job_id").get_to(r.job_id);
    j.at("kernel").get_to(r.kernel);
    j.at("plugin").get_to(r.plugin);
    j.at("plugin_path").get_to(r.plugin_path);
    r.backend = get_enum<Backend>(j, "backend", parse_backend);
    r.dtype = get_enum<DType>(j, "dtype", parse_dtype);
    j.at("m").get_to(r.shape.m);
    j.at("n").get_to(r.shape.n);
    j.at("k").get_to(r.shape.k);
    r.shape.block = j.value("block", int64_t{0});
    if (j.contains("operation")) r.operation = get_enum<Operation>(j, "operation", parse_operation);
    j.at("seed").get_to(r.seed);
    r.status = get_enum<RowStatus>(j, "status", parse_row_status);
    j.at("reason").get_to(r.reason);
    j.at("timer").get_to(r.timer);
    j.at("samples_ms").get_to(r.samples_ms);
    r.extra =
        j.contains("extra") ? j["extra"].get<RecordExtras>() : RecordExtras{};  // strict: unknown keys are refused
    get_optional(j, "max_rel_err", r.max_rel_err);
    get_optional(j, "tolerance", r.tolerance);
    get_optional(j, "stats", r.stats);
    get_optional(j, "gflops", r.gflops);
    get_optional(j, "gbps", r.gbps);
    get_optional(j, "exit_code", r.exit_code);
    get_optional(j, "signal", r.signal);
    if (j.contains("end_cause")) r.end_cause = get_enum<EndCause>(j, "end_cause", parse_end_cause);
}

Record record_for(const Job& job, RowStatus status, std::string reason) {
    Record r;
    r.job_id = job.id;
    r.kernel = job.kernel;
    r.plugin_path = job.plugin_path;
    r.operation = job.operation;
    r.dtype = job.dtype;
    r.shape = job.shape;
    r.seed = job.seed;
    r.status = status;
    r.reason = std::move(reason);
    return r;
}

}  // namespace kreg
