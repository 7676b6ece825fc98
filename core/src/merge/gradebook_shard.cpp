#include "merge/gradebook_shard.hpp"

#include "grade/gradebook.hpp"
#include "grade/provenance.hpp"
#include "grade/rubric.hpp"
#include "grade/class_page.hpp"
#include "grade/feedback.hpp"
#include "grade/student_view.hpp"
#include "merge/shard.hpp"
#include "report/atomic_file.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kreg {
namespace fs = std::filesystem;

namespace {

const nlohmann::json& member(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) throw std::invalid_argument(std::string("/") + key + ": missing");
    return *it;
}

std::vector<std::string> strings(const nlohmann::json& j, const char* key) {
    const nlohmann::json& v = member(j, key);
    if (!v.is_array()) throw std::invalid_argument(std::string("/") + key + ": expected an array of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string())
            throw std::invalid_argument(std::string("/") + key + "/" + std::to_string(i) + ": expected a string");
        out.push_back(v[i].get<std::string>());
    }
    return out;
}

std::string text(const nlohmann::json& j, const char* key) {
    const nlohmann::json& v = member(j, key);
    if (!v.is_string()) throw std::invalid_argument(std::string("/") + key + ": expected a string, found " + v.dump());
    return v.get<std::string>();
}

int whole(const nlohmann::json& j, const char* key) {
    const nlohmann::json& v = member(j, key);
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1000000)
        throw std::invalid_argument(std::string("/") + key + ": expected an integer >= 1, found " + v.dump());
    return int(v.get<long long>());
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The .json files directly in dir, by stem.
std::map<std::string, fs::path> json_files(const fs::path& dir) {
    std::map<std::string, fs::path> out;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return out;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (!name.empty() && name.front() != '.' && e.path().extension() == ".json")
            out[e.path().stem().string()] = e.path();
    }
    return out;
}

}  // namespace

nlohmann::json to_json(const GradebookShard& s) {
    return {{"schema", "kreg-gradebook-shard"},
            {"schema_version", 1},
            {"index", s.index},
            {"count", s.count},
            {"all_students", s.all_students},
            {"students", s.students},
            {"rubric_sha256", s.rubric_sha256},
            {"rubric_files", s.rubric_files},
            {"secret_sha256", s.secret_sha256},
            {"kreg_version", s.kreg_version},
            {"git_sha", s.git_sha},
            {"argv", s.argv},
            {"cwd", s.cwd}};
}

GradebookShard gradebook_shard_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw std::invalid_argument("/: not an object");
    if (j.value("schema", "") != "kreg-gradebook-shard")
        throw std::invalid_argument("/schema: not \"kreg-gradebook-shard\"");
    if (j.value("schema_version", 0) != 1)
        throw std::invalid_argument("/schema_version: expected 1, found " + member(j, "schema_version").dump());
    GradebookShard s;
    s.index = whole(j, "index");
    s.count = whole(j, "count");
    if (s.index > s.count) throw std::invalid_argument("/index: more than /count");
    s.all_students = strings(j, "all_students");
    s.students = strings(j, "students");
    s.rubric_sha256 = text(j, "rubric_sha256");
    s.rubric_files = strings(j, "rubric_files");
    s.secret_sha256 = member(j, "secret_sha256");
    if (!s.secret_sha256.is_null() && !s.secret_sha256.is_string())
        throw std::invalid_argument("/secret_sha256: expected a string or null");
    s.kreg_version = text(j, "kreg_version");
    s.git_sha = text(j, "git_sha");
    s.argv = strings(j, "argv");
    s.cwd = text(j, "cwd");
    return s;
}

std::vector<std::string> students_of_shard(const std::vector<std::string>& sorted_students, int index, int count) {
    std::vector<std::string> out;
    for (size_t i = 0; i < sorted_students.size(); ++i)
        if (i % size_t(count) == size_t(index - 1)) out.push_back(sorted_students[i]);
    return out;
}

fs::path gradebook_shard_dir(const fs::path& out, int index, int count) { return out / shard_tag(index, count); }

void write_gradebook_shard(const fs::path& dir, const GradebookShard& shard) {
    write_file_atomically(dir / kGradebookShardManifest, to_json(shard).dump(2) + "\n");
}

bool is_gradebook_shard_dir(const fs::path& path) {
    std::error_code ec;
    return fs::is_directory(path, ec) && fs::is_regular_file(path / kGradebookShardManifest, ec);
}

namespace {

struct ReadShard {
    fs::path dir;
    GradebookShard shard;
};

void mismatch(std::vector<MergeProblem>& problems, const fs::path& file, const std::string& what) {
    problems.push_back({MergeProblem::Kind::mismatch, file.string() + ": " + what, ""});
}

// Each folder's manifest, sorted by shard index; one that cannot be read is a mismatch.
std::vector<ReadShard> read_shard_manifests(const std::vector<fs::path>& dirs, std::vector<MergeProblem>& problems) {
    std::vector<ReadShard> shards;
    for (const fs::path& dir : dirs) {
        const fs::path manifest = dir / kGradebookShardManifest;
        try {
            shards.push_back({dir, gradebook_shard_from_json(nlohmann::json::parse(read_text(manifest)))});
        } catch (const std::exception& e) {
            mismatch(problems, manifest, e.what());
        }
    }
    std::stable_sort(shards.begin(), shards.end(),
                     [](const ReadShard& a, const ReadShard& b) { return a.shard.index < b.shard.index; });
    return shards;
}

// Why shard r cannot be merged with the reference shard (another rubric, seed, kreg or set of submissions);
// "" when it can.
std::string differs_from_reference(const ReadShard& r, const ReadShard& reference) {
    const GradebookShard& s = r.shard;
    const GradebookShard& ref = reference.shard;
    std::string why;
    if (s.rubric_sha256 != ref.rubric_sha256)
        why = "was graded with another rubric than " + reference.dir.string();
    else if (s.secret_sha256 != ref.secret_sha256)
        why = "was graded with another secret seed than " + reference.dir.string();
    else if (s.kreg_version != ref.kreg_version || s.git_sha != ref.git_sha)
        why = "was graded by another kreg than " + reference.dir.string() + " (" + s.kreg_version + " " + s.git_sha +
              " here, " + ref.kreg_version + " " + ref.git_sha + " there)";
    else if (s.all_students != ref.all_students)
        why = "graded another set of submissions than " + reference.dir.string() + " (" +
              std::to_string(s.all_students.size()) + " students here, " + std::to_string(ref.all_students.size()) +
              " there)";
    return why;
}

// Every student of the slice graded (a result file that reads back as that student), and nobody else.
void collect_students(const ReadShard& r, int expect, GradebookMerge& out,
                      std::map<std::string, const ReadShard*>& student_owner) {
    auto& problems = out.problems;
    const GradebookShard& s = r.shard;
    const Gradebook book(r.dir);
    std::set<std::string> owned(s.students.begin(), s.students.end());
    size_t graded = 0;
    for (const auto& student : s.students) {
        if (book.has(student)) {
            ++graded;
            out.student_files.push_back(book.student_file(student));
        }
        const auto [other, first] = student_owner.emplace(student, &r);
        if (!first) mismatch(problems, r.dir, "student " + student + " is also in " + other->second->dir.string());
    }
    for (const auto& [student, path] : json_files(r.dir / "students"))
        if (!owned.count(student)) mismatch(problems, path, "student " + student + " is not in this shard's slice");
    if (graded < s.students.size())
        problems.push_back({MergeProblem::Kind::incomplete,
                            r.dir.string() + ": grading shard " + std::to_string(s.index) + "/" +
                                std::to_string(expect) + " is incomplete (" + std::to_string(graded) + " of " +
                                std::to_string(s.students.size()) + " students graded)",
                            shell_command(s.cwd, s.argv)});
    out.view_dirs.push_back(r.dir / "student-view");
}

// The merged folder's manifest: what each shard was, and what they graded.
nlohmann::json merge_manifest(int expect, const std::map<int, const ReadShard*>& by_index, const ReadShard& reference) {
    nlohmann::json from = nlohmann::json::array();
    for (const auto& [index, r] : by_index)
        from.push_back({{"index", index},
                        {"dir", fs::absolute(r->dir).lexically_normal().string()},
                        {"argv", r->shard.argv},
                        {"students", r->shard.students.size()}});
    return {{"schema", "kreg-gradebook-merge"},
            {"schema_version", 1},
            {"count", expect},
            {"students", reference.shard.all_students.size()},
            {"rubric_sha256", reference.shard.rubric_sha256},
            {"kreg_version", reference.shard.kreg_version},
            {"git_sha", reference.shard.git_sha},
            {"shards", from}};
}

}  // namespace

GradebookMerge merge_gradebook_shards(int expect, const std::vector<fs::path>& dirs) {
    GradebookMerge out;
    auto& problems = out.problems;
    std::vector<ReadShard> shards = read_shard_manifests(dirs, problems);
    const ReadShard* reference = nullptr;
    std::map<int, const ReadShard*> by_index;
    std::map<std::string, const ReadShard*> student_owner;
    for (const ReadShard& r : shards) {
        const GradebookShard& s = r.shard;
        if (s.count != expect) {
            mismatch(problems, r.dir,
                     "is grading shard " + std::to_string(s.index) + " of " + std::to_string(s.count) +
                         ", not of --expect " + std::to_string(expect));
            continue;
        }
        if (!reference) {
            reference = &r;
        } else {
            const std::string why = differs_from_reference(r, *reference);
            if (!why.empty()) {
                mismatch(problems, r.dir, why);
                continue;
            }
        }
        const auto [at, fresh] = by_index.emplace(s.index, &r);
        if (!fresh) {
            mismatch(problems, r.dir,
                     "is grading shard " + std::to_string(s.index) + "/" + std::to_string(expect) + " again (so is " +
                         at->second->dir.string() + "); give each shard once");
            continue;
        }
        if (s.students != students_of_shard(s.all_students, s.index, s.count)) {
            mismatch(problems, r.dir,
                     "its students are not slice " + std::to_string(s.index) + "/" + std::to_string(s.count) +
                         " of the submissions");
            continue;
        }
        collect_students(r, expect, out, student_owner);
    }
    if (reference) {
        for (int i = 1; i <= expect; ++i)
            if (!by_index.count(i))
                problems.push_back(
                    {MergeProblem::Kind::incomplete,
                     "grading shard " + std::to_string(i) + "/" + std::to_string(expect) +
                         " is missing (no folder given for it)",
                     shell_command(reference->shard.cwd, argv_with_shard(reference->shard.argv, i, expect))});
        out.rubric_files = reference->shard.rubric_files;
        out.rubric_cwd = reference->shard.cwd;
        out.rubric_sha256 = reference->shard.rubric_sha256;
    } else if (problems.empty()) {
        problems.push_back({MergeProblem::Kind::mismatch, "no grading shard folders given", ""});
    }
    if (!problems.empty()) return out;
    out.manifest = merge_manifest(expect, by_index, *reference);
    return out;
}

void write_gradebook_merge(const GradebookMerge& merge, const fs::path& out, bool force) {
    // The rubric gives the CSV its columns and the student views their hidden/public split; it must still be
    // the one the shards graded with.
    // The rubric's sha256 holds each case's file name as the grader was given it, so the files are read by
    // the same names from the same folder.
    std::vector<Rubric> parts;
    const fs::path here = fs::current_path();
    const fs::path out_dir = fs::absolute(out);
    try {
        fs::current_path(merge.rubric_cwd);
        for (const auto& f : merge.rubric_files) parts.push_back(load_rubric(f));
        fs::current_path(here);
    } catch (const std::exception& e) {
        fs::current_path(here);
        throw std::invalid_argument("cannot read the shards' rubric again (in " + merge.rubric_cwd + "): " + e.what());
    }
    const Rubric rubric = merge_rubrics(parts);
    if (rubric_sha256(rubric) != merge.rubric_sha256)
        throw std::invalid_argument((fs::path(merge.rubric_cwd) / merge.rubric_files.front()).string() +
                                    ": the rubric files changed since the shards were graded (sha256 " +
                                    rubric_sha256(rubric).substr(0, 12) + "... now, " +
                                    merge.rubric_sha256.substr(0, 12) + "... then)");
    Gradebook book(out_dir, rubric);
    std::error_code ec;
    const auto old_students = json_files(out_dir / "students");
    const auto old_views = json_files(out_dir / "student-view");
    if (!force) {
        if (fs::exists(book.csv_file(), ec))
            throw std::runtime_error(book.csv_file().string() + " exists (--force overwrites it)");
        if (!old_students.empty())
            throw std::runtime_error(old_students.begin()->second.string() + " exists: " + out_dir.string() +
                                     " holds a gradebook already (--force replaces it)");
        if (!old_views.empty())
            throw std::runtime_error(old_views.begin()->second.string() + " exists (--force replaces it)");
    } else {
        // Stale results would otherwise stay in the folder and in the CSV made from it.
        for (const auto& [student, path] : old_students) fs::remove(path, ec);
        for (const auto& [student, path] : old_views)
            for (const char* extension : {".json", ".md", ".html"})
                fs::remove(fs::path(path).replace_extension(extension), ec);
    }
    std::map<std::string, fs::path> views;
    for (const auto& dir : merge.view_dirs)
        for (const auto& [student, path] : json_files(dir)) views[student] = path;
    for (const fs::path& file : merge.student_files) {
        const std::string student = file.stem().string();
        const std::string staff = read_text(file);
        write_file_atomically(book.student_file(student), staff);
        const fs::path view = out_dir / "student-view" / (student + ".json");
        const auto it = views.find(student);
        if (it != views.end()) {
            write_file_atomically(view, read_text(it->second));
        } else {
            const StudentResult r = StudentResult::from_json(nlohmann::json::parse(staff));
            write_file_atomically(
                view,
                student_view(r, rubric).to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        }
        write_student_feedback(out_dir, StudentResult::from_json(nlohmann::json::parse(staff)), rubric);
    }
    write_file_atomically(book.csv_file(), book.csv());
    write_class_page(book, rubric);
    write_file_atomically(out_dir / kGradebookMergeManifest, merge.manifest.dump(2) + "\n");
}

}  // namespace kreg
