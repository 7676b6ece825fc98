// feedback_html: the feedback as one self-contained page. No script, no request: its Content Security
// Policy forbids loading anything (default-src 'none'), so even text that escaped html_escape could not
// run or fetch; and every text from the result goes through html_escape.
#include "grade/feedback.hpp"

#include "report/markup_text.hpp"

namespace kreg {
namespace {
const char* const kStyle =
    "body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;width:100%}th,td{border:1px solid #ccc;padding:.3em "
    ".5em;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}.yes{color:#176417}.no{color:#a01010}pre{background:#f6f6f6;padding:.6em;overflow-x:auto;"
    "white-space:pre-wrap}.score{font-size:1.4em}";
}  // namespace

std::string feedback_html(const Feedback& f) {
    const auto e = [](const std::string& text) { return html_escape(text); };
    std::string h =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>Feedback for " +
        e(f.student) + "</title>\n<style>" + kStyle + "</style></head>\n<body>\n";
    if (!f.unconfined) h += "<p><a href=\"../index.html\">class page</a></p>\n";  // a self-check writes none
    h += "<h1>Feedback for " + e(f.student) + "</h1>\n";
    h += "<p class=\"score\"><strong>Score: " + format_points(f.score) + "/" + format_points(f.max_score) +
         "</strong></p>\n";
    h += "<p>Status " + e(f.status) + ", rubric " + e(f.rubric) +
         (f.graded_at.empty() ? "" : ", graded " + e(f.graded_at)) + ".</p>\n";
    if (f.unconfined)
        h += "<p class=\"unconfined\"><strong>Unconfined self-check, not a grade:</strong> " +
             e(f.unconfined->summary) + ". Not applied here: " + e(f.unconfined->not_applied) + ".</p>\n";
    h += "<pre class=\"summary\">" + e(f.summary) + "</pre>\n";

    h += "<h2>Checks</h2>\n<table><thead><tr><th>check</th><th>points</th><th>passed</th><th>why</th></tr></"
         "thead><tbody>\n";
    for (const auto& c : f.checks)
        h += "<tr><td>" + e(c.kind + ": " + c.name) + "</td><td>" + format_points(c.points) + "/" +
             format_points(c.max_points) + "</td><td class=\"" + (c.passed ? "yes\">yes" : "no\">no") + "</td><td>" +
             e(c.reason) + "</td></tr>\n";
    if (f.hidden)
        h += "<tr><td>hidden cases</td><td>" + format_points(f.hidden->points) + "/" +
             format_points(f.hidden->max_points) + "</td><td>" + e(f.hidden->passed) +
             "</td><td>their names, shapes and seeds are not shown</td></tr>\n";
    h += "</tbody></table>\n";

    if (!f.compiler_error.empty())
        h += "<h2>The first compiler error</h2>\n<pre class=\"compiler-error\">" + e(f.compiler_error) + "</pre>\n";

    if (!f.failures.empty()) {
        h += "<h2>What failed, and how to see it on your machine</h2>\n<p>The commands run your plugin as grading "
             "does, at the "
             "failing shape and the published seed (grading draws fresh inputs for every call, so the values differ; "
             "the shape and "
             "the checks are the same).</p>\n<ul>\n";
        for (const auto& failure : f.failures) {
            h += "<li><strong>" + e(failure.check) + "</strong>" +
                 (failure.where.empty() ? "" : " (" + e(failure.where) + ")") + ": " + e(failure.reason);
            if (!failure.reproduce.empty()) h += "<pre class=\"reproduce\">" + e(failure.reproduce) + "</pre>";
            h += "</li>\n";
        }
        h += "</ul>\n";
    }
    if (f.hidden)
        h += "<h2>Hidden cases</h2>\n<p>The hidden cases and tiers earned " + format_points(f.hidden->points) + " of " +
             format_points(f.hidden->max_points) + " points in total (" + e(f.hidden->passed) + ").</p>\n";
    return h + "</body></html>\n";
}

}  // namespace kreg
