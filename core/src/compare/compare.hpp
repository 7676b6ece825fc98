// `runner compare`: two reports joined row by row, a verdict per row, and whether the second one regressed.
// Two runs of one binary differ by more than each run's samples say (the machine drifts between runs: load,
// clocks, caches), so a row is not judged on its own samples alone. The noise model: rows whose plugin
// binary (sha256) and kreg version are the same in both reports are controls; their median B/A is the
// machine's drift and their scatter around it the between-run noise. A row's value on a side is its fastest
// call by default (load only ever adds time to a call, so the fast end of a row moves least when the machine
// is busy; the median moves with the load), or its median. Every row is judged on its B/A divided by the
// drift, and only beyond a noise floor: max(threshold, k x between-run noise, and the row's own noise: with
// several runs a side the spread of its value over its runs; with one, the farthest any control strayed and
// the row's within-run spread). A rank test on the drift-corrected samples must agree (it is secondary).
#pragma once

#include "compare/report_rows.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

enum class Verdict {
    same,            // both ok and no significant change beyond the threshold; or the same non-ok status in both
    faster,          // B's median below A's by more than the threshold, and significant
    slower,          // B's median above A's by more than the threshold, and significant
    missing_in_a,    // the row is only in B
    missing_in_b,    // the row is only in A
    status_changed,  // the statuses differ (ok -> crashed, skipped -> ok, ...)
};
std::string_view to_string(Verdict v);

// The defaults, measured on a shared 2-core machine (docs/results/compare-noise.md): with drift corrected
// by controls, the same binary's fastest call moved by up to 10 % (140 rows of 35 five-round comparisons at
// load 13 to 25: a row's minimum takes one of two levels ~3 % apart from run to run, and the drift learned
// from the controls' carries the same), so 15 % leaves a margin above it and half of a 30 % change; without
// controls nothing is learned and the threshold alone must cover the drift too.
inline constexpr double kDefaultThresholdWithControls = 0.15;
inline constexpr double kDefaultThresholdWithoutControls = 0.20;
// Rows timed by a GPU's own clock (CUPTI's records or CUDA events: timer "cupti" or "cuda_event") move far
// less between runs than a shared CPU's; their default is 5 %, with or without controls. The noise floor a
// row's controls and rounds learn still applies above it.
inline constexpr double kDefaultThresholdGpuClock = 0.05;
bool timed_by_gpu_clock(const std::string& timer);
inline constexpr std::size_t kMinControlRows = 3;  // fewer: no drift estimate (a median of two is a guess)
inline constexpr double kNoiseFloorSigmas = 3.0;   // k: a row must move k between-run sigmas beyond the drift

// What a row's value on one side is, from its samples.
enum class RowStatistic {
    fastest,  // the fastest call ("min"): what the code costs when nothing else took the core from it
    median,   // the median call: what it costs on this machine as loaded as it was
};
std::string_view to_string(RowStatistic s);  // "min", "median"

struct CompareOptions {
    std::optional<double> threshold;  // minimum relative change of the median that counts; none: the defaults above
    RowStatistic statistic = RowStatistic::fastest;
    double alpha = 0.01;           // significance level of the rank test
    bool fail_on_missing = false;  // an ok row of A missing from B is a regression too
    // Kernel names or globs whose rows are the controls; empty: every row whose plugin is unchanged.
    std::vector<std::string> controls;
};

// What the controls say about the machine between the two runs.
struct NoiseModel {
    std::size_t control_rows = 0;  // ok in both runs and chosen as controls
    bool drift_corrected = false;  // control_rows >= kMinControlRows
    double drift = 1.0;            // the machine's B/A: median of the controls' ratios (1 when not corrected)
    double between_run_sigma = 0;  // robust spread of the controls' log ratios around the drift (0: not known)
    // How far the farthest control strayed from the drift (relative): timing noise has heavy tails, which a
    // sigma from the MAD does not see, and a row is not news when it moved no more than a control did.
    double widest_control_deviation = 0;
    double threshold = 0;  // the minimum effect in force (the option, or the default for this case)
    std::string note;      // "no control rows: drift not corrected", ...
};

// Learns the model from the controls' medians (A, B pairs, in ms). With fewer than kMinControlRows, or when
// none is given, the model corrects nothing and says why.
NoiseModel learn_noise_model(const std::vector<std::pair<double, double>>& control_medians_ms,
                             const CompareOptions& options);

// What the samples of one row say, A against B, under a noise model.
struct SampleVerdict {
    Verdict verdict = Verdict::same;
    double median_a_ms = 0, median_b_ms = 0;  // the medians (of the runs' medians), whatever the statistic
    double value_a_ms = 0, value_b_ms = 0;    // the statistic judged (of the runs' values): min or median
    std::optional<double> ratio;              // value B / value A; none when A's value is 0
    std::optional<double> adjusted_ratio;     // ratio / drift: what is left for the code
    double within_run = 0;  // the statistic's relative uncertainty from the two sample sets (one run a side)
    // The row's between-run noise from its runs (relative), when a side has two or more runs; none else. For
    // the fastest call: how far each side's second fastest run stands above its fastest, combined; for the
    // median: k x the robust sigma of the runs' medians.
    std::optional<double> between_rounds;
    double noise_floor = 0;  // relative change the adjusted ratio must exceed: max(threshold, k sigma, and
                             // between_rounds, or without it the widest control deviation and within_run)
    double p_value = 1.0;    // rank test of A's samples against B's divided by the drift
    std::string note;        // why a visible change is still `same`, e.g. "not significant (p=0.2)"
};
SampleVerdict compare_samples(const std::vector<double>& a_ms, const std::vector<double>& b_ms,
                              const CompareOptions& options, const NoiseModel& model);
// One row on one side over its runs: each run's samples, in run order.
using RunsOfRow = std::vector<std::vector<double>>;
SampleVerdict compare_samples(const RunsOfRow& a_runs, const RunsOfRow& b_runs, const CompareOptions& options,
                              const NoiseModel& model);
// Without controls: no drift correction, the no-controls threshold (or the option's).
SampleVerdict compare_samples(const std::vector<double>& a_ms, const std::vector<double>& b_ms,
                              const CompareOptions& options);

// The row's value: its fastest sample, or its median. 0 for an empty set.
double row_value(const std::vector<double>& samples, RowStatistic statistic);

// How far the fastest tenth of the samples spread above the fastest (relative): a sharp fast edge says the
// minimum is reproducible, a blurred one that few calls ran undisturbed. 0 for an empty set or a minimum of 0.
double fast_edge_width(std::vector<double> samples);

// Half the width of the distribution-free 95 % interval of the median (order statistics), relative to the
// median: for few samples that is the whole range. 0 for an empty set or a median of 0.
double median_interval_half_width(std::vector<double> samples);

struct RowComparison {
    RowKey key;
    const ReportRow* a = nullptr;     // null when missing in A
    const ReportRow* b = nullptr;     // null when missing in B
    SampleVerdict samples;            // meaningful when both rows are ok
    Verdict verdict = Verdict::same;  // the model's verdict, also for unchanged plugins
    // The plugin binary's sha256 and the kreg version are the same in both reports (and known): whatever the
    // model says, the code did not change, so a `slower` here is the machine's and is no regression.
    bool plugin_unchanged = false;
    bool control = false;     // one of the rows the noise model was learned from
    bool regression = false;  // slower with a changed plugin, ok -> not ok, or (with fail_on_missing) ok -> missing
    std::string note;
};

struct Comparison {
    CompareOptions options;
    NoiseModel model;
    std::size_t runs_a = 1, runs_b = 1;  // reports per side
    std::vector<RowComparison> rows;     // A's order, then the rows only B has in B's order
    std::size_t count(Verdict v) const;
    std::size_t regressions() const;
};

// The reports must outlive the result (rows point into them).
Comparison compare_reports(const ReportFile& a, const ReportFile& b, const CompareOptions& options);

// Several runs of each side (the same plugins run again, best interleaved A B A B ...): a row's value on a
// side is the fastest of its runs' fastest calls (for the median: the median of its runs' medians), so a
// run that load slowed cannot move it; the controls' drift and scatter come from those values, and the
// row's spread over its runs is its own between-run noise. The rows, their order and statuses are the first
// run's of each side (a_runs[0], b_runs[0]); a row missing or not ok in a later run is left out of that
// run's value. Its samples, pooled over the runs, give the within-run interval and the rank test.
Comparison compare_runs(const std::vector<const ReportFile*>& a_runs, const std::vector<const ReportFile*>& b_runs,
                        const CompareOptions& options);

}  // namespace kreg
