#include "report/report_writer.hpp"

#include <algorithm>
#include <stdexcept>

namespace kreg {

ReportWriter::ReportWriter(std::optional<std::filesystem::path> json, std::optional<std::filesystem::path> csv,
                           JournalWriter journal, ReportMeta meta, Baseline baseline, size_t planned,
                           std::vector<Record> already)
    : journal_(std::make_unique<JournalWriter>(std::move(journal))) {
    context_ = ReportContext{std::move(meta), std::move(baseline), planned, journal_->path()};
    reporters_.push_back(std::make_unique<JournalReporter>(*journal_));
    if (json) reporters_.push_back(std::make_unique<JsonReporter>(std::move(*json)));
    if (csv) reporters_.push_back(std::make_unique<CsvReporter>(std::move(*csv)));
    for (auto& reporter : reporters_) reporter->report_context(context_);
    std::stable_sort(already.begin(), already.end(),
                     [](const Record& a, const Record& b) { return a.job_id < b.job_id; });
    for (Record& r : already) {
        if (done_ids_.count(r.job_id)) continue;  // the journal's reader keeps the first of a pair
        done_ids_.insert(r.job_id);
        std::string text = nlohmann::json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        feed(r, std::move(text), RowOrigin::resumed);
    }
    render();
}

void ReportWriter::add_reporter(std::unique_ptr<Reporter> reporter) {
    reporter->report_context(context_);
    for (size_t i = 0; i < records_.size(); ++i)
        reporter->report_row(records_[i], record_texts_[i], i, RowOrigin::resumed);
    reporters_.push_back(std::move(reporter));
}

void ReportWriter::add(const Record& r) {
    const auto start = std::chrono::steady_clock::now();
    if (!done_ids_.insert(r.job_id).second)
        throw std::logic_error("job " + std::to_string(r.job_id) + " already has a row in " +
                               journal_->path().string());
    feed(r, nlohmann::json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), RowOrigin::finished);
    busy_ += std::chrono::steady_clock::now() - start;
    if (render_due()) render();  // counts itself
}

// Rows come in plan order, except after a resume that filled a gap: they are kept in order of job id.
void ReportWriter::feed(const Record& r, std::string text, RowOrigin origin) {
    const auto at = std::upper_bound(records_.begin(), records_.end(), r.job_id,
                                     [](uint64_t id, const Record& x) { return id < x.job_id; });
    const size_t index = size_t(at - records_.begin());
    for (auto& reporter : reporters_) reporter->report_row(r, text, index, origin);
    records_.insert(at, r);
    record_texts_.insert(record_texts_.begin() + static_cast<std::ptrdiff_t>(index), std::move(text));
}

bool ReportWriter::render_due() const {
    const auto since = std::chrono::steady_clock::now() - last_render_;
    if (render_interval_.count() == 0) return true;
    return since >= render_interval_ && since >= 50 * last_render_took_;
}

void ReportWriter::render() {
    const auto start = std::chrono::steady_clock::now();
    const ReportRows rows{records_, record_texts_};
    for (auto& reporter : reporters_) reporter->render(rows);
    last_render_ = std::chrono::steady_clock::now();
    last_render_took_ = last_render_ - start;
    busy_ += last_render_took_;
    rendering_ += last_render_took_;
    ++renders_;
}

}  // namespace kreg
