// runner compare end to end: the real binary on small hand-made reports (tests/data/reports/compare_*),
// its exit status (0 no regression, 1 regression, 2 bad input) and its machine-readable output.
#include "run_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace kreg {
namespace {

using test::fresh_dir;
using test::run_command;

const std::string kRunner = KREG_RUNNER;
std::string data(const std::string& name) { return std::string(KREG_TEST_DATA_DIR) + "/reports/" + name; }
std::string compare(const std::string& a, const std::string& b, const std::string& options = "") {
    return kRunner + " compare " + data(a) + " " + data(b) + (options.empty() ? "" : " " + options);
}

TEST(Compare, ARerunWithinItsNoiseIsSameAndExitsZero) {
    const auto dir = fresh_dir("compare-rerun");
    const auto r =
        run_command(compare("compare_a.json", "compare_rerun.json", "--json out.json --csv out.csv"), dir, dir);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto doc = nlohmann::json::parse(test::slurp(dir / "out.json"));
    ASSERT_EQ(doc["rows"].size(), 4u);
    for (const auto& row : doc["rows"]) EXPECT_EQ(row["verdict"], "same") << row.dump();
    EXPECT_EQ(doc["summary"]["regressions"], 0);
    EXPECT_NE(r.out.find("4 row(s): 4 same, 0 regression(s)"), std::string::npos) << r.out;
    const std::string csv = test::slurp(dir / "out.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5) << csv;  // header and four rows
    // A report against itself: same, whatever the threshold.
    EXPECT_EQ(run_command(compare("compare_a.json", "compare_a.json", "--threshold 0%"), dir, dir).exit_code, 0);
}

TEST(Compare, AThreePercentSlowdownIsARegressionAtTwoPercentAndNotAtFive) {
    const auto dir = fresh_dir("compare-3pct");
    const auto r =
        run_command(compare("compare_a.json", "compare_3pct.json", "--threshold 2% --json out.json"), dir, dir);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("2 regression(s)"), std::string::npos) << r.err;
    const auto doc = nlohmann::json::parse(test::slurp(dir / "out.json"));
    for (const auto& row : doc["rows"]) {
        EXPECT_EQ(row["verdict"], row["kernel"] == "cpu_blocked" ? "slower" : "same") << row.dump();
        EXPECT_EQ(row["regression"], row["kernel"] == "cpu_blocked") << row.dump();
    }
    const auto at_five = run_command(compare("compare_a.json", "compare_3pct.json"), dir, dir);
    EXPECT_EQ(at_five.exit_code, 0) << at_five.out;
    // The other way round it is faster, which is no regression.
    EXPECT_EQ(run_command(compare("compare_3pct.json", "compare_a.json", "--threshold 2"), dir, dir).exit_code, 0);
}

TEST(Compare, ARowThatWasOkAndNoLongerIsIsARegression) {
    const auto dir = fresh_dir("compare-broken");
    const auto r = run_command(compare("compare_a.json", "compare_broken.json"), dir, dir);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("status_changed !"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ok -> crashed: worker killed by SIGSEGV"), std::string::npos) << r.out;
    // Fixed again: a status change, not a regression.
    EXPECT_EQ(run_command(compare("compare_broken.json", "compare_a.json"), dir, dir).exit_code, 0);
}

TEST(Compare, BadInputExitsWithTwoNamingTheFileAndWhatIsWrong) {
    const auto dir = fresh_dir("compare-bad");
    const auto bad = run_command(compare("compare_a.json", "compare_bad_sample.json"), dir, dir);
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(
        bad.err.find(data("compare_bad_sample.json") + ": /records/2/samples_ms/4: expected a number, got string"),
        std::string::npos)
        << bad.err;
    const auto missing = run_command(kRunner + " compare nowhere.json " + data("compare_a.json"), dir, dir);
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("nowhere.json: cannot open"), std::string::npos) << missing.err;
    std::ofstream(dir / "broken.json") << "{\"records\": [";
    const auto syntax = run_command(kRunner + " compare broken.json " + data("compare_a.json"), dir, dir);
    EXPECT_EQ(syntax.exit_code, 2);
    EXPECT_NE(syntax.err.find("broken.json: invalid JSON at line 1"), std::string::npos) << syntax.err;
    EXPECT_EQ(run_command(kRunner + " compare " + data("compare_a.json"), dir, dir).exit_code, 2);  // one report only
    const auto threshold = run_command(compare("compare_a.json", "compare_a.json", "--threshold lots"), dir, dir);
    EXPECT_EQ(threshold.exit_code, 2);
    EXPECT_NE(threshold.err.find("--threshold"), std::string::npos) << threshold.err;
}

TEST(Compare, AnExistingOutputIsOverwrittenOnlyWithForce) {
    const auto dir = fresh_dir("compare-force");
    std::ofstream(dir / "out.json") << "keep me";
    const auto refused = run_command(compare("compare_a.json", "compare_rerun.json", "--json out.json"), dir, dir);
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("out.json exists (use --force"), std::string::npos) << refused.err;
    EXPECT_EQ(test::slurp(dir / "out.json"), "keep me");
    const auto forced =
        run_command(compare("compare_a.json", "compare_rerun.json", "--json out.json --force"), dir, dir);
    EXPECT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_EQ(nlohmann::json::parse(test::slurp(dir / "out.json"))["summary"]["same"], 4);
}

}  // namespace
}  // namespace kreg
