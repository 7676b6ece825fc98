#include "common/types.hpp"

#include <array>
#include <utility>

namespace kreg {
namespace {
template <class Enum, size_t N>
std::optional<Enum> lookup(const std::array<std::pair<Enum, std::string_view>, N>& table, std::string_view s) {
    for (const auto& [value, name] : table)
        if (name == s) return value;
    return std::nullopt;
}
template <class Enum, size_t N>
std::string_view name_of(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum e) {
    for (const auto& [value, name] : table)
        if (value == e) return name;
    return "unknown";
}

constexpr std::array<std::pair<DType, std::string_view>, 4> kDTypes{
    {{DType::fp32, "fp32"}, {DType::tf32, "tf32"}, {DType::bf16, "bf16"}, {DType::fp16, "fp16"}}};
constexpr std::array<std::pair<Backend, std::string_view>, 2> kBackends{
    {{Backend::cpu, "cpu"}, {Backend::cuda, "cuda"}}};
constexpr std::array<std::pair<RowStatus, std::string_view>, 6> kStatuses{{{RowStatus::ok, "ok"},
                                                                           {RowStatus::wrong_result, "wrong_result"},
                                                                           {RowStatus::skipped, "skipped"},
                                                                           {RowStatus::failed, "failed"},
                                                                           {RowStatus::crashed, "crashed"},
                                                                           {RowStatus::timeout, "timeout"}}};
constexpr std::array<std::pair<EndCause, std::string_view>, 13> kEndCauses{
    {{EndCause::none, "none"},
     {EndCause::kernel_failed, "kernel_failed"},
     {EndCause::cuda_error, "cuda_error"},
     {EndCause::memory_refused, "memory_refused"},
     {EndCause::signal, "signal"},
     {EndCause::exited, "exited"},
     {EndCause::call_timeout, "call_timeout"},
     {EndCause::job_timeout, "job_timeout"},
     {EndCause::load_timeout, "load_timeout"},
     {EndCause::memory_cap, "memory_cap"},
     {EndCause::sandbox_refusal, "sandbox_refusal"},
     {EndCause::protocol_breach, "protocol_breach"},
     {EndCause::worker_not_started, "worker_not_started"}}};
}  // namespace

std::string_view to_string(EndCause c) { return name_of(kEndCauses, c); }
std::optional<EndCause> parse_end_cause(std::string_view s) { return lookup(kEndCauses, s); }
bool worker_may_claim(EndCause c) {
    return c == EndCause::none || c == EndCause::kernel_failed || c == EndCause::cuda_error ||
           c == EndCause::memory_refused;
}

std::string_view to_string(DType d) { return name_of(kDTypes, d); }
std::optional<DType> parse_dtype(std::string_view s) { return lookup(kDTypes, s); }
const std::vector<DType>& all_dtypes() {
    static const std::vector<DType> v{DType::fp32, DType::tf32, DType::bf16, DType::fp16};
    return v;
}

std::string_view to_string(Backend b) { return name_of(kBackends, b); }
std::optional<Backend> parse_backend(std::string_view s) { return lookup(kBackends, s); }

std::string_view to_string(RowStatus s) { return name_of(kStatuses, s); }
std::optional<RowStatus> parse_row_status(std::string_view s) { return lookup(kStatuses, s); }
const std::vector<RowStatus>& all_row_statuses() {
    static const std::vector<RowStatus> v{RowStatus::ok,     RowStatus::wrong_result, RowStatus::skipped,
                                          RowStatus::failed, RowStatus::crashed,      RowStatus::timeout};
    return v;
}

std::string to_string(const Shape& s) {
    // A shape without m (an operation whose only size key is n) is its n alone.
    std::string out = s.m > 0 ? std::to_string(s.m) + "x" + std::to_string(s.n) : std::to_string(s.n);
    if (s.k > 0) out += "x" + std::to_string(s.k);
    if (s.block > 0) out += "/b" + std::to_string(s.block);
    return out;
}

}  // namespace kreg
