// runner compare's statistics and verdicts: the rank test against known values, and the verdict rules
// (threshold AND significance) on sample sets built to sit on each side of them.
#include "compare/compare.hpp"
#include "compare/compare_output.hpp"
#include "compare/mann_whitney.hpp"
#include "config/sweep_config.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <random>

namespace kreg {
namespace {

const test::ScratchRoot kScratch("kreg_compare_test");

// n samples around center_ms, spread evenly over +-spread (relative): tight when spread is small.
std::vector<double> evenly(double center_ms, double spread, int n) {
    std::vector<double> out;
    for (int i = 0; i < n; ++i) out.push_back(center_ms * (1.0 + spread * (2.0 * i / (n - 1) - 1.0)));
    return out;
}

std::vector<double> scaled(std::vector<double> v, double factor) {
    for (auto& x : v) x *= factor;
    return v;
}

TEST(MannWhitney, MatchesTheExactDistributionOnSmallSets) {
    // Fully separated 3 vs 3: U = 0, exact two-sided p = 2 / C(6,3) = 0.1.
    const RankTest separated = mann_whitney_u({1, 2, 3}, {4, 5, 6});
    EXPECT_TRUE(separated.exact);
    EXPECT_DOUBLE_EQ(separated.u, 0.0);
    EXPECT_NEAR(separated.p_value, 0.1, 1e-12);
    // 10 vs 10 fully separated: p = 2 / C(20,10) = 1.0825e-5.
    const RankTest ten = mann_whitney_u(evenly(1.0, 0.01, 10), evenly(2.0, 0.01, 10));
    EXPECT_NEAR(ten.p_value, 2.0 / 184756.0, 1e-12);
    EXPECT_DOUBLE_EQ(ten.u, 0.0);
    // Interleaved sets: U = n_a*n_b/2 exactly, no evidence at all.
    const RankTest mixed = mann_whitney_u({1, 3, 5, 7}, {2, 4, 6, 8});
    EXPECT_DOUBLE_EQ(mixed.u, 6.0);  // pairs a > b: 3>2, 5>2, 5>4, 7>2, 7>4, 7>6
    EXPECT_GT(mixed.p_value, 0.5);
}

TEST(MannWhitney, TiesUseTheNormalApproximationAndIdenticalSetsGiveOne) {
    const std::vector<double> same = {1.0, 1.0, 1.0, 2.0, 2.0};
    const RankTest t = mann_whitney_u(same, same);
    EXPECT_FALSE(t.exact);
    EXPECT_DOUBLE_EQ(t.p_value, 1.0);
    const RankTest all_equal = mann_whitney_u({3, 3, 3}, {3, 3});
    EXPECT_DOUBLE_EQ(all_equal.p_value, 1.0);
    // Large separated sets with ties: tiny p.
    std::vector<double> a(200, 1.0), b(200, 1.1);
    a[0] = 1.1;
    EXPECT_LT(mann_whitney_u(a, b).p_value, 1e-10);
    EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1.0}).p_value, 1.0);
}

TEST(MannWhitney, MedianOfOddAndEvenCounts) {
    EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2.0);
    EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median_of({}), 0.0);
}

TEST(CompareSamples, IdenticalSampleSetsAreSame) {
    const auto a = evenly(0.5, 0.02, 10);
    const SampleVerdict v = compare_samples(a, a, CompareOptions{});
    EXPECT_EQ(v.verdict, Verdict::same);
    EXPECT_DOUBLE_EQ(*v.ratio, 1.0);
    EXPECT_GT(v.p_value, 0.9);
}

TEST(CompareSamples, AThreePercentShiftOfTightSamplesIsSlowerAtTwoPercent) {
    const auto a = evenly(1.0, 0.001, 10);
    const auto b = scaled(a, 1.03);
    CompareOptions two;
    two.threshold = 0.02;
    const SampleVerdict slower = compare_samples(a, b, two);
    EXPECT_EQ(slower.verdict, Verdict::slower) << slower.note;
    EXPECT_NEAR(*slower.ratio, 1.03, 1e-12);
    EXPECT_EQ(compare_samples(b, a, two).verdict, Verdict::faster);
    // The same shift under the default 5 % threshold is real but small: same, and the note says so.
    const SampleVerdict within = compare_samples(a, b, CompareOptions{});
    EXPECT_EQ(within.verdict, Verdict::same);
    EXPECT_NE(within.note.find("within the threshold"), std::string::npos) << within.note;
}

TEST(CompareSamples, NoisyOverlappingSamplesAreSameEvenWhenTheMediansMoveBeyondTheThreshold) {
    // Two draws of heavy noise (+-40 %) whose medians differ by more than 5 %: not significant.
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> noise(0.6, 1.4);
    std::vector<double> a, b;
    for (int i = 0; i < 10; ++i) a.push_back(noise(gen));
    for (int i = 0; i < 10; ++i) b.push_back(noise(gen) * 1.08);
    const SampleVerdict v = compare_samples(a, b, CompareOptions{});
    ASSERT_GT(std::abs(*v.ratio - 1.0), 0.05) << "the draw must move the median beyond the threshold to test anything";
    EXPECT_EQ(v.verdict, Verdict::same);
    EXPECT_GE(v.p_value, 0.01);
    EXPECT_NE(v.note.find("not significant"), std::string::npos) << v.note;
}

TEST(CompareSamples, TooFewSamplesCannotBeSignificant) {
    // One sample each, 2x slower: a rank test cannot tell, so no regression is claimed.
    EXPECT_EQ(compare_samples({1.0}, {2.0}, CompareOptions{}).verdict, Verdict::same);
}

ReportRow row(const std::string& kernel, const std::string& status, std::vector<double> samples) {
    ReportRow r;
    r.key.kernel = kernel;
    r.key.m = r.key.n = r.key.k = 64;
    r.key.dtype = "fp32";
    r.status = status;
    r.samples_ms = std::move(samples);
    return r;
}

TEST(CompareReports, JoinsRowsAndMarksRegressions) {
    const auto tight = evenly(1.0, 0.001, 10);
    ReportFile a, b;
    a.rows = {row("same", "ok", tight),          row("slow", "ok", tight),    row("fast", "ok", tight),
              row("broke", "ok", tight),         row("fixed", "crashed", {}), row("gone", "ok", tight),
              row("both_skipped", "skipped", {})};
    b.rows = {row("same", "ok", tight),
              row("slow", "ok", scaled(tight, 1.5)),
              row("fast", "ok", scaled(tight, 0.5)),
              row("broke", "wrong_result", {}),
              row("fixed", "ok", tight),
              row("new", "ok", tight),
              row("both_skipped", "skipped", {})};
    const Comparison c = compare_reports(a, b, CompareOptions{});
    std::map<std::string, const RowComparison*> by_kernel;
    for (const auto& r : c.rows) by_kernel[r.key.kernel] = &r;
    ASSERT_EQ(c.rows.size(), 8u);
    EXPECT_EQ(by_kernel["same"]->verdict, Verdict::same);
    EXPECT_EQ(by_kernel["slow"]->verdict, Verdict::slower);
    EXPECT_TRUE(by_kernel["slow"]->regression);
    EXPECT_EQ(by_kernel["fast"]->verdict, Verdict::faster);
    EXPECT_FALSE(by_kernel["fast"]->regression);
    EXPECT_EQ(by_kernel["broke"]->verdict, Verdict::status_changed);
    EXPECT_TRUE(by_kernel["broke"]->regression);
    EXPECT_EQ(by_kernel["fixed"]->verdict, Verdict::status_changed);
    EXPECT_FALSE(by_kernel["fixed"]->regression);
    EXPECT_EQ(by_kernel["gone"]->verdict, Verdict::missing_in_b);
    EXPECT_FALSE(by_kernel["gone"]->regression);
    EXPECT_EQ(by_kernel["new"]->verdict, Verdict::missing_in_a);
    EXPECT_EQ(by_kernel["both_skipped"]->verdict, Verdict::same);
    EXPECT_EQ(c.regressions(), 2u);
    EXPECT_EQ(c.rows.back().key.kernel, "new");  // rows only B has come last

    CompareOptions strict_missing;
    strict_missing.fail_on_missing = true;
    EXPECT_EQ(compare_reports(a, b, strict_missing).regressions(), 3u);

    // The machine-readable forms say the same.
    const nlohmann::json j = comparison_to_json(a, b, c);
    EXPECT_EQ(j["summary"]["regressions"], 2);
    EXPECT_EQ(j["summary"]["slower"], 1);
    EXPECT_EQ(j["rows"][1]["verdict"], "slower");
    const std::string csv = comparison_to_csv(c);
    EXPECT_EQ(
        csv.substr(0, csv.find('\n')),
        "kernel,m,n,k,dtype,params,status_a,status_b,median_a_ms,median_b_ms,ratio,p_value,samples_a,samples_b,verdict,"
        "regression,note");
    EXPECT_NE(csv.find("\nslow,64,64,64,fp32,,ok,ok,1,1.5,1.5,"), std::string::npos) << csv;
}

TEST(CompareReports, RowsDifferingOnlyInWarmCacheAreNotJoined) {
    const auto dir = kScratch.fresh_dir("params");
    const std::string path = (dir / "r.json").string();
    std::ofstream(path) << R"({"records": [
        {"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1], "extra": {"warm_cache": true}},
        {"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1], "extra": {"warm_cache": false}}]})";
    const ReportFile r = read_report_rows(path);
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_EQ(params_text(r.rows[0].key), "warm_cache=true");
    EXPECT_EQ(params_text(r.rows[1].key), "");  // cold cache is the default: no parameter
}

TEST(CompareReports, RowsTimedByCuptiAreNotJoinedWithRowsTimedByEvents) {
    // The same call reads a third shorter by its kernel records at small shapes: joined, the change of timer
    // would pass for a speed-up.
    const auto dir = kScratch.fresh_dir("timer");
    const std::string path = (dir / "r.json").string();
    std::ofstream(path) << R"({"records": [
        {"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1], "timer": "cupti"},
        {"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1], "timer": "cuda_event"}]})";
    const ReportFile r = read_report_rows(path);
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_EQ(params_text(r.rows[0].key), "timer=cupti");
    EXPECT_EQ(params_text(r.rows[1].key), "");  // events: the rows of every report before CUPTI
    EXPECT_FALSE(r.rows[0].key == r.rows[1].key);
}

// Every way a report can be unusable is an error naming the file and the JSON pointer.
TEST(ReadReportRows, BadInputNamesTheFileAndThePath) {
    const auto dir = kScratch.fresh_dir("bad");
    const std::string ok_row =
        R"({"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1.0]})";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{", "invalid JSON at line 1"},
        {"[]", "a kreg report is a JSON object"},
        {"{\"meta\": {}}", "no 'records'"},
        {"{\"records\": {}}", "/records: expected an array"},
        {"{\"records\": [" + ok_row + ", {\"m\": 8}]}", "/records/1: missing key 'kernel'"},
        {R"({"records": [{"kernel": "k", "m": 0, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1]}]})",
         "/records/0/m: size must be from 1"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp33", "status": "ok", "samples_ms": [1]}]})",
         "/records/0/dtype: unknown dtype 'fp33'"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "fine", "samples_ms": [1]}]})",
         "/records/0/status: unknown status 'fine'"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [1, "x"]}]})",
         "/records/0/samples_ms/1: expected a number, got string"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": [-1]}]})",
         "/records/0/samples_ms/0: a time must be a finite number >= 0"},
        {R"({"records": [{"kernel": "k", "m": 8, "n": 8, "k": 8, "dtype": "fp32", "status": "ok", "samples_ms": []}]})",
         "/records/0/samples_ms: an ok row without timing samples"},
        {"{\"records\": [" + ok_row + ", " + ok_row + "]}", "/records/1: the same row as /records/0"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::string path = (dir / ("bad" + std::to_string(i) + ".json")).string();
        std::ofstream(path) << cases[i].first;
        try {
            read_report_rows(path);
            ADD_FAILURE() << "no error for " << cases[i].first;
        } catch (const ConfigError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
            EXPECT_NE(what.find(cases[i].second), std::string::npos)
                << "expected '" << cases[i].second << "' in: " << what;
        }
    }
    EXPECT_THROW(read_report_rows(dir / "absent.json"), ConfigError);
}

}  // namespace
}  // namespace kreg
