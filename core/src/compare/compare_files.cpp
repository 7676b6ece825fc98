#include "compare/compare_files.hpp"

#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace kreg {
namespace fs = std::filesystem;

double parse_threshold_percent(std::string text) {
    if (!text.empty() && text.back() == '%') text.pop_back();
    std::size_t used = 0;
    double percent = 0;
    try {
        percent = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || !std::isfinite(percent) || percent < 0 || percent >= 100)
        throw std::invalid_argument("--threshold: expected a percentage from 0 to below 100 such as 5% or 2.5, got '" +
                                    text + "'");
    return percent / 100.0;
}

void check_output_path(const std::optional<std::string>& path, bool force, const char* option) {
    if (!path) return;
    if (path->empty()) throw std::invalid_argument(std::string(option) + ": empty path");
    std::error_code ec;
    if (fs::is_directory(*path, ec))
        throw std::invalid_argument(std::string(option) + ": " + *path + " is a directory");
    if (!force && fs::exists(*path, ec))
        throw std::invalid_argument(std::string(option) + ": " + *path + " exists (use --force to overwrite it)");
}

ComparedReports compare_report_files(const std::vector<std::string>& a_paths, const std::vector<std::string>& b_paths,
                                     const CompareOptions& options) {
    ComparedReports out;
    for (const auto& path : a_paths) out.runs_a.push_back(read_report_rows(path));
    for (const auto& path : b_paths) out.runs_b.push_back(read_report_rows(path));
    std::vector<const ReportFile*> side_a, side_b;
    for (const auto& r : out.runs_a) side_a.push_back(&r);
    for (const auto& r : out.runs_b) side_b.push_back(&r);
    out.result = compare_runs(side_a, side_b, options);
    return out;
}

}  // namespace kreg
