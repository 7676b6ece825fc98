// The canonical JSON form of a rubric, its point total, and merging the published rubric with hidden ones.
#include "grade/rubric.hpp"

#include "common/suggest.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <utility>

namespace kreg {
namespace {
// A shape in the keys of its operation's specs (config/shape_spec.hpp), so that to_json parses back.
nlohmann::json shape_json(const Shape& s, Operation op) { return shape_spec_json(op, s); }

// "/correctness/<i>/name" for each entry, i counted among the entries from the same file: the entry's
// place in the file it came from, also when the rubric is itself a merge.
template <typename Entry>
std::vector<std::string> name_pointers(const std::vector<Entry>& entries, const std::string& kind) {
    std::map<std::string, std::size_t> next_index;
    std::vector<std::string> pointers;
    for (const auto& e : entries)
        pointers.push_back("/" + kind + "/" + std::to_string(next_index[e.source]++) + "/name");
    return pointers;
}

struct NameUse {
    std::string source, pointer;
};

template <typename Entry>
void add_names(std::map<std::string, NameUse>& used, const std::vector<Entry>& entries, const std::string& kind) {
    const auto pointers = name_pointers(entries, kind);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto [it, inserted] = used.emplace(entries[i].name, NameUse{entries[i].source, pointers[i]});
        if (!inserted)
            throw ConfigError(entries[i].source, pointers[i],
                              "name '" + entries[i].name + "' is also used by " + it->second.source + " at " +
                                  it->second.pointer + "; case and tier names must be unique across rubric files");
    }
}

// The points of all files together must stay finite, as each file's do (parse_rubric checks those).
// The error points at the entry whose points make the sum overflow, in the file it came from.
void check_points_total(const Rubric& merged) {
    double total = 0;
    const auto add = [&](const auto& entries, const std::string& kind) {
        std::map<std::string, std::size_t> next_index;
        for (const auto& e : entries) {
            const std::size_t index = next_index[e.source]++;
            total += e.points;
            if (!std::isfinite(total))
                throw ConfigError(e.source, "/" + kind + "/" + std::to_string(index) + "/points",
                                  "the points of all rubric files add up to more than the largest number "
                                  "(about 1.8e308)");
        }
    };
    add(merged.correctness, "correctness");
    add(merged.performance, "performance");
}

// How to take each scalar setting from a later rubric, by the pointer parse_rubric records.
using Copier = std::function<void(Rubric& into, const Rubric& from)>;
const std::map<std::string, Copier>& scalar_copiers() {
    static const std::map<std::string, Copier> copiers{
        {"/name", [](Rubric& a, const Rubric& b) { a.name = b.name; }},
        {"/operation", [](Rubric& a, const Rubric& b) { a.operation = b.operation; }},  // equal: checked first
        {"/description", [](Rubric& a, const Rubric& b) { a.description = b.description; }},
        {"/kernel", [](Rubric& a, const Rubric& b) { a.kernel = b.kernel; }},
        {"/backend", [](Rubric& a, const Rubric& b) { a.backend = b.backend; }},
        {"/limits/load_s", [](Rubric& a, const Rubric& b) { a.limits.load_s = b.limits.load_s; }},
        {"/limits/call_s", [](Rubric& a, const Rubric& b) { a.limits.call_s = b.limits.call_s; }},
        {"/limits/total_s", [](Rubric& a, const Rubric& b) { a.limits.total_s = b.limits.total_s; }},
        {"/limits/build_s", [](Rubric& a, const Rubric& b) { a.limits.build_s = b.limits.build_s; }},
        {"/limits/memory_mb", [](Rubric& a, const Rubric& b) { a.limits.memory_mb = b.limits.memory_mb; }},
        {"/measure/warmup", [](Rubric& a, const Rubric& b) { a.warmup = b.warmup; }},
        {"/measure/repeats", [](Rubric& a, const Rubric& b) { a.repeats = b.repeats; }},
        {"/measure/rounds", [](Rubric& a, const Rubric& b) { a.rounds = b.rounds; }},
        {"/measure/max_rounds", [](Rubric& a, const Rubric& b) { a.max_rounds = b.max_rounds; }},
        {"/measure/time_budget_s", [](Rubric& a, const Rubric& b) { a.time_budget_s = b.time_budget_s; }},
        {"/requires_correctness", [](Rubric& a, const Rubric& b) { a.requires_correctness = b.requires_correctness; }},
    };
    return copiers;
}
}  // namespace

double Rubric::max_points() const {
    double total = 0;
    for (const auto& c : correctness) total += c.points;
    for (const auto& t : performance) total += t.points;
    return total;
}

nlohmann::json Rubric::to_json() const {
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : correctness) {
        nlohmann::json shapes_json = nlohmann::json::array();
        for (const auto& s : c.shapes) shapes_json.push_back(shape_json(s, operation));
        nlohmann::json j = {{"name", c.name},
                            {"points", c.points},
                            {"shapes", shapes_json},
                            {"seeds", c.seeds},
                            {"all_or_nothing", c.all_or_nothing},
                            {"source", c.source}};
        if (c.tolerance) j["tolerance"] = *c.tolerance;
        cases.push_back(std::move(j));
    }
    nlohmann::json tiers = nlohmann::json::array();
    for (const auto& t : performance) {
        nlohmann::json j = {
            {"name", t.name}, {"points", t.points}, {"shape", shape_json(t.shape, operation)}, {"source", t.source}};
        if (t.against_copy_ceiling()) {
            j["min_fraction_of_copy"] = *t.min_fraction_of_copy;
        } else {
            j["reference"] = t.reference;
            j["min_ratio"] = t.min_ratio;
        }
        tiers.push_back(std::move(j));
    }

    nlohmann::json j = {
        {"sources", sources},
        {"name", name},
        {"description", description},
        {"limits",
         {{"load_s", limits.load_s},
          {"call_s", limits.call_s},
          {"total_s", limits.total_s},
          {"build_s", limits.build_s},
          {"memory_mb", limits.memory_mb}}},
        {"correctness", cases},
        {"measure", {{"warmup", warmup}, {"repeats", repeats}, {"rounds", rounds}, {"max_rounds", max_rounds}}},
        {"requires_correctness", requires_correctness}};
    // Unset optionals are left out rather than written as null, so the result parses back; an empty
    // "performance" would not (a present list must be non-empty).
    // A GEMM rubric's canonical form (and so its sha256, grade/provenance.hpp) is what it was before
    // rubrics had operations: results graded with it stay current.
    if (operation != Operation::gemm) j["operation"] = std::string(kreg::to_string(operation));
    if (kernel) j["kernel"] = *kernel;
    if (backend) j["backend"] = std::string(kreg::to_string(*backend));
    if (!tiers.empty()) j["performance"] = tiers;
    if (time_budget_s) j["measure"]["time_budget_s"] = *time_budget_s;
    if (!(leaderboard == LeaderboardSettings{}))
        j["leaderboard"] = {{"show", leaderboard.show}, {"opt_out", leaderboard.opt_out}};
    return j;
}

Rubric merge_rubrics(const std::vector<Rubric>& rubrics) {
    if (rubrics.empty()) throw std::invalid_argument("merge_rubrics: no rubric to merge");
    Rubric merged = rubrics.front();
    std::map<std::string, NameUse> used;
    add_names(used, merged.correctness, "correctness");
    add_names(used, merged.performance, "performance");

    for (std::size_t r = 1; r < rubrics.size(); ++r) {
        const Rubric& later = rubrics[r];
        if (later.operation != merged.operation) {
            const std::string file = later.sources.empty() ? "<rubric>" : later.sources.front();
            const bool says_so = std::find(later.explicitly_set.begin(), later.explicitly_set.end(), "/operation") !=
                                 later.explicitly_set.end();
            throw ConfigError(file, says_so ? "/operation" : "",
                              "this file grades " + std::string(to_string(later.operation)) +
                                  (says_so ? "" : " (the default: it has no \"operation\" key)") + ", but " +
                                  (merged.sources.empty() ? std::string("the first rubric") : merged.sources.front()) +
                                  " grades " + std::string(to_string(merged.operation)) +
                                  "; every rubric file of one grading run grades one operation");
        }
        add_names(used, later.correctness, "correctness");
        add_names(used, later.performance, "performance");
        merged.correctness.insert(merged.correctness.end(), later.correctness.begin(), later.correctness.end());
        merged.performance.insert(merged.performance.end(), later.performance.begin(), later.performance.end());
        for (const auto& pointer : later.explicitly_set) {
            const auto copier = scalar_copiers().find(pointer);
            if (copier == scalar_copiers().end())
                throw std::logic_error("merge_rubrics: no rule for the setting " + pointer);
            copier->second(merged, later);
            if (std::find(merged.explicitly_set.begin(), merged.explicitly_set.end(), pointer) ==
                merged.explicitly_set.end())
                merged.explicitly_set.push_back(pointer);
        }
        merged.sources.insert(merged.sources.end(), later.sources.begin(), later.sources.end());
        // Privacy wins: any file may hide the board or leave a student off it.
        merged.leaderboard.show = merged.leaderboard.show && later.leaderboard.show;
        std::vector<std::string>& opt_out = merged.leaderboard.opt_out;
        for (const auto& id : later.leaderboard.opt_out)
            if (std::find(opt_out.begin(), opt_out.end(), id) == opt_out.end()) opt_out.push_back(id);
    }
    check_points_total(merged);
    return merged;
}

void check_tier_references(const Rubric& rubric, const std::map<std::string, Operation>& known_operations) {
    std::vector<std::string> known;
    for (const auto& [name, op] : known_operations) known.push_back(name);
    std::map<std::string, std::size_t> next_index;
    for (const auto& t : rubric.performance) {
        const std::size_t index = next_index[t.source]++;
        if (t.against_copy_ceiling()) continue;  // no reference kernel: the grader's own measurement
        if (const auto it = known_operations.find(t.reference); it != known_operations.end()) {
            if (it->second == rubric.operation) continue;
            throw ConfigError(t.source, "/performance/" + std::to_string(index) + "/reference",
                              "the reference kernel '" + t.reference + "' is a " + std::string(to_string(it->second)) +
                                  " kernel, but the rubric grades " + std::string(to_string(rubric.operation)) +
                                  " (its \"operation\"); a tier compares kernels of one operation");
        }
        std::string listed;
        for (std::size_t i = 0; i < known.size() && i < 12; ++i) listed += (i ? ", " : "") + known[i];
        if (known.size() > 12) listed += ", ...";
        throw ConfigError(
            t.source, "/performance/" + std::to_string(index) + "/reference",
            "no trusted plugin provides the reference kernel '" + t.reference + "'" + did_you_mean(t.reference, known) +
                "; known reference kernels: " + (listed.empty() ? "(none: no trusted plugin was found)" : listed));
    }
}

}  // namespace kreg
