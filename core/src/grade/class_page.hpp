// The class page: <out>/index.html, one static file that staff open from disk or put on a course site.
// It shows the gradebook as a table that sorts by any column (a click, or index.html#sort=KEY:asc|desc),
// a histogram of the scores, and per published tier a board ranking students by their measured speed-up
// against the tier's reference (or fraction of the copy ceiling), each student linked to their feedback
// (student-view/<id>.html). Everything on it comes from the student views (student_view.hpp), so it
// names no hidden case or tier; the rubric's "leaderboard" hides the boards or leaves students off them.
//
// It needs nothing from a network and nothing beside it but the feedback pages it links: inline CSS, one
// inline script whose sha256 is the only script its Content Security Policy allows (so text that would
// escape html_escape still could not run), and no request of any kind (default-src 'none'). The page
// works without the script too; the script only sorts. When it has run it marks <html> with
// data-kreg-ready="<rows>", which the browser test reads.
#pragma once

#include "grade/gradebook.hpp"
#include "grade/rubric.hpp"

#include <string>
#include <vector>

namespace kreg {

// The page for staff's results (each is folded into its student view first), graded with rubric.
std::string class_page_html(const std::vector<StudentResult>& staff_results, const Rubric& rubric);

// Writes <gradebook dir>/index.html atomically from every result in the gradebook.
void write_class_page(const Gradebook& gradebook, const Rubric& rubric);

}  // namespace kreg
