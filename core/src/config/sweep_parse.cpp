// parse_sweep_config: one pass over the document, each key checked where it is read.
#include "config/json_node.hpp"
#include "config/shape_spec.hpp"
#include "config/sweep_config.hpp"

#include "common/suggest.hpp"

#include <filesystem>
#include <limits>
#include <map>

namespace kreg {
using config_detail::Node;

namespace {
const std::vector<std::string> kOutputKeys{"json", "csv"};

std::vector<std::string> dtype_names() {
    std::vector<std::string> names;
    for (DType d : all_dtypes()) names.emplace_back(to_string(d));
    return names;
}

std::string default_name(const std::string& source) {
    if (!source.empty() && source.front() == '<') return "default";  // "<command line>", "<built-in default>"
    const std::string stem = std::filesystem::path(source).stem().string();
    return config_detail::why_not_file_stem(stem).empty() ? stem : "default";
}

std::vector<std::string> parse_kernels(const Node& node) {
    node.expect_non_empty_array("kernel names or globs");
    std::vector<std::string> kernels;
    for (std::size_t i = 0; i < node.value().size(); ++i) kernels.push_back(node.element(i).as_non_empty_string());
    return kernels;
}

std::vector<Shape> parse_shapes(const Node& node, Operation op, std::vector<std::string>& notes) {
    node.expect_non_empty_array("shape specs");
    config_detail::UniqueShapes shapes;
    for (std::size_t i = 0; i < node.value().size(); ++i) {
        const Node spec = node.element(i);
        shapes.add(config_detail::expand_shape_spec(spec, op), spec.path());
        if (shapes.size() > kMaxSweepShapes)
            node.fail("the sweep has more than " + std::to_string(kMaxSweepShapes) + " distinct shapes");
    }
    notes = shapes.notes(node.file());
    return shapes.take();
}

std::vector<DType> parse_dtypes(const Node& node) {
    node.expect_non_empty_array("dtypes (\"fp32\", \"tf32\", \"bf16\", \"fp16\")");
    std::vector<DType> dtypes;
    for (std::size_t i = 0; i < node.value().size(); ++i) {
        const Node element = node.element(i);
        const std::string text = element.as_string();
        const auto dtype = parse_dtype(text);
        if (!dtype)
            element.fail("unknown dtype '" + text + "'" + did_you_mean(text, dtype_names()) +
                         "; expected one of fp32, tf32, bf16, fp16");
        bool seen = false;
        for (DType d : dtypes) seen = seen || d == *dtype;
        if (!seen) dtypes.push_back(*dtype);
    }
    return dtypes;
}

// "name" (every dtype) or {"<dtype>": "name", ...}.
Baseline parse_baseline(const Node& node) {
    if (node.value().is_string()) return Baseline::same_for_all(node.as_non_empty_string());
    if (!node.value().is_object())
        node.fail_type("a kernel name or an object of kernel names per dtype ({\"bf16\": \"cublas_bf16\", ...})");
    if (node.value().empty())
        node.fail("the baseline object names no dtype; give at least one (e.g. {\"fp32\": \"cublas_sgemm\"})");
    std::map<DType, std::string> kernels;
    for (const auto& item : node.value().items()) {
        const Node entry = *node.find(item.key());
        const auto dtype = parse_dtype(item.key());
        if (!dtype)
            entry.fail("unknown dtype '" + item.key() + "' as a baseline key" +
                       did_you_mean(item.key(), dtype_names()) + "; expected one of fp32, tf32, bf16, fp16");
        kernels[*dtype] = entry.as_non_empty_string();
    }
    return Baseline::per_dtype(std::move(kernels));
}

bool same_output_path(const std::string& a, const std::string& b) {
    return std::filesystem::path(a).lexically_normal() == std::filesystem::path(b).lexically_normal();
}

OutputPaths parse_output(const Node& node) {
    node.expect_object_with_keys(kOutputKeys);
    OutputPaths out;
    if (const auto json = node.find("json")) out.json = json->as_non_empty_string();
    const auto csv = node.find("csv");
    if (csv) out.csv = csv->as_non_empty_string();
    if (out.json && out.csv && same_output_path(*out.json, *out.csv))
        csv->fail("output.json and output.csv are the same path '" + *out.csv +
                  "'; the CSV report would overwrite the JSON one");
    return out;
}
}  // namespace

SweepConfig parse_sweep_config(const nlohmann::json& doc, const std::string& source) {
    const Node root(doc, source, "");
    if (!doc.is_object()) root.fail_type("a JSON object at the top level");
    root.expect_object_with_keys(sweep_config_keys());

    SweepConfig config;
    config.source = source;
    config.name = default_name(source);

    const auto require = [&](const char* key) {
        auto node = root.find(key);
        if (!node) root.fail(std::string("missing required key '") + key + "'");
        return *node;
    };
    constexpr int64_t kIntMax = std::numeric_limits<int>::max();

    if (const auto n = root.find("$schema")) n->as_string();  // for editors only
    if (const auto n = root.find("name")) config.name = n->as_file_stem();
    if (const auto n = root.find("description")) config.description = n->as_string();
    if (const auto n = root.find("operation")) config.operation = config_detail::parse_operation_node(*n);
    config.kernels = parse_kernels(require("kernels"));
    config.shapes = parse_shapes(require("shapes"), config.operation, config.notes);
    if (const auto n = root.find("dtypes")) config.dtypes = parse_dtypes(*n);
    if (const auto n = root.find("seed")) config.seed = n->as_uint64("seed");

    RunSettings& s = config.settings;
    if (const auto n = root.find("warmup")) s.warmup = int(n->as_int("warmup", 0, kIntMax));
    if (const auto n = root.find("repeats")) s.repeats = int(n->as_int("repeats", 1, kIntMax));
    if (const auto n = root.find("time_budget_s")) s.time_budget_s = n->as_positive_number("time_budget_s");
    if (const auto n = root.find("noise_target")) {
        // 0 turns the stopping rule off (a fixed count of repeats); 1 or more would accept any median.
        if (!n->value().is_number()) n->fail_type("number");
        const double v = n->value().get<double>();
        if (!(v >= 0 && v < 1)) n->fail("noise_target must be >= 0 and < 1, got " + n->value().dump());
        s.noise_target = v;
    }
    if (const auto n = root.find("verify")) s.verify = n->as_bool();
    if (const auto n = root.find("tolerance")) s.tolerance = n->as_positive_number("tolerance");
    if (const auto n = root.find("timeout_s")) s.timeout_s = n->as_positive_number("timeout_s");
    if (const auto n = root.find("warm_cache")) s.warm_cache = n->as_bool();
    if (const auto n = root.find("device")) s.device = int(n->as_int("device", 0, kIntMax));
    if (const auto n = root.find("timer")) {
        const auto timer = parse_timer_choice(n->as_string());
        if (!timer) n->fail("timer must be auto, cupti or events, got " + n->value().dump());
        s.timer = *timer;
    }

    if (const auto n = root.find("baseline")) config.baseline = parse_baseline(*n);
    if (const auto n = root.find("output")) config.output = parse_output(*n);
    return config;
}

}  // namespace kreg
