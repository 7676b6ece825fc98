// The rows of a kreg JSON report, as `runner compare` needs them: read and checked field by field, so
// that a bad input names the file and the JSON pointer of what is wrong.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// What a row measured. Two rows are the same measurement when their keys are equal.
struct RowKey {
    std::string kernel;
    int64_t m = 0, n = 0, k = 0;
    std::string dtype;
    // Parameters that change what is measured, in canonical JSON ("" when none): the row's `params`
    // object, if it has one, and `extra.warm_cache` when true (a warm-cache time is not a cold-cache time),
    // and `timer` when it is "cupti" (a kernel time is not an event time).
    std::string params;
    friend bool operator<(const RowKey& a, const RowKey& b);
    friend bool operator==(const RowKey& a, const RowKey& b);
};
std::string shape_text(const RowKey& key);   // "MxNxK"
std::string params_text(const RowKey& key);  // "warm_cache=true", "" when none

struct ReportRow {
    RowKey key;
    std::size_t index = 0;  // position in the report's records
    std::string status;     // one of the RowStatus names
    std::string reason;
    std::vector<double> samples_ms;  // raw timed samples; empty for rows that were not timed
    // sha256 of the plugin binary that ran the row, from meta.plugins (matched by the record's plugin_path,
    // else by its plugin name when one build of that name was loaded); "" where the report does not say.
    std::string plugin_sha256;
    std::string timer;  // the record's "timer": "cupti" or "cuda_event" for a GPU's clock, "host" for the CPU's
};

struct ReportFile {
    std::string path;
    std::string timestamp, git_sha, gpu_name;  // "" where the report does not say
    std::string kreg_version;                  // meta.kreg_version, "" where the report does not say
    bool synthetic = false;
    std::optional<bool> complete;  // meta.progress.complete, when the report says
    std::size_t planned = 0;       // meta.progress.planned, 0 when the report does not say
    std::vector<ReportRow> rows;
};

// Reads path. Throws ConfigError (file, JSON pointer, what is wrong) for an unreadable file, invalid
// JSON, no `records` array, a record without kernel, m, n, k, dtype or status or with one of the wrong
// type, an unknown status, a sample that is not a finite number >= 0, an `ok` row without samples, and
// two records with the same key.
ReportFile read_report_rows(const std::filesystem::path& path);

}  // namespace kreg
