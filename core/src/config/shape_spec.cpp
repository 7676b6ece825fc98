#include "config/shape_spec.hpp"

#include "common/suggest.hpp"

#include <cmath>
#include <string>

namespace kreg::config_detail {
namespace {
const std::vector<std::string> kShapeKeys{"m", "n", "k", "block", "combine", "square"};
const std::vector<std::string> kRangeKeys{"from", "to", "step", "pow2", "mul"};
const std::vector<std::string> kCombineModes{"cartesian", "zip"};

// The values of one dimension; is_list is false for a single integer, which zip broadcasts.
struct DimValues {
    std::vector<int64_t> values;
    bool is_list = true;
};

[[noreturn]] void fail_too_many(const Node& node, std::size_t count, const std::string& what) {
    node.fail(what + " has " + std::to_string(count) + " values; at most " + std::to_string(kMaxSweepShapes) +
              " are allowed");
}

std::vector<int64_t> linear_range(const Node& range, int64_t from, int64_t to, const Node& step_node) {
    const int64_t step = step_node.as_int("step", 1, kMaxDimension);
    const auto count = static_cast<std::size_t>((to - from) / step + 1);
    if (count > kMaxSweepShapes) fail_too_many(range, count, "range");
    std::vector<int64_t> values;
    for (int64_t v = from; v <= to; v += step) values.push_back(v);
    return values;
}

std::vector<int64_t> pow2_range(int64_t from, int64_t to, const Node& from_node, const Node& pow2_node) {
    if (!pow2_node.as_bool()) pow2_node.fail("pow2 must be true (use 'step' for a linear range)");
    if ((from & (from - 1)) != 0)
        from_node.fail("with pow2, 'from' must be a power of two, got " + std::to_string(from));
    std::vector<int64_t> values;
    for (int64_t v = from; v <= to; v *= 2) values.push_back(v);
    return values;
}

// from, from*mul, from*mul^2, ... rounded to integers; repeats after rounding are dropped.
std::vector<int64_t> geometric_range(const Node& range, int64_t from, int64_t to, const Node& mul_node) {
    const double mul = mul_node.as_positive_number("mul");
    if (!(mul > 1)) mul_node.fail("mul must be > 1, got " + mul_node.value().dump());
    const double steps = std::floor(std::log(double(to) / double(from)) / std::log(mul) + 1e-9) + 1;
    if (steps > double(kMaxSweepShapes)) fail_too_many(range, static_cast<std::size_t>(steps), "range");
    std::vector<int64_t> values;
    for (int i = 0; i < int(steps); ++i) {
        const auto v = static_cast<int64_t>(std::llround(double(from) * std::pow(mul, i)));
        if (v > to) break;
        if (values.empty() || values.back() != v) values.push_back(v);
    }
    return values;
}

std::vector<int64_t> expand_range(const Node& range) {
    range.expect_object_with_keys(kRangeKeys);
    const auto from_node = range.find("from");
    const auto to_node = range.find("to");
    if (!from_node || !to_node) range.fail("a range needs 'from' and 'to'");
    const int64_t from = from_node->as_int("size", 1, kMaxDimension);
    const int64_t to = to_node->as_int("size", 1, kMaxDimension);
    const auto step = range.find("step");
    const auto pow2 = range.find("pow2");
    const auto mul = range.find("mul");
    const int kinds = int(step.has_value()) + int(pow2.has_value()) + int(mul.has_value());
    if (kinds == 0) range.fail("a range needs one of 'step', 'pow2' or 'mul'");
    if (kinds > 1) range.fail("a range takes only one of 'step', 'pow2' or 'mul'");
    if (from > to)
        range.fail("empty range: 'from' (" + std::to_string(from) + ") is greater than 'to' (" + std::to_string(to) +
                   ")");
    if (step) return linear_range(range, from, to, *step);
    if (pow2) return pow2_range(from, to, *from_node, *pow2);
    return geometric_range(range, from, to, *mul);
}

DimValues expand_dim(const Node& dim) {
    const auto& v = dim.value();
    if (v.is_number()) return {{dim.as_int("size", 1, kMaxDimension)}, false};
    if (v.is_array()) {
        dim.expect_non_empty_array("sizes");
        if (v.size() > kMaxSweepShapes) fail_too_many(dim, v.size(), "list");
        DimValues out;
        for (std::size_t i = 0; i < v.size(); ++i)
            out.values.push_back(dim.element(i).as_int("size", 1, kMaxDimension));
        return out;
    }
    if (v.is_object()) return {expand_range(dim), true};
    dim.fail_type("integer, list of integers or range object ({\"from\", \"to\", \"step\"|\"pow2\"|\"mul\"})");
}

std::vector<Shape> cartesian(const Node& spec, const DimValues& m, const DimValues& n, const DimValues& k) {
    const std::size_t count = m.values.size() * n.values.size() * k.values.size();  // each <= 1e5: no overflow
    if (count > kMaxSweepShapes)
        spec.fail("expands to " + std::to_string(count) + " shapes (" + std::to_string(m.values.size()) + " x " +
                  std::to_string(n.values.size()) + " x " + std::to_string(k.values.size()) + "); at most " +
                  std::to_string(kMaxSweepShapes) + " are allowed");
    std::vector<Shape> shapes;
    shapes.reserve(count);
    for (int64_t mv : m.values)
        for (int64_t nv : n.values)
            for (int64_t kv : k.values) shapes.push_back({mv, nv, kv});
    return shapes;
}

// names: the keys the three dimensions were given under, for messages ("square" twice for a transpose square).
std::vector<Shape> zip(const Node& spec, const DimValues* dims[3], const char* const kNames[3]) {
    std::size_t length = 1;
    const char* length_from = nullptr;
    for (int d = 0; d < 3; ++d) {
        if (!dims[d]->is_list) continue;
        if (!length_from) {
            length = dims[d]->values.size();
            length_from = kNames[d];
        } else if (dims[d]->values.size() != length) {
            spec.find(kNames[d])->fail("\"combine\": \"zip\" needs list-valued dimensions of one length: '" +
                                       std::string(length_from) + "' has " + std::to_string(length) + " values, '" +
                                       kNames[d] + "' has " + std::to_string(dims[d]->values.size()));
        }
    }
    auto at = [&](int d, std::size_t i) { return dims[d]->is_list ? dims[d]->values[i] : dims[d]->values[0]; };
    std::vector<Shape> shapes;
    for (std::size_t i = 0; i < length; ++i) shapes.push_back({at(0, i), at(1, i), at(2, i)});
    return shapes;
}

// "combine": "cartesian" (the default) or "zip".
std::string parse_combine(const Node& spec) {
    const auto node = spec.find("combine");
    if (!node) return "cartesian";
    const std::string combine = node->as_string();
    if (combine != "cartesian" && combine != "zip")
        node->fail("unknown combine mode '" + combine + "'" + did_you_mean(combine, kCombineModes) +
                   "; expected 'cartesian' or 'zip'");
    return combine;
}

// A block_transpose tile edge: a dimension whose every value lies in 1..kMaxBlockEdge, checked at the node
// that holds it (/shapes/N/block, an element of its list, or its range's 'from' or 'to').
DimValues expand_block_dim(const Node& block) {
    const auto edge = [](const Node& n) { return n.as_int("block", 1, kMaxBlockEdge); };
    const auto& v = block.value();
    if (v.is_number()) return {{edge(block)}, false};
    if (v.is_array()) {
        block.expect_non_empty_array("blocks");
        DimValues out;
        for (std::size_t i = 0; i < v.size(); ++i) out.values.push_back(edge(block.element(i)));
        return out;
    }
    if (v.is_object()) {
        block.expect_object_with_keys(kRangeKeys);
        for (const char* bound : {"from", "to"})
            if (const auto n = block.find(bound)) edge(*n);
        return {expand_range(block), true};
    }
    block.fail_type("integer, list of integers or range object ({\"from\", \"to\", \"step\"|\"pow2\"|\"mul\"})");
}
}  // namespace

namespace {
// m x n x k, or a square.
std::vector<Shape> expand_gemm_spec(const Node& spec);

// reduction: {"n": D}, the count of the sum; every other key is another operation's.
std::vector<Shape> expand_reduction_spec(const Node& spec) {
    for (const auto& [key, value] : spec.value().items())
        if (key != "n")
            spec.find(key)->fail("a reduction shape has only 'n' (the number of elements), not '" + key + "'");
    const auto n = spec.find("n");
    if (!n) spec.fail("missing key 'n' (a reduction shape is {\"n\": count})");
    std::vector<Shape> shapes;
    for (int64_t v : expand_dim(*n).values) shapes.push_back({1, v, 0, 0});
    return shapes;
}
}  // namespace

std::vector<Shape> expand_shape_spec(const Node& spec, Operation op) {
    if (!spec.value().is_object()) spec.fail_type("shape spec object ({\"m\", \"n\", \"k\"} or {\"square\"})");
    spec.expect_object_with_keys(kShapeKeys);
    if (op == Operation::gemm) {
        if (const auto block = spec.find("block"))
            block->fail("'block' is a dimension of block_transpose shapes, not of gemm");
        return expand_gemm_spec(spec);
    }
    if (op == Operation::reduction) return expand_reduction_spec(spec);
    const std::string opname(to_string(op));
    if (const auto k = spec.find("k"))
        k->fail("a " + opname + " shape has no 'k' (give 'm' and 'n'" +
                (op == Operation::block_transpose ? std::string(" and 'block'") : "") + ")");
    const auto block = spec.find("block");
    if (op == Operation::transpose && block)
        block->fail("'block' is a dimension of block_transpose shapes, not of transpose");
    if (op == Operation::block_transpose && !block)
        spec.fail("missing key 'block' (a block_transpose shape needs 'm', 'n' and 'block', or 'square' and 'block')");
    // M and N (or the square's edge for both) and the third dimension: the block, or none (0) for transpose.
    const auto square = spec.find("square");
    DimValues m, n;
    if (square) {
        for (const char* key : {"m", "n"})
            if (spec.find(key)) spec.find(key)->fail(std::string("'") + key + "' cannot be used with 'square'");
        m = n = expand_dim(*square);
    } else {
        for (const char* key : {"m", "n"})
            if (!spec.find(key))
                spec.fail(std::string("missing key '") + key + "' (a " + opname +
                          " shape needs 'm' and 'n', or 'square')");
        m = expand_dim(*spec.find("m"));
        n = expand_dim(*spec.find("n"));
    }
    const DimValues third = block ? expand_block_dim(*block) : DimValues{{0}, false};
    // A square is zipped with its blocks (a single size broadcasts); m and n combine as for GEMM.
    const std::string combine = square ? "zip" : parse_combine(spec);
    static const char* const kSquareNames[3] = {"square", "square", "block"};
    static const char* const kPlaneNames[3] = {"m", "n", "block"};
    const DimValues* dims[3] = {&m, &n, &third};
    std::vector<Shape> shapes =
        combine == "cartesian" ? cartesian(spec, m, n, third) : zip(spec, dims, square ? kSquareNames : kPlaneNames);
    for (Shape& s : shapes) {
        s.block = s.k;
        s.k = 0;
    }
    return shapes;
}

namespace {
std::vector<Shape> expand_gemm_spec(const Node& spec) {
    if (const auto square = spec.find("square")) {
        for (const auto& [key, value] : spec.value().items())
            if (key != "square")
                spec.find(key)->fail("'" + key +
                                     "' cannot be used with 'square' (give either 'square' or 'm', 'n' and 'k')");
        std::vector<Shape> shapes;
        for (int64_t v : expand_dim(*square).values) shapes.push_back({v, v, v});
        return shapes;
    }
    std::optional<Node> nodes[3];
    static const char* const kNames[3] = {"m", "n", "k"};
    for (int d = 0; d < 3; ++d) {
        nodes[d] = spec.find(kNames[d]);
        if (!nodes[d])
            spec.fail(std::string("missing key '") + kNames[d] +
                      "' (a shape spec needs 'm', 'n' and 'k', or 'square')");
    }
    const std::string combine = parse_combine(spec);
    const DimValues m = expand_dim(*nodes[0]), n = expand_dim(*nodes[1]), k = expand_dim(*nodes[2]);
    if (combine == "cartesian") return cartesian(spec, m, n, k);
    const DimValues* dims[3] = {&m, &n, &k};
    return zip(spec, dims, kNames);
}
}  // namespace

Operation parse_operation_node(const Node& node) {
    const std::string name = node.as_string();
    if (const auto op = parse_operation(name)) return *op;
    std::vector<std::string> known;
    for (Operation o : all_operations()) known.emplace_back(to_string(o));
    std::string listed;
    for (std::size_t i = 0; i < known.size(); ++i)
        listed += (i == 0 ? "" : i + 1 == known.size() ? " or " : ", ") + known[i];
    node.fail("unknown operation '" + name + "'" + did_you_mean(name, known) + "; expected " + listed);
}

std::size_t UniqueShapes::Hash::operator()(const Shape& s) const {
    // splitmix64-style mixing of the three dimensions.
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int64_t v : {s.m, s.n, s.k, s.block}) {
        h ^= static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        h ^= h >> 31;
    }
    return static_cast<std::size_t>(h);
}

void UniqueShapes::add(const std::vector<Shape>& more, const std::string& where) {
    for (const auto& s : more) {
        const auto [it, added] = first_given_at_.emplace(s, where);
        if (added) {
            shapes_.push_back(s);
            continue;
        }
        if (repeats_.size() < kMaxRepeatNotes) repeats_.push_back({s, it->second, where});
        ++repeat_count_;
    }
}

std::vector<std::string> UniqueShapes::notes(const std::string& file) const {
    std::vector<std::string> out;
    for (const auto& r : repeats_) {
        const std::string shape = to_string(r.shape);
        out.push_back(
            file + ": " + r.again + ": " +
            (r.first == r.again ? "gives " + shape + " more than once" : shape + " is already given at " + r.first) +
            "; it is measured once");
    }
    if (repeat_count_ > repeats_.size())
        out.push_back(file + ": " + std::to_string(repeat_count_ - repeats_.size()) +
                      " more repeated shape(s) not listed; each is measured once");
    return out;
}

}  // namespace kreg::config_detail
