// Keeps a sweep's rows and feeds them to its reporters (reporter.hpp): the journal, and the JSON and CSV
// reports rendered from the same rows.
#pragma once

#include "common/baseline.hpp"
#include "common/job.hpp"
#include "report/journal.hpp"
#include "report/meta.hpp"
#include "report/reporter.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace kreg {

class ReportWriter {
public:
    // Either report path may be absent (that report is not written). `already` are the rows a resumed
    // sweep read back from the journal. The reports are rendered at once, so that an unwritable path fails
    // before the sweep starts rather than after it. Throws std::runtime_error naming the path.
    ReportWriter(std::optional<std::filesystem::path> json, std::optional<std::filesystem::path> csv,
                 JournalWriter journal, ReportMeta meta, Baseline baseline, size_t planned,
                 std::vector<Record> already = {});

    // Appends the row to the journal (one write) and renders the reports when a render is due. A row
    // for a job that already has one is refused (std::logic_error): a report never holds a job twice.
    void add(const Record& r);

    // Renders the JSON and CSV from every row now (atomically: temp file + rename) and syncs the journal.
    void render();

    // One more reporter after the journal and the reports (the sweep's progress lines): told the context, and the
    // rows already held as resumed ones, at once.
    void add_reporter(std::unique_ptr<Reporter> reporter);

    // What every reporter was told, and the rows so far: for a reporter fed apart (the console table).
    const ReportContext& context() const { return context_; }
    ReportRows rows() const { return {records_, record_texts_}; }

    // Rows in plan order (by job id), whatever order they arrived in.
    const std::vector<Record>& records() const { return records_; }
    const ReportMeta& meta() const { return context_.meta; }
    size_t planned() const { return context_.planned; }
    size_t done() const { return records_.size(); }
    bool has(uint64_t job_id) const { return done_ids_.count(job_id) > 0; }
    JournalWriter& journal() { return *journal_; }
    // Seconds spent in add() and render() so far: what keeping the reports costs the sweep.
    double seconds_writing() const { return std::chrono::duration<double>(busy_).count(); }
    // Of those, the renders (how many, how long) and the journal's fdatasyncs.
    size_t renders() const { return renders_; }
    double seconds_rendering() const { return std::chrono::duration<double>(rendering_).count(); }
    double seconds_syncing() const { return journal_->seconds_syncing(); }

    // Renders are due every `interval`, but never more often than 50 times the last render took: a
    // render costs O(rows), so a fixed period would make a long sweep O(rows²) again. This bounds the
    // time spent rendering to about 2% of the sweep's, whatever its size. An interval of 0 renders after
    // every row (O(rows²) again: for tests).
    void set_render_interval(std::chrono::milliseconds interval) { render_interval_ = interval; }

private:
    bool render_due() const;

    void feed(const Record& r, std::string text, RowOrigin origin);

    // Owned here (the journal reporter writes to it), on the heap so that a moved writer keeps it in place.
    std::unique_ptr<JournalWriter> journal_;
    ReportContext context_;
    // The journal's first: a report never shows a row its journal could still lose.
    std::vector<std::unique_ptr<Reporter>> reporters_;
    std::vector<Record> records_;
    // Each row's compact JSON text, in records_' order: serialised once for the journal, then copied
    // into every render, so a render costs a copy of the rows rather than a JSON tree of them.
    std::vector<std::string> record_texts_;
    std::unordered_set<uint64_t> done_ids_;
    std::chrono::milliseconds render_interval_{5000};
    std::chrono::steady_clock::time_point last_render_{};
    std::chrono::steady_clock::duration last_render_took_{};
    std::chrono::steady_clock::duration busy_{};
    std::chrono::steady_clock::duration rendering_{};
    size_t renders_ = 0;
};

}  // namespace kreg
