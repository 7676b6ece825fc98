#include "tune_command.hpp"

#include "report/atomic_file.hpp"
#include "tune/tune.hpp"

#include <cxxopts.hpp>

#include <filesystem>
#include <iostream>

namespace kreg::app {

int run_tune_command(int argc, char** argv) {
    cxxopts::Options options("runner tune", "Build a dispatch table from verified reports (docs/DISPATCH.md).");
    options.set_width(100);
    options.custom_help("REPORT... --out table.json [OPTION...]");
    options.positional_help("");
    // clang-format off
    options.add_options()
        ("h,help", "Show this help")
        ("out", "Write the table to FILE", cxxopts::value<std::string>(), "FILE")
        ("force", "Overwrite an existing --out file")
        ("k,kernels", "Only these kernels (names or globs, comma-separated) may be chosen: those the dispatch plugin contains (default: every kernel)", cxxopts::value<std::vector<std::string>>(), "KERNEL")
        ("reports", "", cxxopts::value<std::vector<std::string>>());
    // clang-format on
    options.parse_positional({"reports"});
    std::vector<std::string> paths;
    tune::TuneRequest request;
    std::string out;
    try {
        const auto r = options.parse(argc, argv);
        if (r.count("help")) {
            std::cout << options.help()
                      << "\nExit status: 0 the table was written; 2 bad command line, or a report "
                         "that is not verified, complete, of this kreg version and of one build.\n";
            return 0;
        }
        if (r.count("reports")) paths = r["reports"].as<std::vector<std::string>>();
        if (paths.empty()) throw std::invalid_argument("expected at least one report");
        if (!r.count("out") || r["out"].as<std::string>().empty())
            throw std::invalid_argument("--out FILE is required");
        out = r["out"].as<std::string>();
        if (r.count("kernels")) request.kernel_patterns = r["kernels"].as<std::vector<std::string>>();
        if (!r.count("force") && std::filesystem::exists(out))
            throw std::invalid_argument("--out: " + out + " exists (use --force to overwrite it)");
    } catch (const std::exception& e) {
        std::cerr << "runner tune: " << e.what() << "\nTry 'runner tune --help'.\n";
        return 2;
    }
    request.kreg_version = KREG_VERSION;
    request.command = "runner tune";
    for (const std::string& path : paths) request.command += " " + path;
    for (const std::string& pattern : request.kernel_patterns) request.command += " --kernels " + pattern;
    request.command += " --out " + out;
    nlohmann::json table;
    try {
        for (const std::string& path : paths) request.reports.push_back(tune::read_tune_report(path, KREG_VERSION));
        table = tune::build_dispatch_table(request);
    } catch (const tune::TuneError& e) {
        std::cerr << "runner tune: refused: " << e.what() << "\n";
        return 2;
    }
    try {
        write_file_atomically(out, table.dump(2) + "\n");
    } catch (const std::exception& e) {
        std::cerr << "runner tune: cannot write " << out << ": " << e.what() << "\n";
        return 3;
    }
    for (const auto& entry : table["tables"])
        std::cout << entry["device"].get<std::string>() << " " << entry["dtype"].get<std::string>() << ": "
                  << entry["classes"]["measured"].size() << " measured shapes, " << entry["rules"].size()
                  << " rules, fallback " << entry["fallback"].get<std::string>() << tune::leave_one_out_text(entry)
                  << "\n";
    std::cout << "wrote " << out << "\n";
    return 0;
}

}  // namespace kreg::app
