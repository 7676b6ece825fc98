#include "compare_command.hpp"

#include "compare/compare_files.hpp"
#include "compare/compare_output.hpp"
#include "config/sweep_config.hpp"
#include "report/atomic_file.hpp"

#include <cxxopts.hpp>

#include <filesystem>
#include <iostream>
#include <optional>

namespace kreg::app {
namespace fs = std::filesystem;

namespace {
const char* const kExitStatusHelp =
    "\nThe noise model: rows whose plugin binary (sha256) and kreg version are the same in both reports are\n"
    "controls (or the kernels --control names). A row's value is its fastest call (--statistic min: load only\n"
    "adds time to a call) or its median. The controls' median B/A is the machine's drift between the runs and\n"
    "their robust spread (1.4826 x MAD) the between-run noise sigma. A row is slower (faster) when its B/A,\n"
    "divided by the drift, is beyond its floor, max(threshold, 3 sigma, its between-run noise), AND a\n"
    "Mann-Whitney U test on the drift-corrected samples gives p < alpha; otherwise it is same.\n"
    "Its between-run noise: with --also-a/--also-b (more runs of each side, best interleaved: A B A B ...)\n"
    "how far each side's second fastest run stands above its fastest (its value is then the fastest of the\n"
    "runs', so a run that load slowed cannot move it; for --statistic median, 3 x the robust sigma of the\n"
    "runs' medians, its value their median); with one run a side, the widest control's deviation and its\n"
    "within-run spread.\n"
    "With fewer than 3 controls drift is not corrected and the default threshold is 20% (15% with controls);\n"
    "rows timed by a GPU's clock in both runs (timer cupti or cuda_event) default to 5%.\n"
    "A row of an unchanged plugin keeps the model's verdict but is never a regression.\n"
    "\nExit status: 0 no regression; 1 a regression: a row slower (as above) whose plugin changed, or a row ok\n"
    "in A and not ok in B (with --fail-on-missing also an ok row of A that B lacks); 2 bad command line or a\n"
    "report that cannot be read (the message names the file and the JSON path).\n";
}  // namespace

int run_compare_command(int argc, char** argv) {
    cxxopts::Options options("runner compare", "Compare two kreg reports row by row, from their raw timing samples.");
    options.set_width(100);
    options.custom_help("A.json B.json [OPTION...]");
    options.positional_help("");
    // clang-format off
    options.add_options()
        ("h,help", "Show this help")
        ("statistic", "A row's value: min (its fastest call, the default: steady under load) or median", cxxopts::value<std::string>()->default_value("min"), "STAT")
        ("threshold", "Smallest change of a row's value that counts, in percent (default: 15% with control rows, 20% without; 5% for rows timed by a GPU's clock)", cxxopts::value<std::string>(), "PCT")
        ("also-a", "Another run of A (the same plugins run again; repeatable or comma-separated): a row's value is the median of the runs' values", cxxopts::value<std::vector<std::string>>(), "FILE")
        ("also-b", "Another run of B, likewise", cxxopts::value<std::vector<std::string>>(), "FILE")
        ("control", "Kernels (names or globs, comma-separated) whose rows measure the machine's drift (default: every row whose plugin is unchanged)", cxxopts::value<std::vector<std::string>>(), "KERNEL")
        ("alpha", "Significance level of the rank test", cxxopts::value<double>()->default_value("0.01"), "P")
        ("json", "Also write the comparison as JSON to FILE", cxxopts::value<std::string>(), "FILE")
        ("csv", "Also write the comparison as CSV to FILE", cxxopts::value<std::string>(), "FILE")
        ("force", "Overwrite an existing --json/--csv file")
        ("fail-on-missing", "An ok row of A that B does not have is a regression too")
        ("reports", "", cxxopts::value<std::vector<std::string>>());
    // clang-format on
    options.parse_positional({"reports"});
    CompareOptions compare;
    std::vector<std::string> reports;
    std::vector<std::string> more_a, more_b;
    std::optional<std::string> json_path, csv_path;
    try {
        const auto r = options.parse(argc, argv);
        if (r.count("help")) {
            std::cout << options.help() << kExitStatusHelp;
            return 0;
        }
        if (r.count("reports")) reports = r["reports"].as<std::vector<std::string>>();
        if (reports.size() != 2)
            throw std::invalid_argument("expected two reports, A.json and B.json, got " +
                                        std::to_string(reports.size()));
        if (r.count("threshold")) compare.threshold = parse_threshold_percent(r["threshold"].as<std::string>());
        if (r.count("control")) {
            compare.controls = r["control"].as<std::vector<std::string>>();
            for (const auto& pattern : compare.controls)
                if (pattern.empty()) throw std::invalid_argument("--control: an empty kernel name");
        }
        if (const std::string statistic = r["statistic"].as<std::string>(); statistic == "median")
            compare.statistic = RowStatistic::median;
        else if (statistic != "min")
            throw std::invalid_argument("--statistic: expected min or median, got '" + statistic + "'");
        compare.alpha = r["alpha"].as<double>();
        if (!(compare.alpha > 0 && compare.alpha < 1))
            throw std::invalid_argument("--alpha: expected a probability between 0 and 1, got " +
                                        std::to_string(compare.alpha));
        compare.fail_on_missing = r.count("fail-on-missing") > 0;
        if (r.count("also-a")) more_a = r["also-a"].as<std::vector<std::string>>();
        if (r.count("also-b")) more_b = r["also-b"].as<std::vector<std::string>>();
        if (r.count("json")) json_path = r["json"].as<std::string>();
        if (r.count("csv")) csv_path = r["csv"].as<std::string>();
        if (json_path && csv_path && fs::path(*json_path).lexically_normal() == fs::path(*csv_path).lexically_normal())
            throw std::invalid_argument("--json and --csv name the same file " + *json_path);
        check_output_path(json_path, r.count("force") > 0, "--json");
        check_output_path(csv_path, r.count("force") > 0, "--csv");
    } catch (const std::exception& e) {
        std::cerr << "runner compare: " << e.what() << "\nTry 'runner compare --help'.\n";
        return 2;
    }

    std::vector<std::string> paths_a{reports[0]}, paths_b{reports[1]};
    paths_a.insert(paths_a.end(), more_a.begin(), more_a.end());
    paths_b.insert(paths_b.end(), more_b.begin(), more_b.end());
    ComparedReports compared;
    try {
        compared = compare_report_files(paths_a, paths_b, compare);
    } catch (const ConfigError& e) {
        std::cerr << "runner compare: bad report: " << e.what() << "\n";
        return 2;
    }
    const ReportFile& a = compared.runs_a[0];
    const ReportFile& b = compared.runs_b[0];
    const Comparison& result = compared.result;
    std::cout << format_comparison_table(a, b, result);
    try {
        if (json_path) write_file_atomically(*json_path, comparison_to_json(a, b, result).dump(2) + "\n");
        if (csv_path) write_file_atomically(*csv_path, comparison_to_csv(result));
    } catch (const std::exception& e) {
        std::cerr << "runner compare: cannot write output: " << e.what() << "\n";
        return 2;
    }
    if (const std::size_t n = result.regressions()) {
        std::cerr << "runner compare: " << n << " regression(s) in " << b.path << " against " << a.path << "\n";
        return 1;
    }
    return 0;
}

}  // namespace kreg::app
