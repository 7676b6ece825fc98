// runner compare end to end: the real binary on small hand-made reports (tests/data/reports/compare_*),
// its exit status (0 no regression, 1 regression, 2 bad input) and its machine-readable output; and its
// noise model on real CPU sweeps, run twice under load.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "run_command.hpp"

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

// One core kept busy by a spinning thread of this test, as a shared machine's other work would; it always
// stops, when the test is done with it or after a bound, whichever comes first.
class BusyCore {
public:
    BusyCore()
        : thread_([this] {
              const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(300);
              volatile unsigned long spins = 0;
              while (!stop_.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < bound) ++spins;
          }) {}
    ~BusyCore() {
        stop_ = true;
        thread_.join();
    }
    BusyCore(const BusyCore&) = delete;
    BusyCore& operator=(const BusyCore&) = delete;

private:
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

// One honest GEMM plugin between two in-tree controls: the plugins run in --plugin order, so the controls'
// rows come before and after the plugin's. The sizes keep every call short (32^3 to 96^3: 20 us to about a
// millisecond): a call shorter than the scheduler's slice often runs without being preempted even
// on a loaded machine, so each row's fastest call is the code's, which the model judges.
std::string gemm_sweep(const std::string& plugin, const std::string& json) {
    return kRunner + " --no-default-plugins --plugin " + std::string(KREG_PLUGIN_DIR) + "/cpu_naive.so --plugin " +
           std::string(KREG_FIXTURE_DIR) + "/" + plugin + ".so --plugin " + std::string(KREG_PLUGIN_DIR) +
           "/cpu_blocked.so -k cpu_naive,fixture_honest_gemm,cpu_blocked --sizes 32,48,64,96 --warmup 1"
           " --time-budget 0.2 --json " +
           json;
}

std::vector<nlohmann::json> rows_of(const nlohmann::json& comparison, const std::string& kernel) {
    std::vector<nlohmann::json> out;
    for (const auto& row : comparison["rows"])
        if (row["kernel"] == kernel) out.push_back(row);
    return out;
}

std::string join_runs(const std::string& side, int first, int last) {
    std::string out;
    for (int round = first; round <= last; ++round)
        out += (out.empty() ? "" : ",") + side + std::to_string(round) + ".json";
    return out;
}

// The gate: two runs of one binary under a background load compare `same` by the model itself (not
// by the unchanged-plugin exemption: the plugin is not a control and its rows are judged), and a build doing
// 30 % more work is slower, a regression, at every size. Five rounds of A (the binary), B (the same binary)
// and C (the slower build), interleaved A B C A B C ..., all beside a busy core and whatever else the machine
// runs: drift over the test's minute hits the three alike, a row's value on a side is the median of its five
// runs' fastest calls, and its floor is 3 x its own spread over the runs. Measured on the shared 2-core VM at
// load average 13 to 25 (docs/results/compare-noise.md).
//
// It judges speed end to end, so it is not part of the default suite (the project's rule: no timing assertion
// in a test the README's command runs): in a clean-clone CI run on the 2-core VM it failed both halves once
// (an unchanged 32^3 row read 0.82, the slower build 1.08 at 32^3). Run it on purpose, on the machine whose
// noise is in question: KREG_TIMING_TESTS=1 ctest -R CompareNoiseModel. The model's rules are proved without
// timing by the unit tests on synthetic drift (tests/unit/compare_test.cpp).
TEST(CompareNoiseModel, AnUnchangedPluginUnderLoadIsSameAndAThirtyPercentSlowerBuildIsSlowerAtEverySize) {
    const char* wanted = std::getenv("KREG_TIMING_TESTS");
    if (wanted == nullptr || std::string(wanted) != "1")
        GTEST_SKIP() << "an end-to-end timing judgement, run only with KREG_TIMING_TESTS=1 (see the comment above)";
    const auto dir = fresh_dir("compare-noise");
    constexpr int kRounds = 5;
    {
        const BusyCore load;
        for (int round = 1; round <= kRounds; ++round) {
            for (const auto& [side, plugin] : {std::pair<std::string, std::string>{"a", "fixture_honest_gemm"},
                                               {"b", "fixture_honest_gemm"},
                                               {"c", "fixture_honest_gemm_slower"}}) {
                const auto sweep = run_command(gemm_sweep(plugin, side + std::to_string(round) + ".json"), dir, dir);
                ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
            }
        }
    }
    const auto compare_with = [&](const std::string& side, const std::string& json) {
        return run_command(kRunner + " compare a1.json " + side + "1.json --also-a " + join_runs("a", 2, kRounds) +
                               " --also-b " + join_runs(side, 2, kRounds) + " --control cpu_naive,cpu_blocked --json " +
                               json,
                           dir, dir);
    };
    const auto same = compare_with("b", "ab.json");
    EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
    const auto ab = nlohmann::json::parse(test::slurp(dir / "ab.json"));
    EXPECT_EQ(ab["noise_model"]["drift_corrected"], true) << ab["noise_model"].dump();
    EXPECT_EQ(ab["noise_model"]["control_rows"], 8);
    EXPECT_EQ(ab["noise_model"]["statistic"], "min");
    EXPECT_EQ(ab["runs_a"], kRounds);
    EXPECT_EQ(ab["runs_b"], kRounds);
    const auto unchanged = rows_of(ab, "fixture_honest_gemm");
    ASSERT_EQ(unchanged.size(), 4u);
    for (const auto& row : unchanged) {
        EXPECT_EQ(row["verdict"], "same") << row.dump() << "\n" << same.out;  // the model's verdict
        EXPECT_EQ(row["plugin_unchanged"], true) << row.dump();
        EXPECT_EQ(row["control"], false) << row.dump();
        EXPECT_FALSE(row["between_rounds"].is_null()) << row.dump();  // five runs a side: its own noise is known
    }

    const auto regressed = compare_with("c", "ac.json");
    ASSERT_NE(regressed.exit_code, 2) << regressed.out << regressed.err;
    const auto ac = nlohmann::json::parse(test::slurp(dir / "ac.json"));
    const auto rebuilt = rows_of(ac, "fixture_honest_gemm");
    ASSERT_EQ(rebuilt.size(), 4u);
    for (const auto& row : rebuilt) {
        EXPECT_EQ(row["plugin_unchanged"], false) << row.dump();  // another sha256
        EXPECT_NE(row["verdict"], "faster") << row.dump() << "\n" << regressed.out;
    }
    for (const auto& row : ac["rows"])
        if (row["kernel"] != "fixture_honest_gemm") EXPECT_EQ(row["regression"], false) << row.dump();
    // The one case where this machine gives no evidence: the controls themselves (not the fixture's rows)
    // scattered so far between A's and C's runs that 3 sigma of them alone is within 5 points of the change to
    // be found (seen in 2 of 30 stored runs here, when the machine's clocks moved between runs: 3 sigma 29 %
    // and 34 %; the other 28 had at most 23 % and found every size). The unchanged half above holds
    // regardless; the unit tests (Rounds.*) and docs/results/compare-noise.md carry the rule's other evidence.
    const double controls_floor = std::expm1(3.0 * ac["noise_model"]["between_run_sigma"].get<double>());
    if (controls_floor >= 0.25)
        GTEST_SKIP() << "the controls' own between-run noise (3 sigma " << controls_floor * 100
                     << " %) leaves no room to resolve a 30 % change in these runs:\n"
                     << regressed.out;
    EXPECT_EQ(regressed.exit_code, 1) << regressed.out << regressed.err;
    for (const auto& row : rebuilt) {
        EXPECT_EQ(row["verdict"], "slower") << row.dump() << "\n" << regressed.out;
        EXPECT_EQ(row["regression"], true) << row.dump();
    }
    EXPECT_EQ(ac["summary"]["regressions"], 4) << regressed.out;  // the controls are not
}

}  // namespace
}  // namespace kreg
