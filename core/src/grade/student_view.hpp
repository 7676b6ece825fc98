// Two views of every result. Staff keep everything (students/<id>.json: every check, every case name,
// shape and seed, the evidence). A student may be handed only what the published rubric already tells:
// public cases in full, hidden ones (cases and tiers from the staff's extra rubric files) only as a count
// and their points, so that a result file or a gradebook line given to a student names no hidden case.
#pragma once

#include "grade/gradebook.hpp"
#include "grade/rubric.hpp"

#include <string>

namespace kreg {

// Whether check comes from a hidden case or tier: one whose rubric file is not the first (published) one.
bool is_hidden(const CheckResult& check, const Rubric& rubric);

// "90/100; odd shapes: 3/4 runs ok ...; hidden: 4/5 cases passed" — the summary of a result in which no
// hidden check is named (its failures are counted, not described).
std::string summarize_result(const StudentResult& result, const Rubric& rubric);

// The student's view: the hidden checks folded into one "hidden" check (points, maximum, "k/n passed"),
// no evidence of them, no rubric in meta (it names the hidden cases) and no hash of the secret seed or
// of the merged rubric in meta.provenance; the summary as summarize_result.
StudentResult student_view(const StudentResult& staff, const Rubric& rubric);

}  // namespace kreg
