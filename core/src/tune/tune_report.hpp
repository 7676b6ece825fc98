// A report as `runner tune` needs it: its verified GEMM rows, each with the device it ran on and the sha256 of the
// plugin build that ran it. Reading refuses, with the file and the reason, everything a dispatch table must not
// be built from: a file that is not a kreg report, a synthetic or interrupted sweep, a report of another kreg
// version, an ok row that was not verified, a row whose plugin build the report does not fingerprint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kreg::tune {

// A report tune refuses; what() names the file and the reason.
struct TuneError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One ok, verified GEMM row.
struct MeasuredRow {
    std::string kernel;
    std::string device;  // meta.gpu.facts.name for CUDA rows, "cpu" for CPU rows
    std::string dtype;
    int64_t m = 0, n = 0, k = 0;
    double median_ms = 0;
    std::size_t index = 0;  // position in the report's records
};

struct TuneReport {
    std::string path;  // as named on the command line
    std::string sha256;
    std::string kreg_version;
    std::map<std::string, std::string> reference_by_dtype;  // the report's baseline per dtype, where it has one
    std::vector<MeasuredRow> rows;
    std::map<std::string, std::string> kernel_sha256;  // every kernel with a row -> its plugin's sha256
    // Kernels this report saw fail (wrong_result, crashed, timeout, failed) per "device/dtype": never chosen
    // there, since a class reaches shapes that were not measured.
    std::map<std::string, std::set<std::string>> failed_kernels;
    // Kernels whose rows name a variant (extra.variant): dispatch kernels, never chosen (a table routing to a
    // dispatcher would route to itself).
    std::set<std::string> dispatching_kernels;
};

// Reads and checks one report. expected_kreg_version: the running runner's version; a report of another one is
// refused (its kernels' rows may not mean what this runner's do).
TuneReport read_tune_report(const std::filesystem::path& path, const std::string& expected_kreg_version);

}  // namespace kreg::tune
