// Where a sweep's reports go, whether they may be written there, and what a resumed sweep reads back:
// the report-file decisions of the sweep command, kept out of its control flow.
#pragma once

#include "report/journal.hpp"
#include "sweep/plan.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// The placeholder a report path may carry, replaced by the run's start time (UTC, 20250101-120000).
inline constexpr const char* kTimePlaceholder = "{time}";

struct ReportTargets {
    std::filesystem::path json, csv, journal;
};

// Replaces {time} in both templates with now; when that name is taken (two runs in one second) a
// "-2", "-3", ... follows the time, so that a timestamped name never overwrites. Templates without
// {time} are taken as they are.
ReportTargets choose_report_targets(const std::string& json_template, const std::string& csv_template);

// The CSV report's path when only the JSON one is named: beside it, the same name with .csv ("r/x.json" ->
// "r/x.csv"; a JSON path that already ends in .csv gets a second ".csv").
std::string csv_beside(const std::string& json_path);

// "" when none of the targets exists (or force); otherwise the refusal, naming the file, what it holds
// (a complete report, or an interrupted one with how many rows) and the way out (--force, --resume).
std::string why_not_overwrite(const ReportTargets& targets, bool force, const std::string& runner);

// sha256 over every job of the plan (id, kernel, plugin file, shape, dtype, seed, settings): what a
// resumed sweep must make again from the recorded command line before it may add a row.
std::string plan_fingerprint(const std::vector<PlannedJob>& plan);

// A sweep to continue, read from its journal.
struct ResumeState {
    std::filesystem::path journal_path;  // absolute
    JournalContents contents;
};
// Reads the journal of REPORT (the .json or the .journal.jsonl). On failure returns nullopt with the
// message (naming the file) in `error`.
std::optional<ResumeState> read_resume_state(const std::string& report, std::string& error);

}  // namespace kreg
