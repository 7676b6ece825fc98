// The gradebook folder: student ids, per-student files written atomically, and reading them all back.
#include "grade/gradebook.hpp"

#include "common/text.hpp"
#include "report/atomic_file.hpp"
#include "report/printable_text.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace kreg {
namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxIdLength = 200;
constexpr std::size_t kMaxNameBytes = 256;
constexpr std::size_t kMaxSummaryBytes = 4000;
constexpr std::size_t kMaxEvidenceStringBytes = 8000;

// What record() writes: every string printable (summaries, build log tails and whatever else a plugin,
// worker or compiler said may hold invalid UTF-8 or terminal escapes), so that no reader of the file,
// the CSV or the console gets raw bytes, and no JSON dump can throw.
StudentResult printable(const StudentResult& r) {
    StudentResult out = r;
    out.submission = printable_utf8(r.submission, 4096);
    out.status = printable_utf8(r.status, kMaxNameBytes);
    out.summary = printable_lines(r.summary, kMaxSummaryBytes);
    for (auto& c : out.checks) {
        c.kind = printable_utf8(c.kind, kMaxNameBytes);
        c.name = printable_utf8(c.name, kMaxNameBytes);
        c.summary = printable_lines(c.summary, kMaxSummaryBytes);
        c.evidence = printable_json(c.evidence, kMaxEvidenceStringBytes);
    }
    out.sandbox = printable_json(r.sandbox, kMaxEvidenceStringBytes);
    out.meta = printable_json(r.meta, kMaxEvidenceStringBytes);
    return out;
}

bool is_id_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

void require_valid_id(const std::string& student) {
    if (!is_valid_student_id(student))
        throw std::invalid_argument("'" + student + "' is not a valid student id (use student_id_from_path)");
}

// The result in path, or nullopt with problem saying why it cannot be used.
std::optional<StudentResult> read_student_file(const fs::path& path, const std::string& expected_student,
                                               std::string& problem) {
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw std::runtime_error("cannot open");
        std::ostringstream text;
        text << in.rdbuf();
        StudentResult r = StudentResult::from_json(nlohmann::json::parse(text.str()));
        if (r.student == expected_student) return r;
        problem = "names student '" + r.student + "', not '" + expected_student + "'";
    } catch (const std::exception& e) {
        problem = e.what();
    }
    return std::nullopt;
}

// What all() lists for a file it cannot use: visible in the CSV and the console, never silently dropped.
StudentResult corrupt_entry(const fs::path& path, const std::string& student, const std::string& problem) {
    StudentResult corrupt;
    corrupt.student = student;
    corrupt.status = "error";
    corrupt.summary = "unreadable result file " + path.string() + ": " + problem;
    corrupt.meta = {{"corrupt_file", path.string()}, {"problem", problem}};
    return corrupt;
}
}  // namespace

bool is_valid_student_id(std::string_view id) {
    if (id.empty() || id.size() > kMaxIdLength || id.front() == '.') return false;
    return std::all_of(id.begin(), id.end(), is_id_char);
}

std::string student_id_from_path(const fs::path& submission) {
    fs::path path = submission;
    if (!path.empty() && !path.has_filename()) path = path.parent_path();  // "alice/" -> "alice"
    std::error_code ec;
    const std::string raw = fs::is_directory(path, ec) ? path.filename().string() : path.stem().string();
    std::string id;
    bool leading = true;
    for (char c : raw) {
        leading = leading && c == '.';
        id += (leading || !is_id_char(c)) ? '_' : c;
        if (id.size() == kMaxIdLength) break;
    }
    if (id.empty()) throw std::invalid_argument("no student id in the path '" + submission.string() + "'");
    return id;
}

Gradebook::Gradebook(fs::path out_dir, std::optional<Rubric> rubric)
    : out_dir_(std::move(out_dir)), rubric_(std::move(rubric)) {}

fs::path Gradebook::student_file(const std::string& student) const {
    require_valid_id(student);
    return out_dir_ / "students" / (student + ".json");
}

fs::path Gradebook::csv_file() const { return out_dir_ / "gradebook.csv"; }

bool Gradebook::has(const std::string& student) const {
    const fs::path path = student_file(student);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return false;
    std::string problem;
    return read_student_file(path, student, problem).has_value();
}

void Gradebook::record(const StudentResult& result) {
    require_valid_id(result.student);
    const std::string text = printable(result).to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    write_file_atomically(student_file(result.student), text + "\n");
    write_file_atomically(csv_file(), csv());
}

std::vector<StudentResult> Gradebook::all() const {
    std::vector<StudentResult> results;
    const fs::path dir = out_dir_ / "students";
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return results;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const fs::path& path = entry.path();
        const std::string file = path.filename().string();
        // Hidden files are write_file_atomically's temporaries; anything else not ours is left alone.
        if (file.empty() || file.front() == '.' || path.extension() != ".json") continue;
        const std::string student = path.stem().string();
        std::string problem;
        auto result = read_student_file(path, student, problem);
        results.push_back(result ? std::move(*result) : corrupt_entry(path, student, problem));
    }
    std::sort(results.begin(), results.end(),
              [](const StudentResult& a, const StudentResult& b) { return a.student < b.student; });
    return results;
}

}  // namespace kreg
