// Grading in shards: `runner grade --shard I/K` grades slice I of K of the submissions (sorted by student
// id, index i with i % K == I - 1) into <out>/shard-I-of-K/, a gradebook folder of its own with a manifest,
// gradebook-shard.json; `runner merge` checks K of them against each other and writes one gradebook.
//
// The manifest is staff-only, like students/*.json: it names students and rubric files, never a hidden
// case, shape or seed (nor the secret seed: only its sha256, as results' provenance does).
#pragma once

#include "merge/sweep_merge.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace kreg {

inline constexpr const char* kGradebookShardManifest = "gradebook-shard.json";
inline constexpr const char* kGradebookMergeManifest = "gradebook-merge.json";

struct GradebookShard {
    int index = 1, count = 1;
    std::vector<std::string> all_students;  // every submission of the whole run, sorted
    std::vector<std::string> students;      // this shard's slice of them
    std::string rubric_sha256;              // of the merged rubric (grade/provenance.hpp)
    // In --rubric order, as the grader loaded them (relative to cwd where they were given so): what merge reads
    // the columns from. Loaded by the same names from the same folder, since the rubric's sha256 holds them.
    std::vector<std::string> rubric_files;
    nlohmann::json secret_sha256;  // null without a secret seed
    std::string kreg_version, git_sha;
    std::vector<std::string> argv;  // the grade command that made it (re-run it to finish the shard)
    std::string cwd;
};
nlohmann::json to_json(const GradebookShard& s);
// Throws std::invalid_argument naming the JSON path and what is wrong.
GradebookShard gradebook_shard_from_json(const nlohmann::json& j);

// The slice of sorted students that shard index of count grades.
std::vector<std::string> students_of_shard(const std::vector<std::string>& sorted_students, int index, int count);

// <out>/shard-I-of-K
std::filesystem::path gradebook_shard_dir(const std::filesystem::path& out, int index, int count);

// Writes <dir>/gradebook-shard.json (atomically, creating dir). Throws std::runtime_error naming the file.
void write_gradebook_shard(const std::filesystem::path& dir, const GradebookShard& shard);

// Whether path is a folder holding a gradebook-shard.json (what merge takes for a grading shard).
bool is_gradebook_shard_dir(const std::filesystem::path& path);

struct GradebookMerge {
    std::vector<MergeProblem> problems;                // empty: the merge may be written
    std::vector<std::filesystem::path> student_files;  // every student's staff result, from its shard
    std::vector<std::filesystem::path> view_dirs;      // each shard's student-view folder
    std::vector<std::string> rubric_files;
    std::string rubric_cwd;  // the folder rubric_files are relative to
    std::string rubric_sha256;
    nlohmann::json manifest;  // what gradebook-merge.json says
};

// Reads and checks the shard folders: the same rubric (and rubric files still holding it), secret seed,
// kreg and set of submissions; every shard 1..expect once; every student of a shard's slice graded in it.
GradebookMerge merge_gradebook_shards(int expect, const std::vector<std::filesystem::path>& dirs);

// Writes the merged gradebook into out: students/*.json and student-view/*.json from the shards (a missing
// view is made from the staff result), gradebook.csv from them as a single run makes it, and
// gradebook-merge.json. Refuses (std::runtime_error naming the file) when out already holds a gradebook,
// unless force: then its students/ and student-view/ results are replaced.
void write_gradebook_merge(const GradebookMerge& merge, const std::filesystem::path& out, bool force);

}  // namespace kreg
