#include "report/console.hpp"

#include "common/operation_table.hpp"
#include "common/text.hpp"

#include "report/number_format.hpp"
#include "report/printable_text.hpp"
#include "report/speedup.hpp"
#include "report/summary.hpp"

#include <algorithm>
#include <map>

namespace kreg {
namespace {

using detail::format_fixed;
using detail::format_general;

constexpr size_t kTableReasonBytes = 4000;  // whole, within reason: a reason already holds a stderr tail at most
constexpr size_t kProgressReasonBytes = 100;
constexpr size_t kNameBytes = 200;

// Milliseconds with three decimals, or four significant digits below 1 ms so that fast kernels do not
// all read 0.001.
std::string short_ms(double ms) { return ms > 0 && ms < 1 ? format_general(ms, 4) : format_fixed(ms, 3); }
std::string short_err(double err) { return format_general(err, 2); }
std::string short_gflops(double g) { return format_fixed(g, 1); }
// Two decimals, or two significant digits for a kernel far slower than the baseline (not "0.00x").
std::string short_speedup(double s) { return (s >= 0.01 ? format_fixed(s, 2) : format_general(s, 2)) + "x"; }

std::string or_dash(bool present, const std::string& text) { return present ? text : "-"; }

std::string counts_line(const std::vector<Record>& records) {
    std::string line = std::to_string(records.size()) + (records.size() == 1 ? " row" : " rows");
    const char* separator = ": ";
    for (const auto& [status, count] : count_by_status(records)) {
        if (count == 0) continue;
        line += separator + std::to_string(count) + " " + std::string(to_string(status));
        separator = ", ";
    }
    return line;
}

std::string rstrip(std::string s) {
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
}

}  // namespace

std::string one_line(const std::string& text, size_t max_bytes) { return printable_utf8(text, max_bytes); }

std::string indented_text(const std::string& text, size_t indent, size_t max_bytes) {
    const std::string printable = printable_lines(text, max_bytes);
    std::string out;
    size_t start = 0;
    while (start < printable.size()) {
        size_t end = printable.find('\n', start);
        if (end == std::string::npos) end = printable.size();
        std::string line = printable.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        out += rstrip(std::string(indent, ' ') + line) + "\n";
        start = end + 1;
    }
    return out;
}

std::string format_table(const std::vector<Record>& records, const Baseline& baseline) {
    // Each operation's rate column (operations.def): GFLOP/s, or bytes moved per second for data movement. A
    // table of one unit says it in the header; a table of several says "rate" there and each cell its own
    // unit, so a GEMM row never shows a GB/s figure because another row was a transpose.
    const auto unit = [](const Record& r) { return std::string(operation_row(r.operation).rate_unit()); };
    const bool mixed =
        std::any_of(records.begin(), records.end(), [&](const Record& r) { return unit(r) != unit(records.front()); });
    const auto rate = [&](const Record& r) {
        const std::optional<double>& value = rate_of(r);
        if (!value) return std::string("-");
        return short_gflops(*value) + (mixed ? " " + unit(r) : "");
    };
    const std::string header = mixed ? "rate" : records.empty() ? "GFLOP/s" : unit(records.front());
    std::vector<std::string> labels{"kernel", "dtype", "shape", "status", "median ms", header, "max err"};
    if (baseline) labels.push_back("speed-up");

    const auto speedups = speedups_vs_baseline(records, baseline);
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < records.size(); ++i) {
        const Record& r = records[i];
        std::vector<std::string> cells{
            one_line(r.kernel, kNameBytes),
            std::string(to_string(r.dtype)),
            to_string(r.shape),
            std::string(to_string(r.status)),
            or_dash(r.stats.has_value(), r.stats ? short_ms(r.stats->median_ms) : ""),
            rate(r),
            or_dash(r.max_rel_err.has_value(), r.max_rel_err ? short_err(*r.max_rel_err) : "")};
        if (baseline) cells.push_back(or_dash(speedups[i].has_value(), speedups[i] ? short_speedup(*speedups[i]) : ""));
        rows.push_back(std::move(cells));
    }

    std::vector<size_t> widths;
    for (const auto& label : labels) widths.push_back(label.size());
    for (const auto& cells : rows)
        for (size_t c = 0; c < cells.size(); ++c) widths[c] = std::max(widths[c], cells[c].size());

    const auto render = [&](const std::vector<std::string>& cells) {
        std::string line;
        for (size_t c = 0; c < cells.size(); ++c) {
            line += cells[c];
            if (c + 1 < cells.size()) line += std::string(widths[c] - cells[c].size() + 2, ' ');
        }
        return rstrip(line) + "\n";
    };
    std::string out = render(labels);
    std::vector<std::string> rules;
    for (size_t w : widths) rules.push_back(std::string(w, '-'));
    out += render(rules);
    // A reason is printed whole once; a later skipped row with the same reason (a sweep's CUDA rows on a
    // machine without a GPU, a shape every kernel declines) points back to the first row that gave it.
    std::map<std::string, size_t> first_skip_with;
    for (size_t i = 0; i < rows.size(); ++i) {
        out += render(rows[i]);
        const Record& r = records[i];
        if (r.status == RowStatus::ok) continue;
        if (r.status == RowStatus::skipped) {
            const auto [first, fresh] = first_skip_with.emplace(r.reason, i);
            if (!fresh) {
                const Record& earlier = records[first->second];
                out += "    skipped for the same reason as " + one_line(earlier.kernel, kNameBytes) + " " +
                       to_string(earlier.shape) + " above\n";
                continue;
            }
        }
        out += indented_text(r.reason, 4, kTableReasonBytes);
    }
    out += "\n" + counts_line(records) + "\n";
    return out;
}

std::string format_progress(size_t done, size_t total, const Record& r) {
    const std::string total_text = std::to_string(total);
    std::string done_text = std::to_string(done);
    if (done_text.size() < total_text.size()) done_text.insert(0, total_text.size() - done_text.size(), ' ');
    std::string line = "[" + done_text + "/" + total_text + "] " + one_line(r.kernel, kNameBytes) + "  " +
                       std::string(to_string(r.dtype)) + "  " + to_string(r.shape) + "  " +
                       std::string(to_string(r.status));
    if (r.status == RowStatus::ok) {
        if (r.stats) line += "  " + short_ms(r.stats->median_ms) + " ms";
        if (r.gflops) line += "  " + short_gflops(*r.gflops) + " GFLOP/s";
        if (r.gbps) line += "  " + short_gflops(*r.gbps) + " GB/s";
        return line;
    }
    if (r.max_rel_err) line += "  max err " + short_err(*r.max_rel_err);
    if (!r.reason.empty()) line += "  " + one_line(r.reason, kProgressReasonBytes);
    return line;
}

}  // namespace kreg
