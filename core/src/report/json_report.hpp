// The JSON report: {"meta": ..., "baseline": name, {dtype: name} or null, "records": [...],
// "summary": {status: count}}.
#pragma once

#include "common/baseline.hpp"
#include "common/job.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// Each record is to_json(Record) plus "speedup_vs_baseline" (number or null) when a baseline is given.
// The summary counts every status, zeros included.
nlohmann::json report_json(const nlohmann::json& meta, const std::vector<Record>& records, const Baseline& baseline);

// Report text as written to disk: indented, invalid UTF-8 (e.g. in a plugin's error message) replaced
// instead of throwing.
std::string dump_report(const nlohmann::json& report);

// The records of a report written by report_json (a bare array of records is accepted too).
// Throws std::runtime_error naming the file, and the record's index when one is malformed.
std::vector<Record> read_records_json(const std::filesystem::path& path);

}  // namespace kreg
