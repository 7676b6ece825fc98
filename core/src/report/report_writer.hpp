// Keeps the JSON and CSV reports of a sweep up to date on disk as rows arrive.
#pragma once

#include "common/job.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

class ReportWriter {
public:
    // Either path may be absent (that report is not written). Both files are written at once, with no
    // rows, so that an unwritable path fails before the sweep starts rather than after it.
    // Throws std::runtime_error naming the path.
    ReportWriter(std::optional<std::filesystem::path> json, std::optional<std::filesystem::path> csv,
                 nlohmann::json meta, std::optional<std::string> baseline);

    // Appends a row and rewrites both files atomically, so that an interrupted sweep keeps every finished
    // row and a reader never sees a partial file. Whole rewrites (not appends) because a baseline row
    // that arrives later changes the speed-ups of earlier rows.
    void add(const Record& r);

    // Sets meta[key] (e.g. GPU facts learned once a worker ran) and rewrites both files.
    void set_meta_field(const std::string& key, nlohmann::json value);

    const std::vector<Record>& records() const { return records_; }
    const nlohmann::json& meta() const { return meta_; }

private:
    void write();

    std::optional<std::filesystem::path> json_path_, csv_path_;
    nlohmann::json meta_;
    std::optional<std::string> baseline_;
    std::vector<Record> records_;
};

}  // namespace kreg
