#include "report/json_report.hpp"

#include "report/speedup.hpp"
#include "report/summary.hpp"

#include <fstream>
#include <stdexcept>

namespace kreg {

nlohmann::json report_json(const nlohmann::json& meta, const std::vector<Record>& records, const Baseline& baseline) {
    const auto speedups = speedups_vs_baseline(records, baseline);
    nlohmann::json rows = nlohmann::json::array();
    for (size_t i = 0; i < records.size(); ++i) {
        nlohmann::json row = records[i];
        if (baseline) row["speedup_vs_baseline"] = speedups[i] ? nlohmann::json(*speedups[i]) : nlohmann::json();
        rows.push_back(std::move(row));
    }
    nlohmann::json summary = nlohmann::json::object();
    for (const auto& [status, count] : count_by_status(records)) summary[std::string(to_string(status))] = count;
    return {{"meta", meta},
            {"baseline", baseline.to_json()},
            {"records", std::move(rows)},
            {"summary", std::move(summary)}};
}

std::string dump_report(const nlohmann::json& report) {
    return report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::vector<Record> read_records_json(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open report '" + path.string() + "'");
    nlohmann::json report;
    try {
        report = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error("report '" + path.string() + "' is not valid JSON: " + e.what());
    }
    const nlohmann::json* rows = &report;
    if (report.is_object()) {
        const auto it = report.find("records");
        if (it == report.end()) throw std::runtime_error("report '" + path.string() + "' has no \"records\"");
        rows = &*it;
    }
    if (!rows->is_array()) throw std::runtime_error("report '" + path.string() + "': \"records\" is not an array");
    std::vector<Record> records;
    records.reserve(rows->size());
    for (size_t i = 0; i < rows->size(); ++i) {
        try {
            records.push_back((*rows)[i].get<Record>());
        } catch (const std::exception& e) {
            throw std::runtime_error("report '" + path.string() + "': records[" + std::to_string(i) + "]: " + e.what());
        }
    }
    return records;
}

}  // namespace kreg
