// One row model, several printers (google/benchmark's BenchmarkReporter, nvbench's printer_base): each
// reporter is told the run's context once, then every finished row, then when to write out what it holds.
// The journal, the JSON report, the CSV, the progress lines and the console table are siblings over the same rows;
// ReportWriter (report_writer.hpp) feeds them and decides when a render is due.
#pragma once

#include "common/baseline.hpp"
#include "common/job.hpp"
#include "report/journal.hpp"
#include "report/meta.hpp"

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// What every reporter is told once, before any row.
struct ReportContext {
    ReportMeta meta;
    Baseline baseline;
    size_t planned = 0;                  // jobs in the plan
    std::filesystem::path journal_path;  // where the rows are kept (meta.progress.journal)
};

// The rows so far, in plan order, each with its compact JSON text (to_json(Record), made once for all).
struct ReportRows {
    const std::vector<Record>& records;
    const std::vector<std::string>& texts;
};

// Where a row comes from: finished in this run, or read back from the journal of the run it resumes.
enum class RowOrigin { finished, resumed };

class Reporter {
public:
    virtual ~Reporter() = default;
    // Once, before any row.
    virtual void report_context(const ReportContext& context) = 0;
    // A row, which takes place `index` of the rows in plan order; text is its compact JSON.
    virtual void report_row(const Record& r, const std::string& text, size_t index, RowOrigin origin) = 0;
    // Writes out every row reported so far (rows holds them, in plan order).
    virtual void render(const ReportRows& rows) = 0;
};

// The JSONL journal: a finished row is appended at once (one write); render syncs it.
class JournalReporter final : public Reporter {
public:
    explicit JournalReporter(JournalWriter& journal) : journal_(journal) {}
    void report_context(const ReportContext&) override {}
    void report_row(const Record& r, const std::string& text, size_t index, RowOrigin origin) override;
    void render(const ReportRows&) override { journal_.sync(); }

private:
    JournalWriter& journal_;
};

// The JSON report (json_report.hpp's layout), rewritten atomically at each render with meta.progress.
class JsonReporter final : public Reporter {
public:
    explicit JsonReporter(std::filesystem::path path) : path_(std::move(path)) {}
    void report_context(const ReportContext& context) override { context_ = context; }
    void report_row(const Record&, const std::string&, size_t, RowOrigin) override {}
    void render(const ReportRows& rows) override;

private:
    std::filesystem::path path_;
    ReportContext context_;
};

// The CSV (csv.hpp), rewritten atomically at each render. Without a baseline each row's line is made once;
// with one, a later baseline row changes the speed-up of earlier rows, so the file is made afresh.
class CsvReporter final : public Reporter {
public:
    explicit CsvReporter(std::filesystem::path path) : path_(std::move(path)) {}
    void report_context(const ReportContext& context) override { baseline_ = context.baseline; }
    void report_row(const Record& r, const std::string& text, size_t index, RowOrigin origin) override;
    void render(const ReportRows& rows) override;

private:
    std::filesystem::path path_;
    Baseline baseline_;
    std::vector<std::string> lines_;  // each row's line, in plan order (no baseline only)
};

// The console table (console.hpp's format_table) of every row, written to out at each render: the sweep
// renders it once, at its end.
class ConsoleTableReporter final : public Reporter {
public:
    explicit ConsoleTableReporter(std::ostream& out) : out_(out) {}
    void report_context(const ReportContext& context) override { baseline_ = context.baseline; }
    void report_row(const Record&, const std::string&, size_t, RowOrigin) override {}
    void render(const ReportRows& rows) override;

private:
    std::ostream& out_;
    Baseline baseline_;
};

// The sweep's progress, one line per finished row on out ("[ 3/12] cpu_naive  fp32  64x64x64  ok  0.01 ms ..."),
// with " [device N]" for a row a --devices lane ran. Rows read back from a resumed run's journal are counted,
// not printed. A skipped row whose reason was already printed is counted, not printed again (a sweep of 475 CUDA
// rows on a machine without a GPU is one line, not 475); with quiet_skips (the reason was said before any row,
// because nothing can be measured) none is. finish() names the skipped rows it did not print.
class ProgressReporter final : public Reporter {
public:
    ProgressReporter(std::ostream& out, bool quiet_skips) : out_(out), quiet_skips_(quiet_skips) {}
    void report_context(const ReportContext& context) override { planned_ = context.planned; }
    void report_row(const Record& r, const std::string& text, size_t index, RowOrigin origin) override;
    void render(const ReportRows&) override {}
    // "runner: N more row(s) skipped: REASON" per reason whose rows were not all printed (not with quiet_skips).
    void finish();

private:
    std::ostream& out_;
    bool quiet_skips_;
    size_t planned_ = 0, done_ = 0;
    std::map<std::string, size_t> skips_not_shown_;  // skip reason -> rows not printed for it
};

}  // namespace kreg
