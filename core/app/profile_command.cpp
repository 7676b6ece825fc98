// `runner --profile`: runs each selected kernel once under Nsight Compute (ncu) and shows its shared-memory
// bank conflicts in a table.
//
// The run itself is a ProfileRun (run/profile_run.hpp): the parent lists the registry with
// `runner --list --format json`, and for every kernel (and every block of a block transpose) starts
//     ncu --clock-control none --metrics <shared-memory metrics> --csv --log-file F runner __profile_driver ...
// where the driver (cuda/profile_driver.cpp) loads the one plugin, fills the inputs with cudaMemcpy (no kernel
// of the harness runs, so everything ncu reports is the plugin's), calls the kernel once and exits. This
// file reads the options into a ProfileRequest.
#include "profile_command.hpp"

#include "exit_status.hpp"
#include "run/profile_run.hpp"

#include <cxxopts.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace kreg::app {
namespace fs = std::filesystem;

namespace {

const char* const kHelpTail =
    "\nEach selected CUDA kernel runs once in `runner __profile_driver` under ncu (Nsight Compute, from the\n"
    "PATH or /usr/local/cuda/bin; --ncu names another), at each --shape of its operation's syntax; an operation\n"
    "with a tile edge among its keys once per block of --blocks (at each shape the block divides, else at the\n"
    "largest square multiple of the block not above --block-target). Options of sweeps are ignored.\n"
    "`runner --profile --isolation none ...` is the other mode: a sweep that runs each kernel once inside an\n"
    "NVTX range named after it, for running under ncu or nsys yourself.\n"
    "The table shows, per variant, shared-memory load and store requests\n"
    "(warp instructions), wavefronts, bank conflicts (extra wavefronts) and wavefronts per request (1.0:\n"
    "conflict-free; n: an n-way conflict on average), and the kernel's duration (clocks not locked).\n"
    "\nExit status: 0 every variant profiled; 1 some variant failed (its ncu log is named); 2 bad command\n"
    "line; 3 ncu not found, no kernel selected, or every selected variant skipped (e.g. no GPU).\n";

// "1-20", "16", "4,8,16", "1-4,16".
std::vector<int64_t> parse_blocks(const std::string& text) {
    std::vector<int64_t> out;
    std::stringstream parts(text);
    for (std::string part; std::getline(parts, part, ',');) {
        const size_t dash = part.find('-');
        try {
            size_t used = 0;
            const int64_t lo = std::stoll(part.substr(0, dash), &used);
            const int64_t hi = dash == std::string::npos ? lo : std::stoll(part.substr(dash + 1));
            if (lo < 1 || hi < lo || hi > 1024) throw std::invalid_argument("range");
            for (int64_t b = lo; b <= hi; ++b) out.push_back(b);
        } catch (const std::exception&) {
            throw std::invalid_argument("--blocks: expected blocks from 1 to 1024 such as 1-20 or 4,8,16, got '" +
                                        text + "'");
        }
    }
    return out;
}

// "N", "MxN" or "MxNxK", each size >= 1.
std::vector<int64_t> parse_sizes(const std::string& text, const char* option) {
    std::vector<int64_t> out;
    std::stringstream parts(text);
    for (std::string part; std::getline(parts, part, 'x');) {
        size_t used = 0;
        int64_t v = 0;
        try {
            v = std::stoll(part, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != part.size() || v < 1 || out.size() == 3)
            throw std::invalid_argument(std::string(option) + ": '" + text +
                                        "' is not N, MxN or MxNxK with sizes >= 1");
        out.push_back(v);
    }
    if (out.empty() || text.back() == 'x')
        throw std::invalid_argument(std::string(option) + ": '" + text + "' is not N, MxN or MxNxK with sizes >= 1");
    return out;
}

}  // namespace

int run_profile_command(int argc, char** argv) {
    cxxopts::Options options("runner --profile", "Shared-memory bank conflicts per kernel variant, measured by ncu.");
    options.set_width(100);
    options.allow_unrecognised_options();
    // clang-format off
    options.add_options()
        ("kernels", "Kernel names or globs, comma-separated", cxxopts::value<std::string>()->default_value("cuda_t*,cuda_copy,cuda_block*"))
        ("shape", profile_shape_help() + "; repeatable", cxxopts::value<std::vector<std::string>>())
        ("blocks", "Blocks of a block transpose: 1-20, 16, 4,8,16", cxxopts::value<std::string>()->default_value("1-20"))
        ("block-target", "Without an MxN --shape, block transposes run at the largest multiple of the block <= this, square", cxxopts::value<int64_t>()->default_value("4096"))
        ("plugin-dir", "Also load every *.so in this folder; repeatable", cxxopts::value<std::vector<std::string>>())
        ("plugin", "Also load this plugin file; repeatable", cxxopts::value<std::vector<std::string>>())
        ("no-default-plugins", "Do not load the runner's own plugin folder or KREG_PLUGIN_PATH")
        ("ncu", "Nsight Compute's ncu (default: from the PATH, else /usr/local/cuda/bin/ncu)", cxxopts::value<std::string>()->default_value(""))
        ("logs", "Keep ncu's logs in this folder (default: a temporary folder, removed unless a variant failed)", cxxopts::value<std::string>()->default_value(""))
        ("h,help", "Print this help");
    // clang-format on
    ProfileRequest request;
    try {
        const auto r = options.parse(argc, argv);
        if (r.count("help")) {
            std::cout << options.help() << kHelpTail;
            return 0;
        }
        if (!r.unmatched().empty()) {
            // A sweep's options (--no-calibrate, --json, ...) mean nothing here: say so, do not fail.
            std::cerr << "runner --profile: ignoring options that only sweeps use:";
            for (const std::string& u : r.unmatched()) std::cerr << " " << u;
            std::cerr << "\n";
        }
        std::stringstream g(r["kernels"].as<std::string>());
        for (std::string glob; std::getline(g, glob, ',');)
            if (!glob.empty()) request.globs.push_back(glob);
        if (request.globs.empty()) throw std::invalid_argument("--kernels: no names given");
        if (r.count("shape"))
            for (const std::string& text : r["shape"].as<std::vector<std::string>>()) {
                std::vector<int64_t> sizes = parse_sizes(text, "--shape");
                request.shapes[sizes.size()].push_back(std::move(sizes));
            }
        request.blocks = parse_blocks(r["blocks"].as<std::string>());
        request.block_target = r["block-target"].as<int64_t>();
        if (request.block_target < 1) throw std::invalid_argument("--block-target must be >= 1");
        if (r.count("plugin-dir"))
            for (const std::string& d : r["plugin-dir"].as<std::vector<std::string>>())
                request.plugin_args.insert(request.plugin_args.end(), {"--plugin-dir", d});
        if (r.count("plugin"))
            for (const std::string& p : r["plugin"].as<std::vector<std::string>>())
                request.plugin_args.insert(request.plugin_args.end(), {"--plugin", p});
        if (r.count("no-default-plugins")) request.plugin_args.push_back("--no-default-plugins");
        request.ncu = r["ncu"].as<std::string>();
        request.logs = r["logs"].as<std::string>();
    } catch (const std::exception& e) {
        std::cerr << "runner --profile: " << e.what() << "\nTry 'runner --profile --help'.\n";
        return 2;
    }

    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
        std::cerr << "runner --profile: cannot find this runner's executable: " << ec.message() << "\n";
        return 3;
    }
    try {
        return ProfileRun(std::move(request), self, std::cerr, std::cout).execute();
    } catch (const RunError& e) {
        const std::string message = e.what();
        std::cerr << "runner --profile: " << message << (message.empty() || message.back() != '\n' ? "\n" : "");
        return exit_status(e.kind());
    }
}

}  // namespace kreg::app
