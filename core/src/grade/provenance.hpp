// What a student's result was computed from, so that a result never outlives its inputs: the
// submission's bytes, the merged rubric, the secret seed (its hash, never the seed) and kreg's version.
// A re-run grades again exactly the students whose provenance changed, and says what changed.
#pragma once

#include "grade/rubric.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace kreg {

// sha256 of a .so, or of a source folder: every regular file below it (symlinks not followed), in path
// order, as "<relative path>\0<size>\0<bytes>". Throws std::runtime_error when a file cannot be read.
std::string submission_sha256(const std::filesystem::path& submission);

// sha256 of the merged rubric's content (its source file names left out: moving a file changes nothing).
std::string rubric_sha256(const Rubric& rubric);

// {"submission_sha256", "rubric_sha256", "secret_sha256" (null without a secret), "kreg_version"}.
nlohmann::json provenance(const std::string& submission_sha256, const std::string& rubric_sha256, uint64_t secret);

// What changed between a stored result's provenance and the current one, for people: "" when nothing
// did; else e.g. "submission changed, rubric changed". A result without provenance (an older kreg)
// counts as changed: "no record of what it was computed from".
std::string what_changed(const nlohmann::json& stored, const nlohmann::json& current);

}  // namespace kreg
