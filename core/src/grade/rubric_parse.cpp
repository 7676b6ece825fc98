// parse_rubric: one pass over the document, each key checked where it is read, with the sweep config's
// Node (file + JSON pointer in every error) and shape specs.
#include "grade/rubric.hpp"

#include "common/operation_table.hpp"
#include "common/suggest.hpp"
#include "grade/gradebook.hpp"  // is_valid_student_id
#include "config/json_node.hpp"
#include "config/shape_spec.hpp"

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

namespace kreg {
using config_detail::Node;

namespace {
const std::vector<std::string> kCaseKeys{"name", "points", "shapes", "seeds", "all_or_nothing", "tolerance"};
const std::vector<std::string> kTierKeys{"name", "points", "shape", "reference", "min_ratio", "min_fraction_of_copy"};
const std::vector<std::string> kLimitKeys{"load_s", "call_s", "total_s", "build_s", "memory_mb"};
constexpr int64_t kMaxRounds = 100;
const std::vector<std::string> kMeasureKeys{"warmup", "repeats", "time_budget_s", "rounds", "max_rounds"};
const std::vector<std::string> kBackendNames{"cpu", "cuda"};
const std::vector<std::string> kLeaderboardKeys{"show", "opt_out"};

std::string default_name(const std::string& source) {
    if (!source.empty() && source.front() == '<') return "rubric";
    const std::string stem = std::filesystem::path(source).stem().string();
    return stem.empty() ? "rubric" : stem;
}

Node require(const Node& object, const char* key) {
    auto node = object.find(key);
    if (!node) object.fail(std::string("missing required key '") + key + "'");
    return *node;
}

// Names are unique across correctness cases and performance tiers: checks and reports key on them.
class NameRegistry {
public:
    std::string take(const Node& name_node) {
        std::string name = name_node.as_non_empty_string();
        const auto [it, inserted] = first_use_.emplace(name, name_node.path());
        if (!inserted) name_node.fail("duplicate name '" + name + "' (already used at " + it->second + ")");
        return name;
    }

private:
    std::map<std::string, std::string> first_use_;
};

std::vector<Shape> parse_case_shapes(const Node& node, Operation op) {
    node.expect_non_empty_array("shape specs");
    config_detail::UniqueShapes shapes;
    for (std::size_t i = 0; i < node.value().size(); ++i) {
        shapes.add(config_detail::expand_shape_spec(node.element(i), op));
        if (shapes.size() > kMaxSweepShapes)
            node.fail("the case has more than " + std::to_string(kMaxSweepShapes) + " distinct shapes");
    }
    return shapes.take();
}

std::vector<uint64_t> parse_seeds(const Node& node) {
    node.expect_non_empty_array("seeds (integers >= 0)");
    std::vector<uint64_t> seeds;
    for (std::size_t i = 0; i < node.value().size(); ++i) {
        const uint64_t seed = node.element(i).as_uint64("seed");
        bool seen = false;
        for (uint64_t s : seeds) seen = seen || s == seed;
        if (!seen) seeds.push_back(seed);
    }
    return seeds;
}

CorrectnessCase parse_case(const Node& node, NameRegistry& names, Operation op) {
    node.expect_object_with_keys(kCaseKeys);
    CorrectnessCase c;
    c.source = node.file();
    c.name = names.take(require(node, "name"));
    c.points = require(node, "points").as_positive_number("points");
    c.shapes = parse_case_shapes(require(node, "shapes"), op);
    c.seeds = parse_seeds(require(node, "seeds"));
    if (const auto n = node.find("all_or_nothing")) c.all_or_nothing = n->as_bool();
    if (const auto n = node.find("tolerance")) c.tolerance = n->as_positive_number("tolerance");
    return c;
}

// The copy ceiling is what a data-movement operation is bound by (measure/roofline.hpp); GEMM is bound by
// its FLOPs, so a GEMM tier compares with a reference kernel instead.
bool has_copy_ceiling(Operation op) { return operation_row(op).bound == Bound::copy; }

// The operations bound by the copy ceiling, "a and b" (the transposes).
std::string copy_bound_operations() {
    std::string out;
    for (Operation op : all_operations())
        if (has_copy_ceiling(op)) out += (out.empty() ? "" : " and ") + std::string(to_string(op));
    return out;
}

// A tier against the copy ceiling: min_fraction_of_copy alone, in (0, 1], of an operation that has the
// ceiling, in a rubric that may grade CUDA kernels (the ceiling is the GPU's).
double parse_copy_fraction(const Node& node, const Node& fraction, Operation op,
                           const std::optional<Backend>& backend) {
    for (const char* other : {"reference", "min_ratio"})
        if (const auto n = node.find(other))
            n->fail(
                std::string("a tier compares with either a reference kernel ('reference' and 'min_ratio') or the copy "
                            "ceiling ('min_fraction_of_copy'), not both; '") +
                other + "' cannot be used with 'min_fraction_of_copy'");
    if (!has_copy_ceiling(op))
        fraction.fail("min_fraction_of_copy is a criterion of " + copy_bound_operations() +
                      " rubrics (their ceiling is the device-to-device copy bandwidth); this rubric grades " +
                      std::string(to_string(op)) + ", whose tiers compare with a 'reference' kernel and 'min_ratio'");
    if (backend && *backend == Backend::cpu)
        fraction.fail(
            "the copy ceiling is the GPU's measured device-to-device copy bandwidth; this rubric grades cpu kernels "
            "('backend'), which can never earn it");
    const double value = fraction.as_positive_number("min_fraction_of_copy");
    if (value > 1)
        fraction.fail(
            "min_fraction_of_copy must be <= 1 (a fraction of the copy bandwidth; a transpose moves the bytes of a "
            "copy and more slowly), got " +
            fraction.value().dump());
    return value;
}

PerformanceTier parse_tier(const Node& node, NameRegistry& names, const std::optional<std::string>& kernel,
                           Operation op, const std::optional<Backend>& backend) {
    node.expect_object_with_keys(kTierKeys);
    PerformanceTier t;
    t.source = node.file();
    t.name = names.take(require(node, "name"));
    t.points = require(node, "points").as_positive_number("points");
    const Node shape = require(node, "shape");
    const std::vector<Shape> shapes = config_detail::expand_shape_spec(shape, op);
    if (shapes.size() != 1) {
        std::string listed;
        for (std::size_t i = 0; i < shapes.size() && i < 4; ++i) listed += (i ? ", " : "") + to_string(shapes[i]);
        if (shapes.size() > 4) listed += ", ...";
        shape.fail("a performance tier's shape must expand to exactly one shape, got " + std::to_string(shapes.size()) +
                   " (" + listed + ")");
    }
    t.shape = shapes.front();
    if (const auto fraction = node.find("min_fraction_of_copy")) {
        t.min_fraction_of_copy = parse_copy_fraction(node, *fraction, op, backend);
        return t;
    }
    const auto reference_node = node.find("reference");
    if (!reference_node)
        node.fail(
            std::string("missing required key 'reference' (a tier compares with a 'reference' kernel and 'min_ratio'") +
            (has_copy_ceiling(op) ? ", or with the copy ceiling: 'min_fraction_of_copy')" : ")"));
    const Node reference = *reference_node;
    t.reference = reference.as_kernel_name("reference kernel");
    if (kernel && *kernel == t.reference)
        reference.fail("the reference '" + t.reference + "' is the graded kernel itself");
    t.min_ratio = require(node, "min_ratio").as_positive_number("min_ratio");
    return t;
}

// Each entry's points are finite (as_positive_number); their sum must be too, or max_points() and every
// percentage computed from it would be inf or NaN.
void check_points_total(const Rubric& r, const std::optional<Node>& correctness,
                        const std::optional<Node>& performance) {
    double total = 0;
    const auto add = [&](double points, const Node& list, std::size_t i) {
        total += points;
        if (!std::isfinite(total))
            list.element(i).find("points")->fail(
                "the rubric's points add up to more than the largest number (about 1.8e308)");
    };
    for (std::size_t i = 0; i < r.correctness.size(); ++i) add(r.correctness[i].points, *correctness, i);
    for (std::size_t i = 0; i < r.performance.size(); ++i) add(r.performance[i].points, *performance, i);
}

// "leaderboard": true, false, or {"show": bool, "opt_out": [student ids]}.
LeaderboardSettings parse_leaderboard(const Node& node) {
    LeaderboardSettings board;
    if (node.value().is_boolean()) {
        board.show = node.as_bool();
        return board;
    }
    if (!node.value().is_object()) node.fail_type("true, false or an object with 'show' and 'opt_out'");
    node.expect_object_with_keys(kLeaderboardKeys);
    if (const auto show = node.find("show")) board.show = show->as_bool();
    if (const auto opt_out = node.find("opt_out")) {
        if (!opt_out->value().is_array()) opt_out->fail_type("an array of student ids");
        std::map<std::string, std::string> first_use;
        for (std::size_t i = 0; i < opt_out->value().size(); ++i) {
            const Node entry = opt_out->element(i);
            const std::string id = entry.as_non_empty_string();
            if (!is_valid_student_id(id))
                entry.fail("'" + id +
                           "' is not a student id (at most 200 of A-Z a-z 0-9 _ . -, not starting with "
                           "'.': the submission's file or folder name as the gradebook has it)");
            const auto [it, inserted] = first_use.emplace(id, entry.path());
            if (!inserted) entry.fail("student '" + id + "' is listed twice (also at " + it->second + ")");
            board.opt_out.push_back(id);
        }
    }
    return board;
}

Backend parse_backend_node(const Node& node) {
    const std::string text = node.as_string();
    const auto backend = parse_backend(text);
    if (!backend) {
        // "gpu" is one edit from "cpu", but whoever writes it means the CUDA backend.
        const bool means_gpu = text == "gpu" || text == "GPU" || text == "nvidia";
        node.fail("unknown backend '" + text + "'" +
                  (means_gpu ? " (did you mean 'cuda'?)" : did_you_mean(text, kBackendNames)) +
                  "; expected 'cpu' or 'cuda'");
    }
    return *backend;
}
}  // namespace

const std::vector<std::string>& rubric_keys() {
    static const std::vector<std::string> keys{
        "$schema",     "name",    "description",          "operation",  "kernel", "backend", "limits", "correctness",
        "performance", "measure", "requires_correctness", "leaderboard"};
    return keys;
}

Rubric parse_rubric(const nlohmann::json& doc, const std::string& source) {
    const Node root(doc, source, "");
    if (!doc.is_object()) root.fail_type("a JSON object at the top level");
    root.expect_object_with_keys(rubric_keys());

    Rubric r;
    r.sources = {source};
    r.name = default_name(source);
    // find + remember that the file set it, for merge_rubrics.
    const auto setting = [&](const Node& parent, const char* key) {
        auto node = parent.find(key);
        if (node) r.explicitly_set.push_back(node->path());
        return node;
    };
    constexpr int64_t kIntMax = std::numeric_limits<int>::max();

    if (const auto n = root.find("$schema")) n->as_string();  // for editors only
    if (const auto n = setting(root, "name")) r.name = n->as_non_empty_string();
    if (const auto n = setting(root, "description")) r.description = n->as_string();
    // Before the shapes: it decides their keys. merge_rubrics requires every file to grade the same one.
    if (const auto n = setting(root, "operation")) r.operation = config_detail::parse_operation_node(*n);
    if (const auto n = setting(root, "kernel")) r.kernel = n->as_kernel_name("kernel");
    if (const auto n = setting(root, "backend")) r.backend = parse_backend_node(*n);
    if (const auto limits = root.find("limits")) {
        limits->expect_object_with_keys(kLimitKeys);
        if (const auto n = setting(*limits, "load_s")) r.limits.load_s = n->as_positive_number("load_s");
        if (const auto n = setting(*limits, "call_s")) r.limits.call_s = n->as_positive_number("call_s");
        if (const auto n = setting(*limits, "total_s")) r.limits.total_s = n->as_positive_number("total_s");
        if (const auto n = setting(*limits, "build_s")) r.limits.build_s = n->as_positive_number("build_s");
        // 64 MiB: below that not even a CUDA context fits; 1 TiB: a typo, not a limit.
        if (const auto n = setting(*limits, "memory_mb"))
            r.limits.memory_mb = n->as_int("memory_mb", 64, int64_t(1) << 20);
    }

    NameRegistry names;
    const auto correctness = root.find("correctness");
    const auto performance = root.find("performance");
    if (!correctness && !performance)
        root.fail("a rubric needs 'correctness' cases, 'performance' tiers or both; it has neither");
    if (correctness) {
        // Without tiers an empty list would grade nothing; with tiers it is the same as leaving it out.
        if (!performance || !correctness->value().is_array()) correctness->expect_non_empty_array("correctness cases");
        for (std::size_t i = 0; i < correctness->value().size(); ++i)
            r.correctness.push_back(parse_case(correctness->element(i), names, r.operation));
    }
    if (performance) {
        performance->expect_non_empty_array("performance tiers");
        for (std::size_t i = 0; i < performance->value().size(); ++i)
            r.performance.push_back(parse_tier(performance->element(i), names, r.kernel, r.operation, r.backend));
    }

    check_points_total(r, correctness, performance);

    if (const auto measure = root.find("measure")) {
        measure->expect_object_with_keys(kMeasureKeys);
        if (const auto n = setting(*measure, "warmup")) r.warmup = int(n->as_int("warmup", 0, kIntMax));
        if (const auto n = setting(*measure, "repeats")) r.repeats = int(n->as_int("repeats", 1, kIntMax));
        if (const auto n = setting(*measure, "time_budget_s")) r.time_budget_s = n->as_positive_number("time_budget_s");
        // Paired rounds of a performance tier (grade/paired_ratio.hpp): at least `rounds`, more while the
        // ratio's interval straddles the threshold, at most `max_rounds`.
        if (const auto n = setting(*measure, "rounds")) r.rounds = int(n->as_int("rounds", 1, kMaxRounds));
        if (const auto n = setting(*measure, "max_rounds")) {
            r.max_rounds = int(n->as_int("max_rounds", 1, kMaxRounds));
            if (r.max_rounds < r.rounds)
                n->fail("max_rounds (" + std::to_string(r.max_rounds) + ") must be at least rounds (" +
                        std::to_string(r.rounds) + ")");
        }
    }
    if (const auto n = setting(root, "requires_correctness")) r.requires_correctness = n->as_bool();
    if (const auto n = root.find("leaderboard")) r.leaderboard = parse_leaderboard(*n);  // merged by its own rule
    return r;
}

}  // namespace kreg
