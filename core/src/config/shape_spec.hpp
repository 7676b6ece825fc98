// Internal to the config parser: turning shape specs into lists of shapes.
#pragma once

#include "common/types.hpp"
#include "config/json_node.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace kreg::config_detail {

// Expands one entry of "shapes": {"m": D, "n": D, "k": D, "combine": "cartesian"|"zip"} or {"square": D},
// where D is an integer, a list of integers or a range object. Shapes come out in spec order (cartesian:
// m outermost, k innermost), duplicates included.
// op picks the keys, from its row of common/operations.def: GEMM m, n, k (or square); transpose m, n (or
// square: m = n); an operation with a per-call parameter also that key (m, n and block, or square and block);
// a key of another operation fails at that key. The members an operation lacks come out 0.
std::vector<Shape> expand_shape_spec(const Node& spec, Operation op = Operation::gemm);

// The "operation" key of a sweep config or a rubric: a name of all_operations(); anything else fails at
// the node naming every known operation, with a did-you-mean.
Operation parse_operation_node(const Node& node);

// Shapes in order of first occurrence, each once. A hash map remembers what was seen and where, so that
// adding n shapes in any number of calls costs O(n): a sweep of 100 000 one-shape specs must not be
// quadratic. A shape given again keeps its first row; notes() says where both were given (the first
// kMaxRepeatNotes repeats, then how many more), for the runner to print: a repeat is usually a typo.
class UniqueShapes {
public:
    static constexpr std::size_t kMaxRepeatNotes = 5;
    // where: the JSON path ("/shapes/3") or the option ("--sizes") the shapes come from.
    void add(const std::vector<Shape>& more, const std::string& where = "");
    std::size_t size() const { return shapes_.size(); }
    std::vector<Shape> take() { return std::move(shapes_); }
    // file: what the notes name before the paths (the config file, or "<command line>").
    std::vector<std::string> notes(const std::string& file) const;

private:
    struct Hash {
        std::size_t operator()(const Shape& s) const;
    };
    struct Equal {
        bool operator()(const Shape& a, const Shape& b) const { return a == b; }
    };
    struct Repeat {
        Shape shape;
        std::string first, again;
    };
    std::vector<Shape> shapes_;
    std::unordered_map<Shape, std::string, Hash, Equal> first_given_at_;
    std::vector<Repeat> repeats_;  // the first kMaxRepeatNotes
    std::size_t repeat_count_ = 0;
};

}  // namespace kreg::config_detail
