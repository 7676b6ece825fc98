#include "grade/student_view.hpp"

#include <sstream>

namespace kreg {

bool is_hidden(const CheckResult& check, const Rubric& rubric) {
    if (rubric.sources.size() < 2) return false;
    const std::string& published = rubric.sources.front();
    if (check.kind == "correctness")
        for (const auto& c : rubric.correctness)
            if (c.name == check.name) return c.source != published;
    if (check.kind == "performance")
        for (const auto& t : rubric.performance)
            if (t.name == check.name) return t.source != published;
    return false;
}

std::string summarize_result(const StudentResult& result, const Rubric& rubric) {
    std::ostringstream summary;
    summary << format_points(result.score) << "/" << format_points(result.max_score);
    int hidden = 0, hidden_passed = 0;
    for (const auto& c : result.checks) {
        if (c.kind != "correctness" && c.kind != "performance") continue;
        if (is_hidden(c, rubric)) {
            ++hidden;
            hidden_passed += c.passed ? 1 : 0;
        } else if (!c.passed) {
            summary << "; " << c.name << ": " << c.summary;
        }
    }
    if (hidden > 0) summary << "; hidden: " << hidden_passed << "/" << hidden << " cases passed";
    return summary.str();
}

StudentResult student_view(const StudentResult& staff, const Rubric& rubric) {
    StudentResult view = staff;
    view.checks.clear();
    CheckResult hidden{"hidden", "hidden cases", 0, 0, true, "", nlohmann::json::object()};
    int count = 0, passed = 0;
    for (const auto& c : staff.checks) {
        if (!is_hidden(c, rubric)) {
            view.checks.push_back(c);
            continue;
        }
        ++count;
        passed += c.passed ? 1 : 0;
        hidden.points += c.points;
        hidden.max_points += c.max_points;
        hidden.passed = hidden.passed && c.passed;
    }
    if (count > 0) {
        hidden.summary = std::to_string(passed) + "/" + std::to_string(count) + " cases passed";
        view.checks.push_back(hidden);
    }
    view.meta.erase("rubric");
    view.summary = staff.status == "graded" || staff.summary.rfind(format_points(staff.score) + "/", 0) == 0
                       ? summarize_result(staff, rubric)
                       : staff.summary;
    return view;
}

}  // namespace kreg
