#include "config/shape_spec.hpp"

#include "common/operation_table.hpp"
#include "common/suggest.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace kreg::config_detail {
namespace {
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

// Every combination, the first key outermost.
std::vector<Shape> cartesian(const Node& spec, Operation op, const std::vector<DimValues>& dims) {
    double product = 1;  // each list has <= 1e5 values, so the product of four fits a double, not a size_t
    std::string sizes;
    for (const DimValues& d : dims) {
        product *= double(d.values.size());
        sizes += (sizes.empty() ? "" : " x ") + std::to_string(d.values.size());
    }
    if (product > double(kMaxSweepShapes))
        spec.fail("expands to " + std::to_string(static_cast<unsigned long long>(product)) + " shapes (" + sizes +
                  "); at most " + std::to_string(kMaxSweepShapes) + " are allowed");
    const auto count = static_cast<std::size_t>(product);
    std::vector<Shape> shapes;
    shapes.reserve(count);
    std::vector<int64_t> values(dims.size());
    for (std::size_t index = 0; index < count; ++index) {
        std::size_t rest = index;
        for (std::size_t d = dims.size(); d-- > 0;) {
            values[d] = dims[d].values[rest % dims[d].values.size()];
            rest /= dims[d].values.size();
        }
        shapes.push_back(shape_of(op, values));
    }
    return shapes;
}

// names: the keys the dimensions were given under, for messages ("square" for each key a square gives).
std::vector<Shape> zip(const Node& spec, Operation op, const std::vector<DimValues>& dims,
                       const std::vector<std::string>& names) {
    std::size_t length = 1;
    const std::string* length_from = nullptr;
    for (std::size_t d = 0; d < dims.size(); ++d) {
        if (!dims[d].is_list) continue;
        if (!length_from) {
            length = dims[d].values.size();
            length_from = &names[d];
        } else if (dims[d].values.size() != length) {
            spec.find(names[d])->fail("\"combine\": \"zip\" needs list-valued dimensions of one length: '" +
                                      *length_from + "' has " + std::to_string(length) + " values, '" + names[d] +
                                      "' has " + std::to_string(dims[d].values.size()));
        }
    }
    std::vector<Shape> shapes;
    std::vector<int64_t> values(dims.size());
    for (std::size_t i = 0; i < length; ++i) {
        for (std::size_t d = 0; d < dims.size(); ++d)
            values[d] = dims[d].is_list ? dims[d].values[i] : dims[d].values[0];
        shapes.push_back(shape_of(op, values));
    }
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

// A dimension whose every value lies in 1..key.max, checked at the node that holds it (/shapes/N/<key>, an
// element of its list, or its range's 'from' or 'to'); a size is named "size" in messages, a parameter by its key.
DimValues expand_key(const Node& node, const ShapeKeyDef& key) {
    if (key.max == kMaxDimension) return expand_dim(node);
    const auto value_of = [&](const Node& n) { return n.as_int(key.name, 1, key.max); };
    const auto& v = node.value();
    if (v.is_number()) return {{value_of(node)}, false};
    if (v.is_array()) {
        node.expect_non_empty_array(std::string(key.name) + "s");
        DimValues out;
        for (std::size_t i = 0; i < v.size(); ++i) out.values.push_back(value_of(node.element(i)));
        return out;
    }
    if (v.is_object()) {
        node.expect_object_with_keys(kRangeKeys);
        for (const char* bound : {"from", "to"})
            if (const auto n = node.find(bound)) value_of(*n);
        return {expand_range(node), true};
    }
    node.fail_type("integer, list of integers or range object ({\"from\", \"to\", \"step\"|\"pow2\"|\"mul\"})");
}

// "'m', 'n' and 'block'"
std::string quoted_keys(const std::vector<ShapeKeyDef>& keys) {
    std::string out;
    for (std::size_t i = 0; i < keys.size(); ++i)
        out += (i == 0 ? "" : i + 1 == keys.size() ? " and " : ", ") + ("'" + std::string(keys[i].name) + "'");
    return out;
}

// What a shape of the operation is given as: "'m', 'n' and 'k', or 'square'"; "'m', 'n' and 'block', or
// 'square' and 'block'". A square gives every size key one value; only operations with several have one.
std::string shape_forms(const OperationRow& row) {
    const std::vector<ShapeKeyDef> keys = row.shape_keys(), sizes = row.size_keys();
    std::string forms = quoted_keys(keys);
    if (sizes.size() < 2) return forms;
    std::vector<ShapeKeyDef> square_form{ShapeKeyDef{Dim::one, "square"}};
    for (const ShapeKeyDef& k : keys)
        if (k.role != KeyRole::size) square_form.push_back(k);
    return forms + ", or " + quoted_keys(square_form);
}

// Every key some operation's shapes take, and "combine" and "square".
const std::vector<std::string>& known_shape_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> out;
        for (Operation op : all_operations())
            for (const ShapeKeyDef& k : operation_row(op).shape_keys())
                if (std::find(out.begin(), out.end(), k.name) == out.end()) out.emplace_back(k.name);
        out.emplace_back("combine");
        out.emplace_back("square");
        return out;
    }();
    return keys;
}

// A key of another operation's shapes fails at that key, naming the operations that have it.
void reject_other_keys(const Node& spec, const OperationRow& row) {
    for (const auto& [key, value] : spec.value().items()) {
        if (key == "combine" || key == "square") continue;
        bool own = false;
        std::string owners;
        for (Operation op : all_operations())
            for (const ShapeKeyDef& k : operation_row(op).shape_keys())
                if (key == k.name) {
                    if (op == row.id) own = true;
                    owners += (owners.empty() ? "" : " and ") + std::string(to_string(op));
                }
        if (!own)
            spec.find(key)->fail("a " + std::string(row.name) + " shape has no '" + key + "' ('" + key +
                                 "' is a dimension of " + owners + " shapes, not of " + row.name + "; give " +
                                 shape_forms(row) + ")");
    }
}

// The values of each key in order, and the names they were given under.
void key_dims(const Node& spec, const OperationRow& row, std::vector<DimValues>& dims,
              std::vector<std::string>& names) {
    const auto square = spec.find("square");
    if (square && row.size_keys().size() < 2)
        square->fail("a " + std::string(row.name) + " shape has no 'square' (give " + shape_forms(row) + ")");
    for (const ShapeKeyDef& key : row.shape_keys()) {
        const auto node = spec.find(key.name);
        if (square && key.role == KeyRole::size) {
            if (node)
                node->fail("'" + std::string(key.name) + "' cannot be used with 'square' (give either " +
                           shape_forms(row) + ")");
            dims.push_back(expand_dim(*square));
            names.emplace_back("square");
            continue;
        }
        if (!node)
            spec.fail("missing key '" + std::string(key.name) + "' (a " + row.name + " shape needs " +
                      shape_forms(row) + ")");
        dims.push_back(expand_key(*node, key));
        names.emplace_back(key.name);
    }
}
}  // namespace

std::vector<Shape> expand_shape_spec(const Node& spec, Operation op) {
    const OperationRow& row = operation_row(op);
    if (!spec.value().is_object()) spec.fail_type("shape spec object ({\"m\", \"n\", \"k\"} or {\"square\"})");
    spec.expect_object_with_keys(known_shape_keys());
    reject_other_keys(spec, row);
    std::vector<DimValues> dims;
    std::vector<std::string> names;
    key_dims(spec, row, dims, names);
    // A square is zipped with its other keys (a single value broadcasts); otherwise "combine" says.
    const bool square = spec.find("square").has_value();
    if (square && row.param() == nullptr)
        if (const auto combine = spec.find("combine"))
            combine->fail("'combine' cannot be used with 'square' (give either " + shape_forms(row) + ")");
    const std::string combine = square ? "zip" : parse_combine(spec);
    return combine == "cartesian" ? cartesian(spec, op, dims) : zip(spec, op, dims, names);
}

Operation parse_operation_node(const Node& node) {
    const std::string name = node.as_string();
    if (const auto op = parse_operation(name)) return *op;
    std::vector<std::string> known;
    for (Operation o : all_operations()) known.emplace_back(to_string(o));
    node.fail("unknown operation '" + name + "'" + did_you_mean(name, known) + "; expected " + operation_names());
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
