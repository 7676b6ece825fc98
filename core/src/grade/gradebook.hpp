// The gradebook: one folder holding a JSON file per graded student and a CSV derived from them.
//
//   <out>/students/<student>.json   the StudentResult, written atomically once the student is finished
//   <out>/gradebook.csv             rewritten atomically from every students/*.json after each record()
//
// The per-student files are the truth and the CSV is only ever derived from them, so a grader killed at
// any point loses at most the student in progress and never duplicates one; a rerun skips the students
// that have a file (has()) unless asked to regrade them.
#pragma once

#include "grade/rubric.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

// One check of a submission and what it earned.
struct CheckResult {
    std::string kind;  // "audit", "build", "load", "correctness", "performance"
    std::string name;  // the rubric case or tier name, or the stage's own name
    double points = 0, max_points = 0;
    bool passed = false;
    std::string summary;      // one line for people
    nlohmann::json evidence;  // what the verdict rests on: rows, ratios, the audit's findings...
};

// A student's self-check where this build cannot confine untrusted code (Windows: GradeOptions::unconfined_self_check):
// what it was, what still held, and each defence of the Linux grader (docs/GRADING.md) that did not. Such a result
// is a student's own check of their plugin against a published rubric, never a grade of record.
struct UnconfinedSelfCheck {
    std::string summary;                   // one line for people
    std::vector<std::string> applied;      // "<what held>: <how>"
    std::vector<std::string> not_applied;  // "<defence>: what the Linux grader does, and what held here instead"
    nlohmann::json to_json() const;        // {"summary", "applied", "not_applied"}
    // Throws std::invalid_argument naming the JSON path (where) of what is missing or mistyped.
    static UnconfinedSelfCheck from_json(const nlohmann::json& j, const std::string& where);
};

struct StudentResult {
    std::string student;     // the id: [A-Za-z0-9_.-], not starting with '.' (student_id_from_path)
    std::string submission;  // the path graded
    std::string status;      // one of student_statuses()
    double score = 0, max_score = 0;
    std::string summary;
    std::vector<CheckResult> checks;
    nlohmann::json sandbox;           // limits and how the worker ended
    nlohmann::json meta;              // rubric, grader version, times...
    std::string graded_at;            // when grading finished, UTC ISO 8601; "" in results of an older kreg
    double wall_s = 0;                // how long grading took, build included
    std::optional<double> peak_mb;    // the most memory a worker running the submission held (MiB); unknown: none
    bool submission_removed = false;  // its submission is gone since it was graded: the result is not a current one
    // Set when the submission ran unconfined, as a student's self-check (written only then: "unconfined_self_check").
    std::optional<UnconfinedSelfCheck> unconfined_self_check;

    // {"schema": "kreg-student-result", "schema_version": 1, "student": ..., ...}
    nlohmann::json to_json() const;
    // Throws std::invalid_argument saying what is missing or wrong (unknown status, a schema or major
    // version that is not this one, wrong types).
    static StudentResult from_json(const nlohmann::json& j);
};

// Every way the grading of one submission can end, in the order totals are listed: "graded" (every
// correctness run passed), then the run outcomes of grade/outcome.hpp (wrong_result, failed, timeout,
// crashed, aborted, exited, cuda_error, sandbox_violation, protocol_violation, memory_limit), then the stages that stop
// grading early (rejected_audit, build_failed, load_failed) and "error".
const std::vector<std::string>& student_statuses();

// Whether id can name a student's file: non-empty, at most 200 characters of [A-Za-z0-9_.-], and not
// starting with '.' (hidden files are the atomic writer's temporaries and are not read back).
bool is_valid_student_id(std::string_view id);

// The id of a submission: its folder name when path is a directory (a trailing '/' is ignored), else its
// file stem ("subs/alice.so" -> "alice"). Characters outside [A-Za-z0-9_.-] become '_', as do leading
// dots; cut to 200 characters. std::invalid_argument when nothing is left (e.g. "").
std::string student_id_from_path(const std::filesystem::path& submission);

class Gradebook {
public:
    // rubric: the rubric this run grades with; it gives the CSV its per-section columns (see csv()).
    explicit Gradebook(std::filesystem::path out_dir, std::optional<Rubric> rubric = std::nullopt);

    const std::filesystem::path& dir() const { return out_dir_; }
    std::filesystem::path student_file(const std::string& student) const;  // <out>/students/<student>.json
    std::filesystem::path csv_file() const;                                // <out>/gradebook.csv

    // Whether a finished result for student is on disk: the file exists and reads back as that student's
    // result. A corrupt file does not count, so a resumed run grades that student again and replaces it.
    bool has(const std::string& student) const;

    // Writes students/<student>.json atomically, every string in it made printable first (valid UTF-8, no
    // control characters but line ends in summaries and evidence, lengths capped), then rewrites gradebook.csv
    // atomically from every student file. std::invalid_argument for an invalid student id; std::runtime_error when a
    // write fails.
    void record(const StudentResult& result);

    // Every student file, sorted by student. A file that cannot be read or parsed, or that names another
    // student, is not dropped: it comes back as status "error" with the reason in summary and
    // meta["corrupt_file"] = its path, so that it shows in the CSV and the console.
    std::vector<StudentResult> all() const;

    // "student,score,max,status,summary", then one column per section of the rubric (gradebook_columns),
    // then "graded_at,wall_s,peak_mb,submission_removed" ("yes" or empty), and one row per all() entry, each line
    // ending in "\n"; fields quoted per RFC 4180 when needed; scores with at most 4 decimals and no trailing zeros. A
    // section cell holds the points the student earned in it, and is empty when the student's result has no check of it
    // (grading stopped before it, or the result was computed from another rubric). Without a rubric, no section
    // columns.
    std::string csv() const;

    // An aligned table (student, score, max, status, summary) and a totals line: the number of students,
    // the count per status in student_statuses() order (then any other status), and the mean score. A
    // summary longer than one 60-byte line is never cut: it stands whole on lines of its own under its
    // row, indented by 4 spaces.
    std::string console_summary() const;

private:
    std::filesystem::path out_dir_;
    std::optional<Rubric> rubric_;
};

// One column of the gradebook CSV after the summary: its header and the checks whose points it sums.
struct GradebookColumn {
    std::string header;              // "correctness:<case>", "performance:<tier>", "hidden:correctness", ...
    std::string kind;                // the checks' kind: "correctness" or "performance"
    std::vector<std::string> names;  // the checks' names (several only for a hidden column)
};

// The section columns of rubric, the same for every student graded with it: each published correctness
// case ("correctness:<name>") in rubric order, then "hidden:correctness" summing every hidden case (if
// any), then each published tier ("performance:<name>"), then "hidden:performance" (if any). Hidden
// cases and tiers (those from the staff's extra rubric files, student_view.hpp) are never named.
std::vector<GradebookColumn> gradebook_columns(const Rubric& rubric);

// Every check of result, one per line under a header: kind, name, points/max, passed (yes/no) and the
// summary, e.g. "  correctness  small shapes  20/20  yes  10/10 runs"; a summary longer than one 100-byte
// line stands whole on lines of its own under its row, indented by 4 spaces. What `runner grade` prints
// after the summary table when it grades one submission.
std::string format_checks(const StudentResult& result);

// 42.5 -> "42.5", 13.333333 -> "13.3333", 20 -> "20": scores as the CSV and the console print them.
std::string format_points(double points);

}  // namespace kreg
