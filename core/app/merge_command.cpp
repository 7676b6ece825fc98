// `runner merge`: K shards of a sweep (their reports) or of a grading run (their folders) into one report
// or gradebook. The checks and the writing are kreg_merge's; this file reads the command line, decides
// which kind of merge it is, and says what was refused, with the commands that re-run missing shards.
#include "merge_command.hpp"

#include "merge/gradebook_shard.hpp"
#include "merge/sweep_merge.hpp"

#include <cxxopts.hpp>

#include <filesystem>
#include <iostream>

namespace kreg::app {
namespace fs = std::filesystem;

namespace {
const char* const kMergeHelp =
    "\nREPORT: each shard's sweep report (.json or its .journal.jsonl), OUT the merged JSON report (its CSV next to "
    "it\n"
    "with .csv, or --csv); or each grading shard's folder (OUT/shard-I-of-K from runner grade --shard), OUT the\n"
    "folder of the merged gradebook.\n"
    "\nExit status: 0 merged; 2 bad command line, a REPORT unreadable or not a shard, shards that do not belong\n"
    "together (another K, config, plan, rubric or kreg), a shard given twice, a job or student in two shards;\n"
    "3 a shard missing or incomplete (the command that re-runs it is printed), or OUT exists (without --force)\n"
    "or cannot be written. 2 wins over 3.\n";

// Prints every problem; 2 when any is a mismatch, else 3.
int refuse(const std::vector<MergeProblem>& problems) {
    bool mismatch = false;
    for (const MergeProblem& p : problems) {
        std::cerr << "runner merge: " << p.message << "\n";
        if (!p.rerun.empty()) std::cerr << "  re-run it with: " << p.rerun << "\n";
        mismatch = mismatch || p.kind == MergeProblem::Kind::mismatch;
    }
    std::cerr << "runner merge: nothing written\n";
    return mismatch ? 2 : 3;
}
}  // namespace

int run_merge_command(int argc, char** argv) {
    cxxopts::Options options("runner merge",
                             "Put the K shards of a sweep (runner --shard I/K) or of a grading run "
                             "(runner grade --shard I/K) back together.");
    options.set_width(100);
    options.custom_help("--expect K [--force] [--csv FILE] OUT REPORT...");
    options.positional_help("");
    // clang-format off
    options.add_options()
        ("h,help", "Show this help")
        ("expect", "How many shards the run was cut into (every one of 1..K must be given, once)", cxxopts::value<int>())
        ("force", "Overwrite OUT (and its CSV and journal, or the gradebook in the folder OUT) if it exists")
        ("csv", "Sweeps: write the merged CSV here (default: OUT with .csv)", cxxopts::value<std::string>())
        ("paths", "OUT, then the shards", cxxopts::value<std::vector<std::string>>());
    // clang-format on
    options.parse_positional({"paths"});
    cxxopts::ParseResult r;
    try {
        r = options.parse(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "runner merge: " << e.what() << "\nTry 'runner merge --help'.\n";
        return 2;
    }
    if (r.count("help")) {
        std::cout << options.help() << kMergeHelp;
        return 0;
    }
    if (!r.count("expect") || r["expect"].as<int>() < 1) {
        std::cerr << "runner merge: needs --expect K (the number of shards, at least 1)\nTry 'runner merge --help'.\n";
        return 2;
    }
    const int expect = r["expect"].as<int>();
    const auto paths = r.count("paths") ? r["paths"].as<std::vector<std::string>>() : std::vector<std::string>{};
    if (paths.size() < 2) {
        std::cerr << "runner merge: needs OUT and at least one shard (runner merge --expect K OUT REPORT...)\n";
        return 2;
    }
    const fs::path out = paths.front();
    const std::vector<fs::path> shards(paths.begin() + 1, paths.end());
    const bool force = r.count("force") > 0;

    size_t gradebooks = 0;
    for (const auto& s : shards) gradebooks += is_gradebook_shard_dir(s) ? 1 : 0;
    if (gradebooks > 0 && gradebooks < shards.size()) {
        for (const auto& s : shards)
            if (!is_gradebook_shard_dir(s))
                std::cerr << "runner merge: " << s.string()
                          << ": not a grading shard's folder (no gradebook-shard.json), but "
                          << "other shards given are: sweep reports and gradebooks do not merge together\n";
        return 2;
    }
    if (gradebooks > 0) {
        if (r.count("csv")) {
            std::cerr << "runner merge: --csv is for sweeps; a gradebook's CSV is OUT/gradebook.csv\n";
            return 2;
        }
        const GradebookMerge merge = merge_gradebook_shards(expect, shards);
        if (!merge.problems.empty()) return refuse(merge.problems);
        try {
            write_gradebook_merge(merge, out, force);
        } catch (const std::invalid_argument& e) {  // the rubric files no longer hold the shards' rubric
            std::cerr << "runner merge: " << e.what() << "\n";
            return 2;
        } catch (const std::exception& e) {
            std::cerr << "runner merge: cannot write the gradebook: " << e.what() << "\n";
            return 3;
        }
        std::cout << "merged " << expect << " grading shard(s), " << merge.student_files.size()
                  << " student(s): " << (out / "gradebook.csv").string() << "\n";
        return 0;
    }

    const fs::path csv =
        r.count("csv") ? fs::path(r["csv"].as<std::string>()) : fs::path(out).replace_extension(".csv");
    if (csv == out) {
        std::cerr << "runner merge: OUT " << out.string() << " and its CSV would be one file; name OUT *.json\n";
        return 2;
    }
    const SweepMerge merge = merge_sweep_shards(expect, shards);
    if (!merge.problems.empty()) return refuse(merge.problems);
    try {
        write_sweep_merge(merge, out, csv, force);
    } catch (const std::exception& e) {
        std::cerr << "runner merge: cannot write the merged report: " << e.what() << "\n";
        return 3;
    }
    std::cout << "merged " << expect << " shard(s), " << merge.records.size() << " row(s): " << out.string() << "  "
              << csv.string() << "\n";
    return 0;
}

}  // namespace kreg::app
