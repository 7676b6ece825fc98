#include "common/operation_table.hpp"

#include <stdexcept>

namespace kreg {
namespace {

const OperationRow kRows[] = {
#define KREG_OPERATION(ident, abi_value, ...) OperationRow{Operation::ident, #ident, abi_value, __VA_ARGS__},
#include "common/operations.def"
#undef KREG_OPERATION
};

// Rows are indexed by their ABI value: appended in order, never renumbered (operations.def).
constexpr bool rows_in_abi_order() {
    int expected = 0;
#define KREG_OPERATION(ident, abi_value, ...) \
    if (int(abi_value) != expected++) return false;
#include "common/operations.def"
#undef KREG_OPERATION
    return true;
}
static_assert(rows_in_abi_order(), "operations.def: rows must be in the order of their kreg_operation values");
static_assert(kMaxShapeKeys == KREG_CALL_MAX_SIZES, "a row's keys are the sizes of its kreg_call");

}  // namespace

std::vector<ShapeKeyDef> OperationRow::shape_keys() const {
    std::vector<ShapeKeyDef> out;
    for (const ShapeKeyDef& k : keys)
        if (k.dim != Dim::none) out.push_back(k);
    return out;
}

std::vector<ShapeKeyDef> OperationRow::size_keys() const {
    std::vector<ShapeKeyDef> out;
    for (const ShapeKeyDef& k : keys)
        if (k.dim != Dim::none && k.role == KeyRole::size) out.push_back(k);
    return out;
}

const ShapeKeyDef* OperationRow::param() const {
    for (const ShapeKeyDef& k : keys)
        if (k.dim != Dim::none && k.role == KeyRole::param) return &k;
    return nullptr;
}

bool OperationRow::has_key(Dim d) const {
    for (const ShapeKeyDef& k : keys)
        if (k.dim == d) return true;
    return false;
}

const OperationRow& operation_row(Operation op) {
    const auto index = static_cast<std::size_t>(op);
    if (index >= std::size(kRows))
        throw std::logic_error("operation_row: no row for operation " + std::to_string(index));
    return kRows[index];
}

const OperationRow* operation_row(kreg_operation op) {
    for (const OperationRow& row : kRows)
        if (row.abi == op) return &row;
    return nullptr;
}

const std::vector<Operation>& all_operations() {
    static const std::vector<Operation> all = [] {
        std::vector<Operation> v;
        for (const OperationRow& row : kRows) v.push_back(row.id);
        return v;
    }();
    return all;
}

std::string_view to_string(Operation o) {
    for (const OperationRow& row : kRows)
        if (row.id == o) return row.name;
    return "unknown";
}

std::optional<Operation> parse_operation(std::string_view s) {
    for (const OperationRow& row : kRows)
        if (s == row.name) return row.id;
    return std::nullopt;
}

std::string operation_names(const char* last_joiner) {
    std::string out;
    const std::size_t count = std::size(kRows);
    for (std::size_t i = 0; i < count; ++i)
        out += (i == 0 ? "" : i + 1 == count ? last_joiner : ", ") + std::string(kRows[i].name);
    return out;
}

int64_t dim_value(const Shape& s, Dim d) {
    switch (d) {
        case Dim::none:
            return 0;
        case Dim::one:
            return 1;
        case Dim::m:
            return s.m;
        case Dim::n:
            return s.n;
        case Dim::k:
            return s.k;
        case Dim::block:
            return s.block;
    }
    return 0;
}

void set_dim(Shape& s, Dim d, int64_t value) {
    switch (d) {
        case Dim::m:
            s.m = value;
            break;
        case Dim::n:
            s.n = value;
            break;
        case Dim::k:
            s.k = value;
            break;
        case Dim::block:
            s.block = value;
            break;
        case Dim::none:
        case Dim::one:
            break;
    }
}

Shape shape_of(Operation op, const std::vector<int64_t>& values) {
    const std::vector<ShapeKeyDef> keys = operation_row(op).shape_keys();
    if (values.size() != keys.size())
        throw std::logic_error("shape_of: " + std::to_string(values.size()) + " values for the " +
                               std::to_string(keys.size()) + " keys of " + std::string(to_string(op)));
    Shape s{0, 0, 0, 0};
    for (std::size_t i = 0; i < keys.size(); ++i) set_dim(s, keys[i].dim, values[i]);
    return s;
}

std::vector<int64_t> key_values(Operation op, const Shape& s) {
    std::vector<int64_t> out;
    for (const ShapeKeyDef& k : operation_row(op).shape_keys()) out.push_back(dim_value(s, k.dim));
    return out;
}

std::string size_syntax(Operation op) {
    std::string out;
    for (const ShapeKeyDef& k : operation_row(op).size_keys()) {
        if (!out.empty()) out += "x";
        for (const char* c = k.name; *c; ++c) out += char(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
    }
    return out;
}

std::string size_text(Operation op, const Shape& s) {
    std::string out;
    for (const ShapeKeyDef& k : operation_row(op).size_keys())
        out += (out.empty() ? "" : "x") + std::to_string(dim_value(s, k.dim));
    return out;
}

std::size_t element_count(const Shape& s, const Extent& e) {
    if (e.rows == Dim::none || e.cols == Dim::none) return 0;
    return std::size_t(dim_value(s, e.rows)) * std::size_t(dim_value(s, e.cols));
}

int64_t row_length(const Shape& s, const Extent& e) { return e.cols == Dim::none ? 1 : dim_value(s, e.cols); }

double work_flops(Operation op, const Shape& s) {
    const FlopModel& f = operation_row(op).flops;
    if (f.factor == 0) return 0;
    double flops = f.factor;
    for (Dim d : f.dims)
        if (d != Dim::none) flops *= double(dim_value(s, d));
    return flops;
}

double work_bytes(Operation op, const Shape& s, DType dtype) {
    const OperationRow& row = operation_row(op);
    const double in = (dtype == DType::bf16 || dtype == DType::fp16) ? 2.0 : 4.0;
    return in * (double(element_count(s, row.a)) + double(element_count(s, row.b))) +
           4.0 * double(element_count(s, row.c));
}

double work_rate(Operation op, const Shape& s, DType dtype, double median_ms) {
    const double work = operation_row(op).bound == Bound::compute ? work_flops(op, s) : work_bytes(op, s, dtype);
    return work / (median_ms * 1e-3) / 1e9;
}

}  // namespace kreg
