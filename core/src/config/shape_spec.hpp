// Internal to the config parser: turning shape specs into lists of shapes.
#pragma once

#include "common/types.hpp"
#include "config/json_node.hpp"

#include <unordered_set>
#include <vector>

namespace kreg::config_detail {

// Expands one entry of "shapes": {"m": D, "n": D, "k": D, "combine": "cartesian"|"zip"} or {"square": D},
// where D is an integer, a list of integers or a range object. Shapes come out in spec order (cartesian:
// m outermost, k innermost), duplicates included.
// op picks the dimensions: GEMM m, n, k (or square); transpose m, n (or square: m = n); block_transpose
// m, n and block (or square and block). Transposes come out with k = 0.
std::vector<Shape> expand_shape_spec(const Node& spec, Operation op = Operation::gemm);

// The "operation" key of a sweep config or a rubric: a name of all_operations(); anything else fails at
// the node naming every known operation, with a did-you-mean.
Operation parse_operation_node(const Node& node);

// Shapes in order of first occurrence, each once. A hash set remembers what was seen, so that adding n
// shapes in any number of calls costs O(n): a sweep of 100 000 one-shape specs must not be quadratic.
class UniqueShapes {
public:
    void add(const std::vector<Shape>& more);
    std::size_t size() const { return shapes_.size(); }
    std::vector<Shape> take() { return std::move(shapes_); }

private:
    struct Hash {
        std::size_t operator()(const Shape& s) const;
    };
    struct Equal {
        bool operator()(const Shape& a, const Shape& b) const { return a == b; }
    };
    std::vector<Shape> shapes_;
    std::unordered_set<Shape, Hash, Equal> seen_;
};

}  // namespace kreg::config_detail
