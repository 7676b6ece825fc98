// The gradebook as text: the CSV for spreadsheets and LMS imports, and the summary the grader prints.
// Both are derived from all(), i.e. from the student files, never kept separately.
#include "grade/gradebook.hpp"

#include "common/text.hpp"
#include "report/csv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace kreg {
namespace {
constexpr std::size_t kSummaryWidth = 60;

// The first line of text, printable, cut to width bytes with "..." when longer or when more lines follow.
std::string one_line(const std::string& text, std::size_t width) {
    const std::size_t end = text.find_first_of("\r\n");
    std::string line = printable_utf8(std::string_view(text).substr(0, end), width);
    if (end != std::string::npos && line.size() + 3 <= width && line.compare(line.size() - std::min<std::size_t>(3, line.size()), 3, "...") != 0)
        line += "...";
    return line;
}

std::string pad_right(const std::string& s, std::size_t width) {
    return s + std::string(width - std::min(width, s.size()), ' ');
}
std::string pad_left(const std::string& s, std::size_t width) {
    return std::string(width - std::min(width, s.size()), ' ') + s;
}
}  // namespace

std::string format_points(double points) {
    if (!std::isfinite(points)) return points != points ? "nan" : (points > 0 ? "inf" : "-inf");
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.4f", points);
    std::string text = buffer;
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
    if (text == "-0") text = "0";
    return text;
}

std::string Gradebook::csv() const {
    std::string out = "student,score,max,status,summary\n";
    for (const auto& r : all())
        out += csv_field(r.student) + "," + format_points(r.score) + "," + format_points(r.max_score) + "," +
               csv_field(r.status) + "," + csv_field(r.summary) + "\n";
    return out;
}

std::string format_checks(const StudentResult& result) {
    std::vector<std::vector<std::string>> rows{{"kind", "name", "points", "passed", "summary"}};
    for (const auto& c : result.checks)
        rows.push_back({printable_utf8(c.kind, 40), printable_utf8(c.name, 80),
                        format_points(c.points) + "/" + format_points(c.max_points), c.passed ? "yes" : "no",
                        one_line(c.summary, 100)});
    std::vector<std::size_t> widths(rows[0].size(), 0);
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    std::string out = "checks of " + result.student + ":\n";
    for (const auto& row : rows) {
        std::string line = " ";
        for (std::size_t i = 0; i < row.size(); ++i) line += " " + pad_right(row[i], i + 1 < row.size() ? widths[i] + 1 : 0);
        line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    }
    if (result.checks.empty()) out += "  (no checks)\n";
    return out;
}

std::string Gradebook::console_summary() const {
    const std::vector<StudentResult> results = all();
    if (results.empty()) return "no graded students in " + out_dir_.string() + "\n";

    struct Row {
        std::string student, score, max, status, summary;
    };
    std::vector<Row> rows{{"student", "score", "max", "status", "summary"}};
    for (const auto& r : results)
        rows.push_back({r.student, format_points(r.score), format_points(r.max_score), r.status,
                        one_line(r.summary, kSummaryWidth)});
    std::size_t w_student = 0, w_score = 0, w_max = 0, w_status = 0;
    for (const auto& row : rows) {
        w_student = std::max(w_student, row.student.size());
        w_score = std::max(w_score, row.score.size());
        w_max = std::max(w_max, row.max.size());
        w_status = std::max(w_status, row.status.size());
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line = pad_right(row.student, w_student) + "  " + pad_left(row.score, w_score) + "  " +
                           pad_left(row.max, w_max) + "  " + pad_right(row.status, w_status) + "  " + row.summary;
        line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    }

    // Totals: known statuses in their fixed order, then any other (from a newer grader) by name.
    std::map<std::string, int> counts;
    double score_sum = 0, max_sum = 0;
    for (const auto& r : results) {
        ++counts[r.status];
        score_sum += r.score;
        max_sum += r.max_score;
    }
    std::string totals;
    for (const auto& status : student_statuses()) {
        const auto it = counts.find(status);
        if (it == counts.end()) continue;
        totals += (totals.empty() ? "" : ", ") + std::to_string(it->second) + " " + status;
        counts.erase(it);
    }
    for (const auto& [status, count] : counts)
        totals += (totals.empty() ? "" : ", ") + std::to_string(count) + " " + status;
    const double n = double(results.size());
    out += std::to_string(results.size()) + (results.size() == 1 ? " student: " : " students: ") + totals +
           "; mean score " + format_points(score_sum / n) + " of " + format_points(max_sum / n) + "\n";
    return out;
}

}  // namespace kreg
