// What a student reads about their grade: student-view/<id>.md and student-view/<id>.html beside the
// JSON view (student_view.hpp). Both render one Feedback, made from the student's view only, so that
// neither can name a hidden case, shape or seed: the view has folded them into one "hidden" check before
// the feedback sees the result. Everything in it that a submission wrote (its kernel's name, its
// messages, its compiler's output) is made printable here and escaped by each renderer
// (report/markup_text.hpp).
#pragma once

#include "grade/gradebook.hpp"
#include "grade/rubric.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// One published check as the student sees it.
struct FeedbackCheck {
    std::string kind, name;
    double points = 0, max_points = 0;
    bool passed = false;
    std::string reason;  // the check's summary: "4/4 runs ok", "ratio 0.93 [0.92, 0.94] to cpu_naive, needs 0.2"
};

// A check that failed, with where and how to see it again on the student's own machine.
struct FeedbackFailure {
    std::string check;      // the check's name
    std::string where;      // "17x33x9, seed 2" (a correctness run), "at 64x64x64" (a tier)
    std::string reason;     // the row's reason, or the tier's verdict
    std::string reproduce;  // a runner command line, "" when none applies (a build, an audit, a load)
};

struct Feedback {
    std::string student, rubric, status, summary, graded_at;
    double score = 0, max_score = 0;
    std::vector<FeedbackCheck> checks;  // every check of the view but the hidden one, in grading order
    std::vector<FeedbackFailure> failures;
    std::string compiler_error;  // a failed build's first compiler error (compiler_error.hpp), else ""
    struct Hidden {
        double points = 0, max_points = 0;
        std::string passed;  // "1/2 cases passed"
    };
    std::optional<Hidden> hidden;  // set when the rubric has hidden cases or tiers this result reached
    // An unconfined self-check (grade/self_check.hpp): what it was, and the names of the defences that did not apply.
    struct Unconfined {
        std::string summary;
        std::string not_applied;  // "namespaces, seccomp, ..."
    };
    std::optional<Unconfined> unconfined;
};

// The feedback on staff's result: student_view(staff, rubric) is taken first, and only it is read.
Feedback make_feedback(const StudentResult& staff, const Rubric& rubric);

// The same feedback as Markdown and as one self-contained HTML page (inline CSS, no script, a Content
// Security Policy that allows nothing to be loaded), for a file a student opens from disk.
std::string feedback_markdown(const Feedback& feedback);
std::string feedback_html(const Feedback& feedback);

// Writes <out>/student-view/<student>.md and .html atomically, beside the JSON view.
void write_student_feedback(const std::filesystem::path& out_dir, const StudentResult& staff, const Rubric& rubric);

}  // namespace kreg
