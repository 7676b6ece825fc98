// The operation table (operations.def) as values: what an operation's shapes are called and how they are
// given, the extents of its operands, its work model and the rate a row of it reports. Everything that
// differs between operations outside core/src/ops reads these values instead of naming an operation.
#pragma once

#include "common/types.hpp"

#include <kreg/abi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

// A dimension of a shape (a member of Shape), or the extent 1, or nothing (an operand the operation lacks).
enum class Dim : uint8_t { none = 0, one, m, n, k, block };
// A problem size (--sizes and "square" give it; --shape's MxN... lists it) or a per-call parameter (its own
// --NAME option and JSON key; it must divide the dimensions listed with it).
enum class KeyRole : uint8_t { size, param };
// The ceiling a row is judged against on the roofline, and so the rate it reports.
enum class Bound : uint8_t {
    compute,  // FLOP/s against the FLOP peak; the row's rate is gflops (GFLOP/s)
    copy      // bytes/s against the measured device-to-device copy bandwidth; the rate is gbps (GB/s)
};

inline constexpr int64_t kMaxShapeDimension = 2147483647;  // int32 max: what every kernel can index
// Largest per-call tile edge: a 32 x 32 tile is one CUDA block of 1024 threads, the most a block may have.
inline constexpr int64_t kMaxTileEdge = 32;
inline constexpr std::size_t kMaxShapeKeys = 4;  // kreg_call.sizes

struct ShapeKeyDef {
    Dim dim = Dim::none;
    const char* name = nullptr;  // the JSON key (/shapes/N/<name>) and the word in messages
    int64_t max = kMaxShapeDimension;
    KeyRole role = KeyRole::size;
    Dim divides[2] = {};  // a param: the dimensions that must be multiples of it
};
struct Extent {
    Dim rows = Dim::none, cols = Dim::none;
};
struct FlopModel {
    double factor = 0;
    Dim dims[3] = {};
};

// One row of operations.def.
struct OperationRow {
    Operation id;
    const char* name;
    kreg_operation abi;
    ShapeKeyDef keys[kMaxShapeKeys];
    Extent a, b, c;
    bool in_place;
    FlopModel flops;
    Bound bound;

    // The keys in order (the row's non-empty ones); the size keys; the per-call parameter, if any.
    std::vector<ShapeKeyDef> shape_keys() const;
    std::vector<ShapeKeyDef> size_keys() const;
    const ShapeKeyDef* param() const;
    bool has_key(Dim d) const;
    // The rate column: "gflops" or "gbps", and its unit.
    const char* rate_field() const { return bound == Bound::compute ? "gflops" : "gbps"; }
    const char* rate_unit() const { return bound == Bound::compute ? "GFLOP/s" : "GB/s"; }
};

const OperationRow& operation_row(Operation op);
// The row whose ABI value is op, or nullptr for an operation this runner does not know.
const OperationRow* operation_row(kreg_operation op);
// Every operation's name in table order, "a, b or c" (last_joiner: " or ", or ", " for a plain list).
std::string operation_names(const char* last_joiner = " or ");

// A dimension's value in a shape (Dim::one: 1, Dim::none: 0), and the member it lives in.
int64_t dim_value(const Shape& s, Dim d);
void set_dim(Shape& s, Dim d, int64_t value);
// A shape of op from its keys' values in order (members op lacks are 0), and back.
Shape shape_of(Operation op, const std::vector<int64_t>& values);
std::vector<int64_t> key_values(Operation op, const Shape& s);
// --shape's syntax of op: its size keys in capitals joined by 'x' ("MxNxK", "MxN", "N").
std::string size_syntax(Operation op);
// The shape in op's terms: its size keys' values joined by 'x' ("17x33"), without the parameter.
std::string size_text(Operation op, const Shape& s);

// The elements of an operand (0 when the operation lacks it) and its row length.
std::size_t element_count(const Shape& s, const Extent& e);
int64_t row_length(const Shape& s, const Extent& e);

// The work model. flops: the row's factor times its dimensions. bytes: every input read once (in the
// dtype's element: 2 bytes for bf16/fp16, else 4), the fp32 output written once.
double work_flops(Operation op, const Shape& s);
double work_bytes(Operation op, const Shape& s, DType dtype);
// The row's rate: flops (compute-bound) or bytes (copy-bound) per second of median_ms, in 1e9 per second.
double work_rate(Operation op, const Shape& s, DType dtype, double median_ms);

}  // namespace kreg
