#include "sweep/result_claim.hpp"

#include "common/text.hpp"
#include "worker/process.hpp"
#include "worker/session.hpp"

#include <algorithm>
#include <stdexcept>

namespace kreg {
namespace {

using nlohmann::json;

[[noreturn]] void wrong(const char* key, const char* expected, const json& found) {
    throw std::invalid_argument(std::string("/") + key + ": expected " + expected + ", found " +
                                printable_utf8(found.dump(), 64));
}

const json& required(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) throw std::invalid_argument(std::string("/") + key + ": missing");
    return *it;
}

std::string text(const json& j, const char* key) {
    const json& v = required(j, key);
    if (!v.is_string()) wrong(key, "a string", v);
    return v.get<std::string>();
}

uint64_t whole(const json& j, const char* key) {
    const json& v = required(j, key);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) wrong(key, "an integer >= 0", v);
    return v.get<uint64_t>();
}

int64_t integer(const json& v, const char* key) {
    if (!v.is_number_integer()) wrong(key, "an integer", v);
    return v.get<int64_t>();
}

template <class Enum, class Parse>
Enum one_of(const json& v, const char* key, Parse parse) {
    if (!v.is_string()) wrong(key, "a string", v);
    const auto value = parse(v.get<std::string>());
    if (!value) wrong(key, "a known name", v);
    return *value;
}

std::optional<double> number_or_null(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) wrong(key, "a number or null", *it);
    return it->get<double>();
}

std::vector<double> samples(const json& j) {
    const json& v = required(j, "samples_ms");
    if (!v.is_array()) wrong("samples_ms", "an array", v);
    std::vector<double> out;
    out.reserve(v.size());
    for (const json& s : v) {
        if (!s.is_number()) wrong("samples_ms", "numbers", s);
        out.push_back(s.get<double>());
    }
    return out;
}

// The claim's fields, each of its type: a claim that does not parse is a protocol violation.
ResultClaim read_claim(const json& r) {
    ResultClaim c;
    c.job_id = whole(r, "job_id");
    c.kernel = text(r, "kernel");
    c.plugin = text(r, "plugin");
    c.backend = one_of<Backend>(required(r, "backend"), "backend", parse_backend);
    c.dtype = one_of<DType>(required(r, "dtype"), "dtype", parse_dtype);
    c.shape.m = integer(required(r, "m"), "m");
    c.shape.n = integer(required(r, "n"), "n");
    c.shape.k = integer(required(r, "k"), "k");
    if (r.contains("block")) c.shape.block = integer(r["block"], "block");
    if (r.contains("operation")) c.operation = one_of<Operation>(r["operation"], "operation", parse_operation);
    c.seed = whole(r, "seed");
    c.status = one_of<RowStatus>(required(r, "status"), "status", parse_row_status);
    c.reason = text(r, "reason");
    c.timer = text(r, "timer");
    c.samples_ms = samples(r);
    if (const auto it = r.find("extra"); it != r.end()) {
        c.extra = it->get<RecordExtras>();  // strict: unknown keys are refused
    }
    c.max_rel_err = number_or_null(r, "max_rel_err");
    c.tolerance = number_or_null(r, "tolerance");
    c.gflops = number_or_null(r, "gflops");
    c.gbps = number_or_null(r, "gbps");
    if (const auto it = r.find("stats"); it != r.end() && !it->is_null()) {
        if (!it->is_object()) wrong("stats", "an object or null", *it);
        c.stats = it->get<TimingStats>();
    }
    if (r.contains("end_cause")) c.end_cause = one_of<EndCause>(r["end_cause"], "end_cause", parse_end_cause);
    return c;
}

}  // namespace

std::string parse_result_message(const json& message, ResultClaim& claim) {
    if (std::string why = unexpected_field(message, {"op", "claim"}); !why.empty()) return why;
    const auto it = message.find("claim");
    if (it == message.end() || !it->is_object()) return "sent a result without a claim";
    const std::vector<std::string>& keys = result_claim_keys();
    for (const auto& [key, value] : it->items())
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
            return "sent a claim with the unknown field '" + printable_utf8(key, 64) + "'";
    if (it->contains("samples_ms") && (*it)["samples_ms"].size() > kMaxClaimSamples)
        return "sent a claim with too many samples";
    if (it->contains("extra") && (*it)["extra"].dump().size() > kMaxClaimExtraBytes)
        return "sent a claim with an oversized evidence bag";
    try {
        claim = read_claim(*it);
    } catch (const std::exception& e) {
        return std::string("sent a malformed claim: ") + e.what();
    }
    return "";
}

std::string claim_to_row(const ResultClaim& c, const Job& job, bool rlimit_caps_memory, size_t max_text, Record& row) {
    if (c.job_id != job.id || c.kernel != job.kernel || !(c.shape == job.shape) || c.dtype != job.dtype ||
        c.seed != job.seed)
        return "answered for another job";
    // A worker speaks only of its kernel's failure and of a CUDA error it hit; the rest is the parent's to see.
    if (!worker_may_claim(c.end_cause))
        return "claimed the end cause '" + std::string(to_string(c.end_cause)) + "', which only the runner observes";
    row = Record{};
    row.job_id = job.id;
    row.kernel = job.kernel;
    row.plugin = printable_utf8(c.plugin, 256);
    row.plugin_path = job.plugin_path;  // the worker may have loaded a staged copy
    row.backend = c.backend;
    row.dtype = job.dtype;
    row.shape = job.shape;
    row.operation = c.operation;
    row.seed = job.seed;
    row.status = c.status;
    row.reason = printable_utf8(c.reason, max_text);
    row.timer = c.timer;
    row.samples_ms = c.samples_ms;
    row.extra = c.extra;
    row.extra.device_uuid.reset();  // which GPU of --devices ran the row is the parent's to say (SweepRun's lanes)
    row.max_rel_err = c.max_rel_err;
    row.tolerance = c.tolerance;
    row.stats = c.stats;
    row.gflops = c.gflops;
    row.gbps = c.gbps;
    if (c.status == RowStatus::failed)
        row.end_cause = c.end_cause == EndCause::memory_refused && rlimit_caps_memory ? EndCause::memory_refused
                                                                                      : EndCause::kernel_failed;
    else if (c.status == RowStatus::crashed)
        row.end_cause = c.end_cause == EndCause::cuda_error ? EndCause::cuda_error : EndCause::kernel_failed;
    return "";
}

}  // namespace kreg
