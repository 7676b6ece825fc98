#include "report/report_writer.hpp"

#include "report/atomic_file.hpp"
#include "report/csv.hpp"
#include "report/json_report.hpp"

namespace kreg {

ReportWriter::ReportWriter(std::optional<std::filesystem::path> json, std::optional<std::filesystem::path> csv,
                           nlohmann::json meta, std::optional<std::string> baseline)
    : json_path_(std::move(json)), csv_path_(std::move(csv)), meta_(std::move(meta)), baseline_(std::move(baseline)) {
    write();
}

void ReportWriter::add(const Record& r) {
    records_.push_back(r);
    write();
}

void ReportWriter::set_meta_field(const std::string& key, nlohmann::json value) {
    meta_[key] = std::move(value);
    write();
}

void ReportWriter::write() {
    if (json_path_) write_file_atomically(*json_path_, dump_report(report_json(meta_, records_, baseline_)));
    if (csv_path_) write_file_atomically(*csv_path_, csv_document(records_, baseline_));
}

}  // namespace kreg
