// `runner --profile` as a library object: each selected CUDA kernel, at each shape of its operation (and each
// block of a block transpose), run once under Nsight Compute (ncu) in `runner __profile_driver`, and its shared-memory
// bank conflicts shown in a table. The phases: ncu → the registry, listed by a child runner → the variants → one ncu
// run each → the exit status. The parent never loads a plugin or touches CUDA (as for sweeps).
#pragma once

#include "common/types.hpp"
#include "run/run_error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace kreg {

// What `runner --profile` is asked to do, once its options are parsed.
struct ProfileRequest {
    std::vector<std::string> globs;  // --kernels
    // --shape, by how many sizes it gives: an operation takes those with as many as its size keys
    // (operations.def): N, MxN or MxNxK. An operation
    // none is given for runs at profile_default_sizes.
    std::map<size_t, std::vector<std::vector<int64_t>>> shapes;
    std::vector<int64_t> blocks;           // --blocks
    int64_t block_target = 4096;           // --block-target
    std::vector<std::string> plugin_args;  // --plugin-dir, --plugin, --no-default-plugins for the children
    std::string ncu;                       // --ncu; "" to look for it
    std::string logs;                      // --logs; "" for a temporary folder
};

// One kernel at one shape (and block), or the reason it is not profiled here. shape holds the operation's
// keys (common/operation_table.hpp's shape_of); the others are 0.
struct ProfileVariant {
    std::string kernel, plugin_path;
    Operation operation = Operation::gemm;
    Shape shape;
    std::string skip_reason;
};

// The sizes an operation with this many size keys runs at without a --shape of its own: 2^24 (one key),
// 8192x8192 (two), 2048^3 (three).
std::vector<int64_t> profile_default_sizes(size_t size_keys);

// --shape's help, from the operation table: each syntax with the operations that take it and its default
// ("N for <the operations of one size key> (default 16777216); MxN for ...").
std::string profile_shape_help();

// The table's shape column and the variant's log file name: "2048x2048x2048", "8192x8192/b16", "16777216".
std::string variant_text(const ProfileVariant& v);

// `runner __profile_driver` for v: the plugin, the kernel, the operation and one --KEY VALUE per key of the
// operation's row (--m --n --k for a GEMM, --n for one of a single size key, --m --n --block where a tile edge is a
// key).
std::vector<std::string> profile_driver_args(const ProfileVariant& v);

// ncu's metrics of one variant, summed over its launches.
struct NcuMetrics {
    std::map<std::string, double> sum;
    int launches = 0;
};

// ncu's CSV (one row per launch and metric, after its own ==PROF== lines): sums each metric over launches.
NcuMetrics parse_ncu_csv(const std::string& text);

// The variants `runner --list --format json` gives for the request: its CUDA kernels that match a glob, each
// at every shape of its operation (and every block of a block transpose). Throws on a malformed list.
std::vector<ProfileVariant> profile_variants(const nlohmann::json& list, const ProfileRequest& request);

class ProfileRun {
public:
    ProfileRun(ProfileRequest request, std::filesystem::path runner_exe, std::ostream& log, std::ostream& out);

    // Every phase in order. Returns 0 every variant profiled, 1 some variant failed, 3 nothing profiled.
    // Throws RunError when it cannot start (no ncu, no logs folder, the registry cannot be listed).
    int execute();

    std::filesystem::path find_ncu() const;
    std::filesystem::path logs_dir();
    std::vector<ProfileVariant> variants(const std::filesystem::path& logs) const;
    // One variant under ncu: its row of the table; false when it failed.
    bool profile(const ProfileVariant& v, const std::filesystem::path& ncu, const std::filesystem::path& logs) const;

private:
    ProfileRequest request_;
    std::filesystem::path runner_exe_;
    std::ostream& log_;
    std::ostream& out_;
};

}  // namespace kreg
