// The gradebook as text: the CSV for spreadsheets and LMS imports, and the summary the grader prints.
// Both are derived from all(), i.e. from the student files, never kept separately.
#include "grade/gradebook.hpp"

#include "common/text.hpp"
#include "grade/self_check.hpp"
#include "grade/student_view.hpp"
#include "report/console.hpp"
#include "report/csv.hpp"
#include "report/printable_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace kreg {
namespace {
constexpr std::size_t kSummaryWidth = 60;         // the console summary's column
constexpr std::size_t kCheckSummaryWidth = 100;   // format_checks' column
constexpr std::size_t kWholeSummaryBytes = 4000;  // what record() keeps of a summary anyway

// Whether text can stand in a table's column as it is: one printable line of at most width bytes. A
// longer or multi-line text goes whole on lines of its own under its row (indented_text), never cut.
bool fits_in_column(const std::string& text, std::size_t width) {
    const std::string printable = printable_lines(text, kWholeSummaryBytes);
    return printable.size() <= width && printable.find_first_of("\r\n") == std::string::npos;
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

std::vector<GradebookColumn> gradebook_columns(const Rubric& rubric) {
    std::vector<GradebookColumn> columns;
    // Published entries by name, hidden ones only as one column per section: a spreadsheet handed to a
    // student (or its header, which every row shares) must not name a hidden case.
    auto section = [&](const std::string& kind, const std::vector<std::string>& names) {
        GradebookColumn hidden{"hidden:" + kind, kind, {}};
        for (const auto& name : names) {
            if (is_hidden(CheckResult{kind, name, 0, 0, false, "", nullptr}, rubric))
                hidden.names.push_back(name);
            else
                columns.push_back({kind + ":" + name, kind, {name}});
        }
        if (!hidden.names.empty()) columns.push_back(std::move(hidden));
    };
    std::vector<std::string> cases, tiers;
    for (const auto& c : rubric.correctness) cases.push_back(c.name);
    for (const auto& t : rubric.performance) tiers.push_back(t.name);
    section("correctness", cases);
    section("performance", tiers);
    return columns;
}

std::string Gradebook::csv() const {
    const std::vector<GradebookColumn> columns = rubric_ ? gradebook_columns(*rubric_) : std::vector<GradebookColumn>{};
    std::string out = "student,score,max,status,summary";
    for (const auto& column : columns) out += "," + csv_field(column.header);
    out += ",graded_at,wall_s,peak_mb,submission_removed\n";
    for (const auto& r : all()) {
        out += csv_field(r.student) + "," + format_points(r.score) + "," + format_points(r.max_score) + "," +
               csv_field(r.status) + "," + csv_field(r.summary);
        for (const auto& column : columns) {
            // The points of every check in the column; empty when the result has none of them.
            double points = 0;
            bool found = false;
            for (const auto& check : r.checks)
                if (check.kind == column.kind &&
                    std::find(column.names.begin(), column.names.end(), check.name) != column.names.end()) {
                    points += check.points;
                    found = true;
                }
            out += "," + (found ? format_points(points) : std::string());
        }
        out += "," + csv_field(r.graded_at) + "," + (r.graded_at.empty() ? std::string() : format_points(r.wall_s)) +
               "," + (r.peak_mb ? format_points(std::round(*r.peak_mb * 10) / 10) : std::string()) + "," +
               (r.submission_removed ? "yes" : "");
        out += "\n";
    }
    return out;
}

std::string format_checks(const StudentResult& result) {
    std::vector<std::vector<std::string>> rows{{"kind", "name", "points", "passed", "summary"}};
    std::vector<std::string> below{""};  // what goes under each row: a summary too long for its column
    for (const auto& c : result.checks) {
        const bool fits = fits_in_column(c.summary, kCheckSummaryWidth);
        rows.push_back({printable_utf8(c.kind, 40), printable_utf8(c.name, 80),
                        format_points(c.points) + "/" + format_points(c.max_points), c.passed ? "yes" : "no",
                        fits ? printable_utf8(c.summary, kCheckSummaryWidth) : ""});
        below.push_back(fits ? "" : indented_text(c.summary, 4, kWholeSummaryBytes));
    }
    std::vector<std::size_t> widths(rows[0].size(), 0);
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    std::string out = "checks of " + result.student + ":\n";
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto& row = rows[r];
        std::string line = " ";
        for (std::size_t i = 0; i < row.size(); ++i)
            line += " " + pad_right(row[i], i + 1 < row.size() ? widths[i] + 1 : 0);
        line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n" + below[r];
    }
    if (result.checks.empty()) out += "  (no checks)\n";
    if (const auto& self_check = result.unconfined_self_check)
        out += "UNCONFINED SELF-CHECK, not a grade:\n" + indented_text(self_check->summary, 4, kWholeSummaryBytes) +
               "  not applied here: " + entry_names(self_check->not_applied) + "\n";
    return out;
}

std::string Gradebook::console_summary() const {
    const std::vector<StudentResult> results = all();
    if (results.empty()) return "no graded students in " + out_dir_.string() + "\n";

    struct Row {
        std::string student, score, max, status, summary, below;  // below: a summary too long for its column
    };
    std::vector<Row> rows{{"student", "score", "max", "status", "summary", ""}};
    for (const auto& r : results) {
        // A result whose submission is gone is not a current one: said first, on its own row.
        const std::string summary = (r.submission_removed ? "[submission removed] " : "") + r.summary;
        const bool fits = fits_in_column(summary, kSummaryWidth);
        rows.push_back({r.student, format_points(r.score), format_points(r.max_score), r.status,
                        fits ? printable_utf8(summary, kSummaryWidth) : "",
                        fits ? "" : indented_text(summary, 4, kWholeSummaryBytes)});
    }
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
        out += line + "\n" + row.below;
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
