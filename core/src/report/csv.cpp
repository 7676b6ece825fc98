#include "report/csv.hpp"

#include "common/operation_table.hpp"

#include "report/number_format.hpp"
#include "report/printable_text.hpp"
#include "report/speedup.hpp"

#include <array>

namespace kreg {
namespace {

using detail::format_fixed;
using detail::format_general;

std::string ms(double v) { return format_fixed(v, 6); }
std::string general(double v) { return format_general(v, 6); }
std::string optional_text(const std::optional<double>& v, std::string (*format)(double)) {
    return v ? format(*v) : std::string();
}
template <class Field>
std::string stat(const Record& r, Field field, std::string (*format)(double)) {
    return r.stats ? format((*r.stats).*field) : std::string();
}

// The single list of columns: the header and every row are generated from it, so they cannot drift.
struct Column {
    const char* name;
    std::string (*cell)(const Record& r, const std::optional<double>& speedup);
    bool text = false;  // free text (csv_field: sanitised, formula-neutralised), else a number written as is
};
const std::array<Column, 26> kColumns{{
    {"kernel", [](const Record& r, const auto&) { return r.kernel; }, true},
    {"plugin", [](const Record& r, const auto&) { return r.plugin; }, true},
    {"backend", [](const Record& r, const auto&) { return std::string(to_string(r.backend)); }, true},
    {"dtype", [](const Record& r, const auto&) { return std::string(to_string(r.dtype)); }, true},
    {"m", [](const Record& r, const auto&) { return std::to_string(r.shape.m); }},
    {"n", [](const Record& r, const auto&) { return std::to_string(r.shape.n); }},
    // An operation without a K (operations.def) leaves it empty rather than a 0 that reads like a dimension.
    {"k", [](const Record& r,
             const auto&) { return operation_row(r.operation).has_key(Dim::k) ? std::to_string(r.shape.k) : ""; }},
    {"status", [](const Record& r, const auto&) { return std::string(to_string(r.status)); }, true},
    {"max_rel_err", [](const Record& r, const auto&) { return optional_text(r.max_rel_err, general); }},
    {"median_ms", [](const Record& r, const auto&) { return stat(r, &TimingStats::median_ms, ms); }},
    {"min_ms", [](const Record& r, const auto&) { return stat(r, &TimingStats::min_ms, ms); }},
    {"cv", [](const Record& r, const auto&) { return stat(r, &TimingStats::cv, general); }},
    {"gflops", [](const Record& r, const auto&) { return r.gflops ? format_fixed(*r.gflops, 3) : std::string(); }},
    {"mean_ms", [](const Record& r, const auto&) { return stat(r, &TimingStats::mean_ms, ms); }},
    {"stddev_ms", [](const Record& r, const auto&) { return stat(r, &TimingStats::stddev_ms, ms); }},
    {"samples", [](const Record& r,
                   const auto&) { return std::to_string(r.stats ? size_t(r.stats->count) : r.samples_ms.size()); }},
    {"tolerance", [](const Record& r, const auto&) { return optional_text(r.tolerance, general); }},
    {"speedup_vs_baseline", [](const Record&, const auto& speedup) { return optional_text(speedup, general); }},
    {"reason", [](const Record& r, const auto&) { return r.reason; }, true},
    {"plugin_path", [](const Record& r, const auto&) { return r.plugin_path; }, true},
    {"seed", [](const Record& r, const auto&) { return std::to_string(r.seed); }},
    {"job_id", [](const Record& r, const auto&) { return std::to_string(r.job_id); }},
    {"timer", [](const Record& r, const auto&) { return r.timer; }, true},
    // Appended (the header only ever grows at its end, so readers by position keep working): the operation
    // of the row, the per-call tile edge (block), and the rate of copy-bound operations (gflops stays GEMM's).
    {"operation", [](const Record& r, const auto&) { return std::string(to_string(r.operation)); }, true},
    {"block",
     [](const Record& r, const auto&) { return r.shape.block > 0 ? std::to_string(r.shape.block) : std::string(); }},
    {"gbps", [](const Record& r, const auto&) { return r.gbps ? format_fixed(*r.gbps, 3) : std::string(); }},
}};

}  // namespace

std::string csv_field(std::string_view raw) {
    // A spreadsheet runs a cell starting with one of these as a formula (OWASP, "CSV Injection").
    const bool formula = !raw.empty() && std::string_view("=+-@\t\r").find(raw.front()) != std::string_view::npos;
    const std::string text = (formula ? "'" : "") + printable_lines(raw, raw.size() * 3 + 4);
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    quoted += '"';
    return quoted;
}

std::string csv_header() {
    std::string line;
    for (const Column& column : kColumns) {
        if (!line.empty()) line += ',';
        line += column.name;
    }
    return line;
}

std::string csv_row(const Record& r, std::optional<double> speedup) {
    std::string line;
    bool first = true;
    for (const Column& column : kColumns) {
        if (!first) line += ',';
        first = false;
        line += column.text ? csv_field(column.cell(r, speedup)) : column.cell(r, speedup);
    }
    return line;
}

}  // namespace kreg

namespace kreg {
std::string csv_document(const std::vector<Record>& records, const Baseline& baseline) {
    const auto speedups = speedups_vs_baseline(records, baseline);
    std::string out = csv_header() + "\n";
    for (size_t i = 0; i < records.size(); ++i) out += csv_row(records[i], speedups[i]) + "\n";
    return out;
}
}  // namespace kreg
