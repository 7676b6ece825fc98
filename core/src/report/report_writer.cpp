#include "report/report_writer.hpp"

#include "report/atomic_file.hpp"
#include "report/csv.hpp"
#include "report/json_report.hpp"

#include "report/speedup.hpp"
#include "report/summary.hpp"

#include <algorithm>
#include <stdexcept>

namespace kreg {
namespace {

std::string compact(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The report report_json() describes, as text: meta and summary indented as dump_report() writes them,
// each record on one line of its own (its compact text, with "speedup_vs_baseline" appended when there
// is a baseline). Valid JSON with the same content as dump_report(report_json(...)); only the layout of
// the records differs.
std::string render_report_text(const nlohmann::json& meta, const std::vector<Record>& records,
                               const std::vector<std::string>& texts, const Baseline& baseline) {
    const auto speedups = speedups_vs_baseline(records, baseline);
    nlohmann::json summary = nlohmann::json::object();
    for (const auto& [status, count] : count_by_status(records)) summary[std::string(to_string(status))] = count;
    auto indented = [](const nlohmann::json& j) {
        std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
        std::string out;  // nested one level: every line after the first two more spaces
        out.reserve(text.size() + text.size() / 16);
        for (char c : text) {
            out += c;
            if (c == '\n') out += "  ";
        }
        return out;
    };
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

ReportWriter::ReportWriter(std::optional<std::filesystem::path> json, std::optional<std::filesystem::path> csv,
                           JournalWriter journal, nlohmann::json meta, Baseline baseline, size_t planned,
                           std::vector<Record> already)
    : json_path_(std::move(json)),
      csv_path_(std::move(csv)),
      journal_(std::move(journal)),
      meta_(std::move(meta)),
      baseline_(std::move(baseline)),
      planned_(planned) {
    for (Record& r : already) {
        if (!done_ids_.insert(r.job_id).second) continue;  // the journal's reader keeps the first of a pair
        records_.push_back(std::move(r));
    }
    std::stable_sort(records_.begin(), records_.end(),
                     [](const Record& a, const Record& b) { return a.job_id < b.job_id; });
    record_texts_.reserve(records_.size());
    for (const Record& r : records_) {
        record_texts_.push_back(compact(nlohmann::json(r)));
        if (!baseline_) csv_lines_.push_back(csv_row(r, std::nullopt));
    }
    render();
}

void ReportWriter::add(const Record& r) {
    const auto start = std::chrono::steady_clock::now();
    if (!done_ids_.insert(r.job_id).second)
        throw std::logic_error("job " + std::to_string(r.job_id) + " already has a row in " + journal_.path().string());
    std::string text = compact(nlohmann::json(r));
    journal_.append_record_text(text);
    // Rows come in plan order, except after a resume that filled a gap: keep the order by job id.
    if (records_.empty() || records_.back().job_id < r.job_id) {
        records_.push_back(r);
        record_texts_.push_back(std::move(text));
        if (!baseline_) csv_lines_.push_back(csv_row(r, std::nullopt));
    } else {
        const auto at = std::upper_bound(records_.begin(), records_.end(), r.job_id,
                                         [](uint64_t id, const Record& x) { return id < x.job_id; });
        const auto index = at - records_.begin();
        record_texts_.insert(record_texts_.begin() + index, std::move(text));
        if (!baseline_) csv_lines_.insert(csv_lines_.begin() + index, csv_row(r, std::nullopt));
        records_.insert(at, r);
    }
    busy_ += std::chrono::steady_clock::now() - start;
    if (render_due()) render();  // counts itself
}

bool ReportWriter::render_due() const {
    const auto since = std::chrono::steady_clock::now() - last_render_;
    if (render_interval_.count() == 0) return true;
    return since >= render_interval_ && since >= 50 * last_render_took_;
}

void ReportWriter::render() {
    const auto start = std::chrono::steady_clock::now();
    journal_.sync();  // a report never shows a row its journal could still lose
    if (json_path_) {
        nlohmann::json meta = meta_;
        meta["progress"] = {{"planned", planned_},
                            {"done", records_.size()},
                            {"complete", records_.size() >= planned_},
                            {"journal", journal_.path().string()}};
        write_file_atomically(*json_path_, render_report_text(meta, records_, record_texts_, baseline_));
    }
    if (csv_path_ && baseline_) {
        write_file_atomically(*csv_path_, csv_document(records_, baseline_));
    } else if (csv_path_) {
        size_t bytes = 512;
        for (const auto& line : csv_lines_) bytes += line.size() + 1;
        std::string csv;
        csv.reserve(bytes);
        csv += csv_header();
        csv += '\n';
        for (const auto& line : csv_lines_) {
            csv += line;
            csv += '\n';
        }
        write_file_atomically(*csv_path_, csv);
    }
    last_render_ = std::chrono::steady_clock::now();
    last_render_took_ = last_render_ - start;
    busy_ += last_render_took_;
    rendering_ += last_render_took_;
    ++renders_;
}

}  // namespace kreg
