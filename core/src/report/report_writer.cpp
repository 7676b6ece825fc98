#include "report/report_writer.hpp"

#include "report/atomic_file.hpp"
#include "report/csv.hpp"
#include "report/json_report.hpp"

#include <algorithm>
#include <stdexcept>

namespace kreg {

ReportWriter::ReportWriter(std::optional<std::filesystem::path> json, std::optional<std::filesystem::path> csv,
                           JournalWriter journal, nlohmann::json meta, std::optional<std::string> baseline, size_t planned,
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
    std::stable_sort(records_.begin(), records_.end(), [](const Record& a, const Record& b) { return a.job_id < b.job_id; });
    render();
}

void ReportWriter::add(const Record& r) {
    const auto start = std::chrono::steady_clock::now();
    if (!done_ids_.insert(r.job_id).second)
        throw std::logic_error("job " + std::to_string(r.job_id) + " already has a row in " + journal_.path().string());
    journal_.append_record(r);
    // Rows come in plan order, except after a resume that filled a gap: keep the order by job id.
    if (records_.empty() || records_.back().job_id < r.job_id) {
        records_.push_back(r);
    } else {
        const auto at = std::upper_bound(records_.begin(), records_.end(), r.job_id,
                                         [](uint64_t id, const Record& x) { return id < x.job_id; });
        records_.insert(at, r);
    }
    busy_ += std::chrono::steady_clock::now() - start;
    if (render_due()) render();  // counts itself
}

void ReportWriter::set_meta_field(const std::string& key, nlohmann::json value) { meta_[key] = std::move(value); }

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
        write_file_atomically(*json_path_, dump_report(report_json(meta, records_, baseline_)));
    }
    if (csv_path_) write_file_atomically(*csv_path_, csv_document(records_, baseline_));
    last_render_ = std::chrono::steady_clock::now();
    last_render_took_ = last_render_ - start;
    busy_ += last_render_took_;
}

}  // namespace kreg
