// Grading rubrics: the JSON file staff hand the grader (`--rubric grading/lab3.json`, optionally a second
// `--rubric` with hidden cases), parsed once into typed structs and validated the way sweep configs are.
// Every error is a ConfigError naming the file and the JSON pointer of the offending value, with a
// did-you-mean for unknown keys. The format is documented in configs/grading/README.md and, for editors,
// in configs/schema/rubric.schema.json.
#pragma once

#include "common/types.hpp"
#include "config/sweep_config.hpp"  // ConfigError

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// Correctness: the graded kernel runs every shape with every seed and is verified against the reference.
struct CorrectnessCase {
    std::string name;
    double points = 0;                // > 0
    std::vector<Shape> shapes;        // expanded, de-duplicated, in order of first occurrence
    std::vector<uint64_t> seeds;      // non-empty, repeats dropped; mixed with the secret (mix_secret_seed)
    bool all_or_nothing = true;       // false: points * passed runs / all runs
    std::optional<double> tolerance;  // normalised error bound; default per dtype
    std::string source;               // the rubric file this case came from
};

// Performance, one of two kinds:
// - against a reference kernel: points when reference median / submission median >= min_ratio at shape,
//   both measured in the same grading run (paired rounds);
// - against the copy ceiling (copy-bound operations only, operations.def: the transposes): points when the submission's
//   bandwidth (bytes moved / median) is at least min_fraction_of_copy of the device-to-device copy
//   bandwidth the grader measured itself (meta.gpu.ceilings.dram_copy_gbps); reference is empty and
//   min_ratio 0 then.
struct PerformanceTier {
    std::string name;
    double points = 0;                           // > 0
    Shape shape;                                 // the tier's shape spec must expand to exactly one shape
    std::string reference;                       // kernel name; empty for a copy-ceiling tier
    double min_ratio = 0;                        // > 0 for a reference tier
    std::optional<double> min_fraction_of_copy;  // set: a copy-ceiling tier, in (0, 1]
    std::string source;

    bool against_copy_ceiling() const { return min_fraction_of_copy.has_value(); }
};

// Wall-clock limits in seconds: loading the plugin, one kernel call, the whole submission, building it.
struct GradeLimits {
    double load_s = 30, call_s = 60, total_s = 900, build_s = 300;
    int64_t memory_mb = 4096;  // each worker's (and build's) memory, its processes together
};

// "leaderboard": whether the class page (grade/class_page.hpp) ranks students by their tiers' measured
// speed-up, and whom it leaves off. It changes no grade, so it is not part of the rubric's sha256.
struct LeaderboardSettings {
    bool show = true;                  // "leaderboard": false hides the board
    std::vector<std::string> opt_out;  // "leaderboard": {"opt_out": [student ids]}: never on the board

    bool operator==(const LeaderboardSettings& o) const { return show == o.show && opt_out == o.opt_out; }
};

struct Rubric {
    std::string name, description;  // name: "name" key, default the file's stem
    // "operation" (default gemm): what the graded kernel and every reference compute; it decides the
    // shape keys (the sweep parser's, config/shape_spec.hpp). Every file of one grading run names the same.
    Operation operation = Operation::gemm;
    std::optional<std::string> kernel;  // default: the submission's only kernel
    std::optional<Backend> backend;     // the graded kernel must be of this backend
    GradeLimits limits;
    std::vector<CorrectnessCase> correctness;
    std::vector<PerformanceTier> performance;
    int warmup = 2, repeats = 10;  // "measure": for performance tiers
    // "measure": each tier is measured in paired rounds (submission, reference, submission, ...): at
    // least `rounds`, more while the ratio's 95 % interval straddles the tier's threshold, at most
    // `max_rounds` (the merged rubric uses the larger of the two).
    int rounds = 3, max_rounds = 8;
    std::optional<double> time_budget_s;  // "measure"
    bool requires_correctness = true;     // performance points only when every correctness case passed
    LeaderboardSettings leaderboard;      // merged: hidden if any file hides it; the opt-outs of every file
    std::vector<std::string> sources;     // every file this rubric was read from, in order

    // The scalar settings the file(s) gave explicitly, as JSON pointers ("/name", "/kernel",
    // "/limits/call_s", "/measure/warmup", ...). merge_rubrics uses it so that a later file only overrides
    // what it actually sets.
    std::vector<std::string> explicitly_set;

    double max_points() const;  // every correctness case and performance tier

    // The rubric in the file format with every default filled in and shapes listed one by one, plus
    // "sources" at the top and "source" in every case and tier. Without those it parses back to an equal
    // rubric (sources and explicitly_set apart). For the gradebook's and the report's meta.
    nlohmann::json to_json() const;
};

// The top-level keys parse_rubric accepts, in the order configs/grading/README.md documents them. The
// JSON Schema lists the same keys (a test keeps them in step).
const std::vector<std::string>& rubric_keys();

// Validates doc and builds the rubric; source names the file in errors and in every source field.
Rubric parse_rubric(const nlohmann::json& doc, const std::string& source);

// Reads, parses and validates a file. An unreadable file, a JSON syntax error (with line and column) or a
// key given twice in one object are ConfigErrors too.
Rubric load_rubric(const std::filesystem::path& path);

// One rubric out of several files (the published one first, then the staff's hidden ones):
// - every file must grade the same operation, else a ConfigError at the later file's "/operation" (its
//   root "" when it leaves the key out) naming both files' operations;
// - correctness cases and performance tiers are concatenated in file order;
// - a name used twice across the files is a ConfigError at the later file's "/correctness/<i>/name" (or
//   "/performance/<i>/name") whose message names the earlier file and its path;
// - each scalar setting (name, description, kernel, backend, each limit, each measure key,
//   requires_correctness) is the value of the LAST file that sets it explicitly, else the first file's
//   (its default when no file sets it);
// - sources and explicitly_set are concatenated (explicitly_set without repeats);
// - the leaderboard is shown only when no file hides it, and leaves off every student any file opts out.
// A single rubric comes back unchanged; an empty list is std::invalid_argument.
Rubric merge_rubrics(const std::vector<Rubric>& rubrics);

// Every performance tier's reference must be a kernel some trusted plugin provides (known: name ->
// the operation it computes), else a ConfigError at the tier's file and "/performance/<i>/reference" with
// a did-you-mean over the known names; and it must compute the rubric's operation, else a ConfigError
// there naming both operations. Copy-ceiling tiers have no reference. The grader calls it once it has
// described the trusted plugins, before grading anyone.
void check_tier_references(const Rubric& rubric, const std::map<std::string, Operation>& known);

// The seed a grading run actually uses for a published case seed: a splitmix64-based mix of both, so that
// students who know the published seeds still cannot precompute the inputs. secret 0 means no secret
// (case_seed comes back unchanged). For a fixed secret the mix is a bijection of case_seed, so distinct
// case seeds never collide.
uint64_t mix_secret_seed(uint64_t case_seed, uint64_t secret);

// The environment variable the grader reads the secret from.
inline constexpr const char* kSecretSeedVariable = "KREG_SECRET_SEED";

// A secret seed as staff write it: a decimal or 0x-prefixed hexadecimal 64-bit integer other than 0.
// Anything else is a ConfigError with file "<environment>" and json_path "KREG_SECRET_SEED" (the message
// never repeats the text, which is a secret).
uint64_t parse_secret_seed(const std::string& text);

// parse_secret_seed of $KREG_SECRET_SEED; nullopt when it is unset or empty.
std::optional<uint64_t> secret_seed_from_environment();

}  // namespace kreg
