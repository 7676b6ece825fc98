// Sweep configs: the JSON file a user hands the runner (`runner --config sweeps/a100.json`), parsed once
// into typed structs and validated. Every error is a ConfigError naming the file and the JSON pointer of
// the offending value, so the runner can print it and exit non-zero. The format is documented in
// configs/README.md and, for editors, in configs/schema/sweep.schema.json.
#pragma once

#include "common/baseline.hpp"
#include "common/glob.hpp"  // glob_match: kernel lists are globs
#include "common/job.hpp"
#include "common/operation_table.hpp"
#include "common/types.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

// Sources that are not a file, for SweepConfig::source and ConfigError::file().
inline constexpr std::string_view kCommandLineSource = "<command line>";
inline constexpr std::string_view kBuiltinDefaultSource = "<built-in default>";

// A sweep may expand to at most this many shapes (per shape spec, per range and in total).
inline constexpr std::size_t kMaxSweepShapes = 100000;
// Largest accepted matrix dimension (cuBLAS takes dimensions as int).
inline constexpr int64_t kMaxDimension = kMaxShapeDimension;
// Largest per-call tile edge a sweep may ask for (common/operation_table.hpp): anything larger is a typo,
// refused where it is written rather than skipped on every row.
inline constexpr int64_t kMaxBlockEdge = kMaxTileEdge;

// what() == file + ": " + json_path + ": " + message, the json_path part left out when it is empty.
class ConfigError : public std::runtime_error {
public:
    ConfigError(std::string file, std::string json_path, std::string message);
    const std::string& file() const { return file_; }
    const std::string& json_path() const { return json_path_; }  // e.g. "/shapes/2/k" or "--repeat"
    const std::string& message() const { return message_; }

private:
    std::string file_, json_path_, message_;
};

struct OutputPaths {
    std::optional<std::string> json;
    std::optional<std::string> csv;
};

// RunSettings as a sweep starts from: the runner's defaults plus the stopping rule's noise target
// ("noise_target", kDefaultNoiseTarget), so sweeps sample until their medians are known.
inline constexpr double kDefaultNoiseTarget = 0.005;
inline RunSettings default_sweep_settings() {
    RunSettings s;
    s.noise_target = kDefaultNoiseTarget;
    return s;
}

struct SweepConfig {
    std::string source{kBuiltinDefaultSource};  // file path, "<command line>" or "<built-in default>"
    std::string name = "default";               // "name" key; default: the file's stem
    std::string description;
    Operation operation = Operation::gemm;  // "operation" key: what every kernel of the sweep computes
    std::vector<std::string> kernels;       // names or globs as written (checked by resolve_kernel_patterns)
    std::vector<Shape> shapes;              // expanded, de-duplicated, in order of first occurrence
    std::vector<DType> dtypes{DType::fp32};
    uint64_t seed = 42;
    RunSettings settings = default_sweep_settings();
    Baseline baseline;  // kernel(s) the speed-ups are relative to: one for all dtypes, or one per dtype
    OutputPaths output;
    // What the parser accepted but a person should hear of (a shape given twice, with both places), whole
    // lines for the runner to print as notes. Not part of the config: to_json leaves them out.
    std::vector<std::string> notes;

    // The config in the file format with every default filled in, shapes listed one by one, plus
    // "source". Without "source" it parses back to an equal config. For the report's meta.
    nlohmann::json to_json() const;
};

// The top-level keys parse_sweep_config accepts, in the order the README documents them. The JSON Schema
// lists the same keys (a test keeps them in step).
const std::vector<std::string>& sweep_config_keys();

// Validates doc and builds the config; source names the file in errors and in SweepConfig::source.
SweepConfig parse_sweep_config(const nlohmann::json& doc, const std::string& source);

// Reads, parses and validates a file. An unreadable file, a JSON syntax error (with line and column) or a
// key given twice in one object are ConfigErrors too.
SweepConfig load_sweep_config(const std::filesystem::path& path);

// Where `--config arg` (or `--rubric arg`: kind "rubric") points: arg as given (relative to the working
// directory), then configs_dir / arg. When neither is a file, throws a ConfigError "no such <kind> file"
// with a did-you-mean over the files of the folders searched, and every place tried.
std::filesystem::path resolve_config_path(const std::string& arg, const std::filesystem::path& configs_dir,
                                          const std::string& kind = "config");

// The available names (registry order) that some pattern matches, each once. A pattern that matches
// nothing is a ConfigError at "/kernels/<i>", or at "--kernels" when source is kCommandLineSource, with a
// did-you-mean (or the list of available kernels when nothing is close). When unmatched_globs is given, a
// glob (not a plain name) that matches nothing is appended there instead — so that one config can name
// "cuda_*" and still run where no CUDA plugin was built — unless nothing at all is selected.
std::vector<std::string> resolve_kernel_patterns(const std::vector<std::string>& patterns,
                                                 const std::vector<std::string>& available, const std::string& source,
                                                 std::vector<std::string>* unmatched_globs = nullptr);

// Values given on the command line; each one set replaces the config's value.
struct CliOverrides {
    std::optional<std::vector<std::string>> kernels;
    std::optional<Operation> operation;  // --operation: replaces the config's (its shapes then need --sizes/--shape)
    // --sizes (squares) and --shape (MxNxK for gemm, MxN for transposes) as typed: what they mean depends on
    // the operation, which a config may only name after the command line is parsed. Before `shapes`.
    std::optional<std::vector<int64_t>> sizes;
    std::optional<std::vector<std::string>> shape_texts;
    std::optional<std::vector<Shape>> shapes;    // shapes built in code, taken as they are (after sizes/shape_texts)
    std::optional<std::vector<int64_t>> blocks;  // --block: the per-call tile edges, crossed with the shapes
    std::optional<std::vector<DType>> dtypes;
    std::optional<int> warmup, repeats;
    std::optional<double> time_budget_s, timeout_s, tolerance;
    std::optional<bool> verify, warm_cache;
    std::optional<TimerChoice> timer;
    std::optional<uint64_t> seed;
    std::optional<int> device;
    std::optional<Baseline> baseline;  // --baseline NAME or DTYPE=NAME,...
    std::optional<std::string> json, csv;
};

// Applies overrides after validating them as the parser would. Errors are ConfigErrors with file
// "<command line>" and the option as json_path: --kernels, --shapes, --dtypes, --warmup, --repeat,
// --time-budget, --timeout, --tolerance, --seed, --device, --baseline, --json, --csv, --operation,
// --shape, --block.
// Shapes follow the sweep's operation (--operation, else the config's) and its row of common/operations.def:
// a size S gives every size key S (SxSxS for gemm, SxS for transposes); --shape lists the size keys joined by
// 'x' (MxNxK for gemm, MxN for transposes; another count is an error at --shape). An operation with a per-call
// parameter (the tile edge `block`) crosses every shape with every --block (without --block: the config's
// values, if it is a config of that operation; without --sizes/--shape: its shapes). --block with another
// operation is an error at --block. --operation that changes a config file's operation needs --sizes or --shape;
// the quick-run config (source "<command line>") gets 512 squares instead. --json without --csv drops the
// config's output.csv: the CSV goes beside the JSON report the command line named.
void apply_overrides(SweepConfig& config, const CliOverrides& overrides);

// "512,1024" -> {512x512x512, 1024x1024x1024}. std::invalid_argument with a message saying what is wrong.
std::vector<Shape> parse_sizes_option(const std::string& text);
// --block's "1,2,16" -> {1, 2, 16}. std::invalid_argument with a message saying what is wrong.
std::vector<int64_t> parse_blocks_option(const std::string& text);
// --shape's "MxNxK" or "MxN" -> its 3 or 2 dimensions. std::invalid_argument on anything else.
std::vector<int64_t> parse_dims_option(const std::string& text);
// "1000x3000x257" (or with 'X') -> that shape. std::invalid_argument on anything else.
Shape parse_shape_option(const std::string& text);
// --baseline's text: "NAME" (every dtype) or "fp32=cublas_sgemm,bf16=cublas_bf16" (one per dtype). A
// ConfigError at "--baseline" for an empty name, an unknown dtype (with a did-you-mean) or a dtype given twice.
Baseline parse_baseline_option(const std::string& text);

}  // namespace kreg
