// feedback_markdown: the feedback as a Markdown file. Every text from the result goes through
// markdown_text (one line, nothing that can become markup) or markdown_code_block (verbatim, fenced).
#include "grade/feedback.hpp"

#include "report/markup_text.hpp"

namespace kreg {

std::string feedback_markdown(const Feedback& f) {
    std::string md = "# Feedback for " + markdown_text(f.student) + "\n\n";
    md += "**Score: " + format_points(f.score) + "/" + format_points(f.max_score) + "** (status " +
          markdown_text(f.status) + ", rubric " + markdown_text(f.rubric) +
          (f.graded_at.empty() ? "" : ", graded " + markdown_text(f.graded_at)) + ")\n\n";
    if (f.unconfined)
        md += "**Unconfined self-check, not a grade:** " + markdown_text(f.unconfined->summary) +
              ". Not applied here: " + markdown_text(f.unconfined->not_applied) + ".\n\n";
    md += "Summary: " + markdown_text(f.summary) + "\n\n";

    md += "## Checks\n\n| check | points | passed | why |\n|---|---|---|---|\n";
    for (const auto& c : f.checks)
        md += "| " + markdown_text(c.kind + ": " + c.name) + " | " + format_points(c.points) + "/" +
              format_points(c.max_points) + " | " + (c.passed ? "yes" : "no") + " | " + markdown_text(c.reason) +
              " |\n";
    if (f.hidden)
        md += "| hidden cases | " + format_points(f.hidden->points) + "/" + format_points(f.hidden->max_points) +
              " | " + markdown_text(f.hidden->passed) + " | their names, shapes and seeds are not shown |\n";
    md += "\n";

    if (!f.compiler_error.empty())
        md += "## The first compiler error\n\n" + markdown_code_block(f.compiler_error) + "\n";

    if (!f.failures.empty()) {
        md += "## What failed, and how to see it on your machine\n\n";
        md +=
            "The commands run your plugin as grading does, at the failing shape and the published seed (grading draws "
            "fresh inputs for every call, so the values differ; the shape and the checks are the same).\n\n";
        for (const auto& failure : f.failures) {
            md += "- **" + markdown_text(failure.check) + "**" +
                  (failure.where.empty() ? "" : " (" + markdown_text(failure.where) + ")") + ": " +
                  markdown_text(failure.reason) + "\n";
            if (!failure.reproduce.empty()) md += "\n" + markdown_code_block(failure.reproduce) + "\n";
        }
        md += "\n";
    }
    if (f.hidden)
        md += "## Hidden cases\n\nThe hidden cases and tiers earned " + format_points(f.hidden->points) + " of " +
              format_points(f.hidden->max_points) + " points in total (" + markdown_text(f.hidden->passed) + ").\n";
    return md;
}

}  // namespace kreg
