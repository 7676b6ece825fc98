// Internal to the config parser: turning shape specs into lists of shapes.
#pragma once

#include "common/types.hpp"
#include "config/json_node.hpp"

#include <vector>

namespace kreg::config_detail {

// Expands one entry of "shapes": {"m": D, "n": D, "k": D, "combine": "cartesian"|"zip"} or {"square": D},
// where D is an integer, a list of integers or a range object. Shapes come out in spec order (cartesian:
// m outermost, k innermost), duplicates included.
std::vector<Shape> expand_shape_spec(const Node& spec);

// Appends the shapes of more that are not in into yet, keeping first-occurrence order.
void append_unique(std::vector<Shape>& into, const std::vector<Shape>& more);

}  // namespace kreg::config_detail
