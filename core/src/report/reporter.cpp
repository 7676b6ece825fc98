#include "report/reporter.hpp"

#include "report/atomic_file.hpp"
#include "report/console.hpp"
#include "report/csv.hpp"
#include "report/speedup.hpp"
#include "report/summary.hpp"

#include <ostream>

namespace kreg {
namespace {

std::string compact(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// j indented as dump_report() writes it, nested one level: every line after the first two more spaces.
std::string indented(const nlohmann::json& j) {
    std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out;
    out.reserve(text.size() + text.size() / 16);
    for (char c : text) {
        out += c;
        if (c == '\n') out += "  ";
    }
    return out;
}

// The report report_json() describes, as text: meta and summary indented as dump_report() writes them,
// each record on one line of its own (its compact text, with "speedup_vs_baseline" appended when there
// is a baseline). Valid JSON with the same content as dump_report(report_json(...)); only the layout of
// the records differs.
std::string render_report_text(const nlohmann::json& meta, const ReportRows& rows, const Baseline& baseline) {
    const auto& texts = rows.texts;
    const auto speedups = speedups_vs_baseline(rows.records, baseline);
    nlohmann::json summary = nlohmann::json::object();
    for (const auto& [status, count] : count_by_status(rows.records)) summary[std::string(to_string(status))] = count;
    size_t bytes = 256;
    for (const auto& t : texts) bytes += t.size() + 40;
    std::string out;
    out.reserve(bytes);
    out += "{\n  \"baseline\": ";
    out += compact(baseline.to_json());
    out += ",\n  \"meta\": ";
    out += indented(meta);
    out += ",\n  \"records\": [";
    for (size_t i = 0; i < texts.size(); ++i) {
        out += i == 0 ? "\n    " : ",\n    ";
        if (baseline && texts[i].size() >= 2 && texts[i].back() == '}') {
            out.append(texts[i], 0, texts[i].size() - 1);
            out += texts[i].size() > 2 ? ",\"speedup_vs_baseline\":" : "\"speedup_vs_baseline\":";
            out += speedups[i] ? compact(*speedups[i]) : "null";
            out += '}';
        } else {
            out += texts[i];
        }
    }
    out += texts.empty() ? "],\n  \"summary\": " : "\n  ],\n  \"summary\": ";
    out += indented(summary);
    out += "\n}\n";
    return out;
}

}  // namespace

void JournalReporter::report_row(const Record&, const std::string& text, size_t, RowOrigin origin) {
    if (origin == RowOrigin::finished) journal_.append_record_text(text);  // a resumed row is in it already
}

void JsonReporter::render(const ReportRows& rows) {
    ReportMeta meta = context_.meta;
    const size_t done = rows.records.size();
    meta.progress = ReportProgress{context_.planned, done, done >= context_.planned, context_.journal_path.string()};
    write_file_atomically(path_, render_report_text(meta, rows, context_.baseline));
}

void CsvReporter::report_row(const Record& r, const std::string&, size_t index, RowOrigin) {
    if (!baseline_) lines_.insert(lines_.begin() + static_cast<std::ptrdiff_t>(index), csv_row(r, std::nullopt));
}

void CsvReporter::render(const ReportRows& rows) {
    if (baseline_) {
        write_file_atomically(path_, csv_document(rows.records, baseline_));
        return;
    }
    size_t bytes = 512;
    for (const auto& line : lines_) bytes += line.size() + 1;
    std::string csv;
    csv.reserve(bytes);
    csv += csv_header();
    csv += '\n';
    for (const auto& line : lines_) {
        csv += line;
        csv += '\n';
    }
    write_file_atomically(path_, csv);
}

void ConsoleTableReporter::render(const ReportRows& rows) { out_ << format_table(rows.records, baseline_); }

void ProgressReporter::report_row(const Record& r, const std::string&, size_t, RowOrigin origin) {
    ++done_;
    if (origin == RowOrigin::resumed) return;
    if (r.status == RowStatus::skipped) {
        const auto [seen, first] = skips_not_shown_.emplace(r.reason, 0);
        if (!first || quiet_skips_) {
            ++seen->second;
            return;
        }
    }
    out_ << format_progress(done_, planned_, r);
    if (r.extra.device_uuid && r.extra.device) out_ << " [device " << *r.extra.device << "]";
    out_ << "\n";
}

void ProgressReporter::finish() {
    if (quiet_skips_) return;
    for (const auto& [reason, count] : skips_not_shown_)
        if (count > 0) out_ << "runner: " << count << " more row(s) skipped: " << one_line(reason, 300) << "\n";
}

}  // namespace kreg
