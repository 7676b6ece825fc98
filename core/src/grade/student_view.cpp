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
    if (view.meta.is_object()) view.meta.erase("rubric");  // an "error" result may have no meta at all
    // A small secret seed is found again from its sha256 by trying them all, and the merged rubric's sha256
    // confirms a guess at the hidden cases: neither is the student's to read.
    if (view.meta.contains("provenance") && view.meta["provenance"].is_object())
        for (const char* key : {"secret_sha256", "rubric_sha256"}) view.meta["provenance"].erase(key);
    view.summary = staff.status == "graded" || staff.summary.rfind(format_points(staff.score) + "/", 0) == 0
                       ? summarize_result(staff, rubric)
                       : staff.summary;
    return view;
}

}  // namespace kreg
