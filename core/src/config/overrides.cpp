// Command-line values: parsing the size options and applying overrides on top of a config.
#include "config/shape_spec.hpp"
#include "config/sweep_config.hpp"

#include "common/operation_table.hpp"
#include "common/suggest.hpp"
#include "common/text.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

namespace kreg {
namespace fs = std::filesystem;

namespace {
// A command-line value is trimmed of spaces and tabs only: a line end inside one is an error, as before.
std::string_view trim_blanks(std::string_view s) { return trim(s, " \t"); }

// One dimension typed by a person; context is the whole option value, for the message.
int64_t parse_size(std::string_view token, const std::string& context, const char* example) {
    const std::string_view t = trim_blanks(token);
    const auto bad = [&](const std::string& why) {
        return std::invalid_argument("invalid size '" + std::string(t) + "' in '" + context + "': " + why + " (e.g. " +
                                     example + ")");
    };
    if (t.empty()) throw bad("empty size");
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (ec == std::errc::result_out_of_range) throw bad("too large");
    if (ec != std::errc() || end != t.data() + t.size()) throw bad("expected a positive integer");
    if (value < 1) throw bad("size must be >= 1");
    if (value > kMaxDimension) throw bad("size must be <= " + std::to_string(kMaxDimension));
    return value;
}

ConfigError cli_error(const char* option, const std::string& message) {
    return ConfigError(std::string(kCommandLineSource), option, message);
}
}  // namespace

std::vector<Shape> parse_sizes_option(const std::string& text) {
    std::vector<Shape> shapes;
    std::string_view rest = text;
    while (true) {
        const auto comma = rest.find(',');
        const int64_t v = parse_size(rest.substr(0, comma), text, "512,1024");
        shapes.push_back({v, v, v});
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return shapes;
}

Shape parse_shape_option(const std::string& text) {
    int64_t dims[3];
    std::string_view rest = trim_blanks(text);
    for (int d = 0; d < 3; ++d) {
        const auto x = rest.find_first_of("xX");
        if ((d < 2) != (x != std::string_view::npos))
            throw std::invalid_argument("invalid shape '" + text + "': expected MxNxK, e.g. 1000x3000x257");
        dims[d] = parse_size(rest.substr(0, x), text, "1000x3000x257");
        if (x != std::string_view::npos) rest.remove_prefix(x + 1);
    }
    return {dims[0], dims[1], dims[2]};
}

std::vector<int64_t> parse_blocks_option(const std::string& text) {
    std::vector<int64_t> blocks;
    std::string_view rest = text;
    while (true) {
        const auto comma = rest.find(',');
        const int64_t block = parse_size(rest.substr(0, comma), text, "1,2,16");
        if (block > kMaxBlockEdge)
            throw std::invalid_argument("invalid block '" + std::to_string(block) + "' in '" + text +
                                        "': block must be <= " + std::to_string(kMaxBlockEdge) + " (e.g. 1,2,16)");
        blocks.push_back(block);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return blocks;
}

namespace {
// Every operation's --shape syntax with the operations that take it: "MxNxK (gemm), MxN (transpose, ...)".
std::string shape_syntaxes() {
    std::vector<std::pair<std::string, std::string>> forms;
    for (Operation op : all_operations()) {
        const std::string syntax = size_syntax(op), name(to_string(op));
        const auto it = std::find_if(forms.begin(), forms.end(), [&](const auto& f) { return f.first == syntax; });
        if (it == forms.end())
            forms.emplace_back(syntax, name);
        else
            it->second += ", " + name;
    }
    std::string out;
    for (const auto& [syntax, names] : forms) out += (out.empty() ? "" : " or ") + syntax + " (" + names + ")";
    return out;
}

// An example of op's --shape: 17x33 for M and N, 17x33x9 for M, N and K.
std::string shape_example(Operation op) {
    static const char* const kValues[kMaxShapeKeys] = {"17", "33", "9", "5"};
    std::string out;
    for (std::size_t i = 0; i < operation_row(op).size_keys().size(); ++i)
        out += (i ? "x" : "") + std::string(kValues[i]);
    return out;
}
}  // namespace

std::vector<int64_t> parse_dims_option(const std::string& text) {
    std::vector<int64_t> dims;
    std::string_view rest = trim_blanks(text);
    while (true) {
        const auto x = rest.find_first_of("xX");
        if (dims.size() == kMaxShapeKeys)
            throw std::invalid_argument("invalid shape '" + text + "': expected " + shape_syntaxes());
        dims.push_back(parse_size(rest.substr(0, x), text, "1000x3000x257 or 17x33"));
        if (x == std::string_view::npos) break;
        rest.remove_prefix(x + 1);
    }
    return dims;
}

Baseline parse_baseline_option(const std::string& text) {
    if (text.find('=') == std::string::npos) {
        const std::string name(trim_blanks(text));
        if (name.empty()) throw cli_error("--baseline", "empty kernel name");
        return Baseline::same_for_all(name);
    }
    std::vector<std::string> dtype_names;
    for (DType d : all_dtypes()) dtype_names.emplace_back(to_string(d));
    std::map<DType, std::string> kernels;
    std::string_view rest = text;
    while (true) {
        const auto comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        const auto eq = item.find('=');
        if (eq == std::string_view::npos)
            throw cli_error("--baseline", "'" + std::string(trim_blanks(item)) + "' in '" + text +
                                              "' is not DTYPE=KERNEL; give one kernel name, or DTYPE=KERNEL pairs "
                                              "separated by commas (e.g. fp32=cublas_sgemm,bf16=cublas_bf16)");
        const std::string key(trim_blanks(item.substr(0, eq)));
        const std::string name(trim_blanks(item.substr(eq + 1)));
        const auto dtype = parse_dtype(key);
        if (!dtype)
            throw cli_error("--baseline", "unknown dtype '" + key + "' in '" + text + "'" +
                                              did_you_mean(key, dtype_names) +
                                              "; expected one of fp32, tf32, bf16, fp16");
        if (name.empty()) throw cli_error("--baseline", "empty kernel name for " + key + " in '" + text + "'");
        if (!kernels.emplace(*dtype, name).second)
            throw cli_error("--baseline", "dtype " + key + " is given twice in '" + text + "'");
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return Baseline::per_dtype(std::move(kernels));
}

namespace {

void check_kernels(const CliOverrides& o) {
    if (o.kernels) {
        if (o.kernels->empty()) throw cli_error("--kernels", "must name at least one kernel or glob");
        for (const auto& k : *o.kernels)
            if (k.empty()) throw cli_error("--kernels", "empty kernel name");
    }
}

// A shape of op whose size keys all hold v (--sizes' squares); the members op lacks are 0, its per-call
// parameter is crossed in later.
Shape square_of(Operation op, int64_t v) {
    Shape s{0, 0, 0, 0};
    for (const ShapeKeyDef& k : operation_row(op).size_keys()) set_dim(s, k.dim, v);
    return s;
}

// --shape's sizes in op's size keys: their count must be op's.
Shape typed_shape(Operation op, const std::string& text) {
    std::vector<int64_t> dims;
    try {
        dims = parse_dims_option(text);
    } catch (const std::invalid_argument& e) {
        throw cli_error("--shape", e.what());
    }
    const std::vector<ShapeKeyDef> keys = operation_row(op).size_keys();
    if (dims.size() != keys.size()) {
        std::string others;
        for (Operation other : all_operations())
            if (operation_row(other).size_keys().size() == dims.size())
                others += (others.empty() ? "" : " or ") + std::string(to_string(other));
        throw cli_error("--shape", "'" + text + "' has " + std::to_string(dims.size()) +
                                       (dims.size() == 1 ? " size" : " sizes") + ", but a " +
                                       std::string(to_string(op)) + " shape is " + size_syntax(op) + " (e.g. " +
                                       shape_example(op) + ")" +
                                       (others.empty() ? "" : "; for a shape of " + others + " give --operation"));
    }
    Shape s{0, 0, 0, 0};
    for (std::size_t i = 0; i < keys.size(); ++i) set_dim(s, keys[i].dim, dims[i]);
    return s;
}

// The shapes as typed (--sizes, --shape, --shapes), in the operation's terms; none when none was typed.
std::optional<std::vector<Shape>> typed_shapes(const CliOverrides& o, Operation op) {
    std::optional<std::vector<Shape>> given;
    if (o.sizes || o.shape_texts || o.shapes) given.emplace();
    if (o.sizes)
        for (int64_t v : *o.sizes) given->push_back(square_of(op, v));
    if (o.shape_texts)
        for (const auto& text : *o.shape_texts) given->push_back(typed_shape(op, text));
    if (o.shapes) {
        if (o.shapes->empty()) throw cli_error("--shapes", "must give at least one shape");
        given->insert(given->end(), o.shapes->begin(), o.shapes->end());
    }
    return given;
}

// The operations whose per-call parameter --block gives (from the table).
std::string block_operations() {
    std::string out;
    for (Operation op : all_operations())
        if (const ShapeKeyDef* p = operation_row(op).param(); p && std::string(p->name) == "block")
            out += (out.empty() ? "" : " or ") + std::string(to_string(op));
    return out;
}

// --block: the values of the operation's per-call parameter (operations.def), only for an operation with one.
void check_blocks(const CliOverrides& o, Operation op) {
    const std::string op_name(to_string(op));
    if (o.blocks) {
        const ShapeKeyDef* param = operation_row(op).param();
        if (param == nullptr || std::string(param->name) != "block")
            throw cli_error("--block", "--block is the tile edge of " + block_operations() +
                                           ", but this sweep's operation is " + op_name + " (give --operation " +
                                           block_operations() + ")");
        if (o.blocks->empty()) throw cli_error("--block", "must give at least one block");
        for (int64_t b : *o.blocks)  // parse_blocks_option checked typed ones; these may be built in code
            if (b < 1 || b > param->max)
                throw cli_error("--block", "block must be between 1 and " + std::to_string(param->max) + ", got " +
                                               std::to_string(b));
    }
}

// A sweep of an operation with a per-call parameter: every shape with every value; what is not given comes from
// a config of the same operation.
void cross_with_blocks(const SweepConfig& config, const CliOverrides& o, Operation op,
                       std::optional<std::vector<Shape>>& given) {
    const OperationRow& row = operation_row(op);
    const Dim param = row.param()->dim;
    const bool from_config = config.operation == op;
    std::vector<int64_t> blocks;
    if (o.blocks)
        blocks = *o.blocks;
    else if (from_config)
        for (const auto& s : config.shapes)
            if (std::find(blocks.begin(), blocks.end(), dim_value(s, param)) == blocks.end())
                blocks.push_back(dim_value(s, param));
    if (blocks.empty())
        throw cli_error("--block", "a " + std::string(row.name) +
                                       " sweep needs its tile edges: give --block (e.g. --block 1,2,16)");
    std::vector<Shape> planes;
    if (given)
        planes = *given;
    else {  // each shape of the config once: its parameter's values are replaced, not repeated
        std::set<std::string> seen;
        for (const auto& s : config.shapes)
            if (seen.insert(size_text(op, s)).second) planes.push_back(s);
    }
    std::vector<Shape> crossed;
    for (Shape p : planes)
        for (int64_t b : blocks) {
            set_dim(p, param, b);
            crossed.push_back(p);
        }
    given = std::move(crossed);
}

// The typed shapes checked and made unique, with the notes of those given twice.
std::vector<Shape> checked_shapes(const CliOverrides& o, Operation op, const std::vector<Shape>& given,
                                  std::vector<std::string>& shape_notes) {
    const char* option = o.shapes ? "--shapes" : o.shape_texts ? "--shape" : o.sizes ? "--sizes" : "--block";
    if (given.empty()) throw cli_error(option, "must give at least one shape");
    for (const auto& s : given) {
        for (int64_t v : key_values(op, s))
            if (v < 1 || v > kMaxDimension)
                throw cli_error(option, "size must be between 1 and " + std::to_string(kMaxDimension) + ", got " +
                                            std::to_string(v) + " in " + to_string(s));
    }
    config_detail::UniqueShapes unique;
    unique.add(given, option);
    if (unique.size() > kMaxSweepShapes) throw cli_error(option, "too many shapes");
    shape_notes = unique.notes(std::string(kCommandLineSource));
    return unique.take();
}

// The run settings and report paths, checked.
void check_run_overrides(const SweepConfig& config, const CliOverrides& o) {
    const auto positive = [](const char* option, const char* what, const std::optional<double>& v) {
        if (v && !(*v > 0)) throw cli_error(option, std::string(what) + " must be > 0, got " + std::to_string(*v));
    };
    if (o.warmup && *o.warmup < 0) throw cli_error("--warmup", "warmup must be >= 0, got " + std::to_string(*o.warmup));
    if (o.repeats && *o.repeats < 1)
        throw cli_error("--repeat", "repeats must be >= 1, got " + std::to_string(*o.repeats));
    positive("--time-budget", "time_budget_s", o.time_budget_s);
    positive("--timeout", "timeout_s", o.timeout_s);
    positive("--tolerance", "tolerance", o.tolerance);
    if (o.device && *o.device < 0) throw cli_error("--device", "device must be >= 0, got " + std::to_string(*o.device));
    if (o.baseline) {  // parse_baseline_option made it; checked again for overrides built in code
        for (const auto& k : o.baseline->kernels())
            if (k.empty()) throw cli_error("--baseline", "empty kernel name");
    }
    if (o.json && o.json->empty()) throw cli_error("--json", "empty path");
    if (o.csv && o.csv->empty()) throw cli_error("--csv", "empty path");
    {
        const std::optional<std::string> json = o.json ? o.json : config.output.json;
        // --json without --csv takes the CSV along (beside it), whatever the config named.
        const std::optional<std::string> csv = o.csv ? o.csv : o.json ? std::nullopt : config.output.csv;
        if (json && csv && fs::path(*json).lexically_normal() == fs::path(*csv).lexically_normal())
            throw cli_error(o.csv ? "--csv" : "--json", std::string(o.json ? "--json" : "output.json") + " and " +
                                                            (o.csv ? "--csv" : "output.csv") + " are the same path '" +
                                                            *csv + "'; the CSV report would overwrite the JSON one");
    }
}

void apply_checked_overrides(SweepConfig& config, const CliOverrides& o) {
    if (o.kernels) config.kernels = *o.kernels;
    RunSettings& s = config.settings;
    if (o.warmup) s.warmup = *o.warmup;
    if (o.repeats) s.repeats = *o.repeats;
    if (o.time_budget_s) s.time_budget_s = o.time_budget_s;
    if (o.timeout_s) s.timeout_s = *o.timeout_s;
    if (o.tolerance) s.tolerance = o.tolerance;
    if (o.verify) s.verify = *o.verify;
    if (o.warm_cache) s.warm_cache = *o.warm_cache;
    if (o.timer) s.timer = *o.timer;
    if (o.seed) config.seed = *o.seed;
    if (o.device) s.device = *o.device;
    if (o.baseline) config.baseline = *o.baseline;
    if (o.json) {
        config.output.json = o.json;
        if (!o.csv) config.output.csv.reset();  // the runner writes it beside the JSON report
    }
    if (o.csv) config.output.csv = o.csv;
}

}  // namespace

void apply_overrides(SweepConfig& config, const CliOverrides& o) {
    // Validate everything first so that a bad option leaves the config untouched.
    check_kernels(o);
    const Operation op = o.operation.value_or(config.operation);
    const std::string op_name(to_string(op));
    std::optional<std::vector<Shape>> given = typed_shapes(o, op);
    check_blocks(o, op);
    if (o.operation && *o.operation != config.operation && !given) {
        if (config.source != kCommandLineSource)
            throw cli_error("--operation", "changes the operation of " + config.source + " from " +
                                               std::string(to_string(config.operation)) + " to " + op_name +
                                               ", whose shapes differ: give --sizes or --shape too");
        given = std::vector<Shape>{square_of(op, 512)};
    }
    if (operation_row(op).param() != nullptr && (given || o.blocks)) cross_with_blocks(config, o, op, given);
    std::vector<Shape> shapes;
    std::vector<std::string> shape_notes;
    if (given) shapes = checked_shapes(o, op, *given, shape_notes);
    std::vector<DType> dtypes;
    if (o.dtypes) {
        if (o.dtypes->empty()) throw cli_error("--dtypes", "must give at least one dtype");
        for (DType d : *o.dtypes)
            if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
    }
    check_run_overrides(config, o);

    config.operation = op;
    if (given) {
        config.shapes = std::move(shapes);
        config.notes = std::move(shape_notes);  // the config's own shapes, and their notes, are replaced
    }
    if (o.dtypes) config.dtypes = std::move(dtypes);
    apply_checked_overrides(config, o);
}

}  // namespace kreg
