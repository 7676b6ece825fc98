#include "compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "compare/mann_whitney.hpp"
#include "config/sweep_config.hpp"

namespace kreg {
namespace {

std::string short_p(double p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, p < 0.001 ? "%.1e" : "%.3f", p);
    return buf;
}

std::string percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", fraction * 100);
    return buf;
}

}  // namespace

std::string_view to_string(Verdict v) {
    switch (v) {
        case Verdict::same:
            return "same";
        case Verdict::faster:
            return "faster";
        case Verdict::slower:
            return "slower";
        case Verdict::missing_in_a:
            return "missing_in_a";
        case Verdict::missing_in_b:
            return "missing_in_b";
        case Verdict::status_changed:
            return "status_changed";
    }
    return "?";
}

std::string_view to_string(RowStatistic s) { return s == RowStatistic::fastest ? "min" : "median"; }

double row_value(const std::vector<double>& samples, RowStatistic statistic) {
    if (samples.empty()) return 0;
    return statistic == RowStatistic::fastest ? *std::min_element(samples.begin(), samples.end()) : median_of(samples);
}

double fast_edge_width(std::vector<double> samples) {
    if (samples.empty()) return 0;
    std::sort(samples.begin(), samples.end());
    if (samples.front() <= 0) return 0;
    // The sample at the 10th percentile, and at least the second fastest (one sample has no edge to measure).
    const std::size_t tenth =
        std::min(samples.size() - 1, std::max<std::size_t>(1, std::size_t(double(samples.size() - 1) * 0.1)));
    return samples[tenth] / samples.front() - 1.0;
}

double median_interval_half_width(std::vector<double> samples) {
    const double median = median_of(samples);
    if (samples.empty() || median <= 0) return 0;
    std::sort(samples.begin(), samples.end());
    // Ranks (1-based) of the interval's ends: the number of samples below the true median is Binomial(n, 1/2),
    // so n/2 -+ 1.96 sqrt(n)/2 covers it 95 % of the time, whatever the distribution of the samples.
    const double n = double(samples.size());
    const double half_spread = 1.96 * std::sqrt(n) / 2;
    const auto low = std::size_t(std::max(1.0, std::floor(n / 2 - half_spread)));
    const auto high = std::size_t(std::min(n, std::ceil(n / 2 + 1 + half_spread)));
    return (samples[high - 1] - samples[low - 1]) / (2 * median);
}

NoiseModel learn_noise_model(const std::vector<std::pair<double, double>>& control_medians_ms,
                             const CompareOptions& options) {
    NoiseModel model;
    std::vector<double> log_ratios;
    for (const auto& [a_ms, b_ms] : control_medians_ms)
        if (a_ms > 0 && b_ms > 0) log_ratios.push_back(std::log(b_ms / a_ms));
    model.control_rows = log_ratios.size();
    model.drift_corrected = model.control_rows >= kMinControlRows;
    model.threshold = options.threshold.value_or(model.drift_corrected ? kDefaultThresholdWithControls
                                                                       : kDefaultThresholdWithoutControls);
    if (!model.drift_corrected) {
        model.note = model.control_rows == 0 ? "no control rows: drift not corrected"
                                             : std::to_string(model.control_rows) + " control row(s), fewer than " +
                                                   std::to_string(kMinControlRows) + ": drift not corrected";
        return model;
    }
    // Medians and the median absolute deviation: one control that happened to run beside a burst of load
    // moves neither. 1.4826 x MAD estimates a normal sigma; n/(n-0.8) corrects its small-count bias (Croux and
    // Rousseeuw's factor, close to theirs for n >= 3), so three controls do not claim a tight machine.
    const double centre = median_of(log_ratios);
    std::vector<double> deviations;
    for (double l : log_ratios) deviations.push_back(std::abs(l - centre));
    const double n = double(log_ratios.size());
    model.drift = std::exp(centre);
    model.between_run_sigma = 1.4826 * median_of(deviations) * n / (n - 0.8);
    model.widest_control_deviation = std::expm1(*std::max_element(deviations.begin(), deviations.end()));
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "drift B/A %.3f from %zu control rows, between-run noise %.1f%%, widest control %.1f%%", model.drift,
                  model.control_rows, model.between_run_sigma * 100, model.widest_control_deviation * 100);
    model.note = buf;
    return model;
}

SampleVerdict compare_samples(const std::vector<double>& a_ms, const std::vector<double>& b_ms,
                              const CompareOptions& options, const NoiseModel& model) {
    return compare_samples(RunsOfRow{a_ms}, RunsOfRow{b_ms}, options, model);
}

namespace {

std::vector<double> pooled(const RunsOfRow& runs) {
    std::vector<double> all;
    for (const auto& run : runs) all.insert(all.end(), run.begin(), run.end());
    return all;
}

// What the rank test compares: every sample for the median; for the fastest call, the same number of
// fastest samples from each run (eight over the runs, at least four a run, or all a run has): the calls that
// load left alone, each run counted alike, since a run that load slowed throughout has more samples and would
// otherwise drown the others' fast end in its own.
std::vector<double> tested_samples(const RunsOfRow& runs, RowStatistic statistic) {
    if (statistic == RowStatistic::median) return pooled(runs);
    std::vector<double> fast_end;
    const std::size_t each = std::max<std::size_t>(4, (8 + runs.size() - 1) / std::max<std::size_t>(1, runs.size()));
    for (auto run : runs) {
        std::sort(run.begin(), run.end());
        run.resize(std::min(run.size(), each));
        fast_end.insert(fast_end.end(), run.begin(), run.end());
    }
    return fast_end;
}

// The runs' values of one side and how far they agree. For the fastest call the side's value is the fastest
// of its runs' (load only adds time, to a call or to a whole run: a row that ran beside a busy hyperthread
// sibling is slower at every call, its fastest too), and its spread how far the second fastest run stands
// above it: two runs that agree say the edge is the code's, one alone that it may be luck. For the median
// the value is the median of the runs' medians and the spread their robust sigma in log space (as the
// controls'). No spread with fewer than two runs: a side cannot say how far its value wanders.
struct SideValue {
    double value_ms = 0, median_ms = 0;
    std::size_t runs = 0;
    std::optional<double> spread;
};

SideValue side_value(const RunsOfRow& runs, RowStatistic statistic) {
    SideValue side;
    std::vector<double> values, medians;
    for (const auto& run : runs) {
        if (run.empty()) continue;
        values.push_back(row_value(run, statistic));
        medians.push_back(median_of(run));
    }
    side.runs = values.size();
    side.median_ms = median_of(medians);
    std::sort(values.begin(), values.end());
    if (statistic == RowStatistic::fastest) {
        side.value_ms = values.empty() ? 0 : values.front();
        if (values.size() >= 2 && values.front() > 0) side.spread = values[1] / values.front() - 1.0;
        return side;
    }
    side.value_ms = median_of(values);
    std::vector<double> logs;
    for (double v : values)
        if (v > 0) logs.push_back(std::log(v));
    if (logs.size() >= 2) {
        const double centre = median_of(logs);
        std::vector<double> deviations;
        for (double l : logs) deviations.push_back(std::abs(l - centre));
        const double n = double(logs.size());
        side.spread = 1.4826 * median_of(deviations) * n / (n - 0.8);
    }
    return side;
}

// The row's between-run noise from its runs (relative). A side of one run borrows the other's spread (one
// row, one machine). Fastest call: the two sides' second-fastest gaps combined. Median: k sigma of the ratio
// of two medians over runs (the standard error of a median is about 1.25 sigma / sqrt(runs)).
std::optional<double> between_rounds_term(const SideValue& a, const SideValue& b, RowStatistic statistic) {
    if (!a.spread && !b.spread) return std::nullopt;
    const double sa = a.spread.value_or(*b.spread), sb = b.spread.value_or(*a.spread);
    if (statistic == RowStatistic::fastest) return std::hypot(sa, sb);
    const double sigma = 1.2533 * std::sqrt(sa * sa / double(a.runs) + sb * sb / double(b.runs));
    return std::expm1(kNoiseFloorSigmas * sigma);
}

double within_run_spread(const std::vector<double>& samples, RowStatistic statistic) {
    return statistic == RowStatistic::fastest ? fast_edge_width(samples) : median_interval_half_width(samples);
}

}  // namespace

SampleVerdict compare_samples(const RunsOfRow& a_runs, const RunsOfRow& b_runs, const CompareOptions& options,
                              const NoiseModel& model) {
    SampleVerdict s;
    const SideValue side_a = side_value(a_runs, options.statistic), side_b = side_value(b_runs, options.statistic);
    const std::vector<double> a_ms = pooled(a_runs), b_ms = pooled(b_runs);
    s.median_a_ms = side_a.median_ms;
    s.median_b_ms = side_b.median_ms;
    s.value_a_ms = side_a.value_ms;
    s.value_b_ms = side_b.value_ms;
    if (s.value_a_ms > 0) s.ratio = s.value_b_ms / s.value_a_ms;
    std::vector<double> b_corrected = tested_samples(b_runs, options.statistic);  // as if the machine had not drifted
    for (double& ms : b_corrected) ms /= model.drift;
    const std::vector<double> a_tested = tested_samples(a_runs, options.statistic);
    s.p_value = mann_whitney_u(a_tested, b_corrected).p_value;
    const double threshold = options.threshold.value_or(model.threshold);
    s.within_run = std::hypot(within_run_spread(a_ms, options.statistic), within_run_spread(b_ms, options.statistic));
    s.between_rounds = between_rounds_term(side_a, side_b, options.statistic);
    // With runs to learn from, the row's own spread over them is its noise: it is what the within-run spread
    // and the widest control stand in for when a side ran once (a run's samples say nothing of the next run,
    // and a control of another kind, threads or size reacts to load as this row need not). The pooled edge
    // would count the runs that load slowed, which the fastest of the runs leaves out.
    const double controls_floor = std::expm1(kNoiseFloorSigmas * model.between_run_sigma);
    s.noise_floor = s.between_rounds
                        ? std::max({threshold, controls_floor, *s.between_rounds})
                        : std::max({threshold, controls_floor, model.widest_control_deviation, s.within_run});
    if (!s.ratio) {
        s.note = "A's value is 0 ms: no ratio";
        return s;
    }
    s.adjusted_ratio = *s.ratio / model.drift;
    const double change = *s.adjusted_ratio - 1.0;
    // Symmetric in log space: 1.25x slower and 1/1.25x faster are the same distance from no change.
    const bool beyond_floor =
        *s.adjusted_ratio > 1.0 + s.noise_floor || *s.adjusted_ratio < 1.0 / (1.0 + s.noise_floor);
    const bool significant = s.p_value < options.alpha;
    if (beyond_floor && significant) {
        s.verdict = change > 0 ? Verdict::slower : Verdict::faster;
    } else if (beyond_floor) {
        // A change this large that the samples cannot tell from noise: say so, with the reason.
        s.note = percent(change) + " but not significant (p=" + short_p(s.p_value) + ", " +
                 std::to_string(a_tested.size()) + " vs " + std::to_string(b_corrected.size()) + " samples)";
    } else if (std::abs(change) > threshold) {
        s.note = percent(change) + ", within the noise floor";
    } else if (significant && change != 0) {
        s.note = percent(change) + ", significant but within the threshold";
    }
    return s;
}

bool timed_by_gpu_clock(const std::string& timer) { return timer == "cupti" || timer == "cuda_event"; }

SampleVerdict compare_samples(const std::vector<double>& a_ms, const std::vector<double>& b_ms,
                              const CompareOptions& options) {
    return compare_samples(a_ms, b_ms, options, learn_noise_model({}, options));
}

std::size_t Comparison::count(Verdict v) const {
    return std::size_t(std::count_if(rows.begin(), rows.end(), [v](const RowComparison& r) { return r.verdict == v; }));
}

std::size_t Comparison::regressions() const {
    return std::size_t(std::count_if(rows.begin(), rows.end(), [](const RowComparison& r) { return r.regression; }));
}

namespace {

bool both_ok(const RowComparison& c) { return c.a && c.b && c.a->status == "ok" && c.b->status == "ok"; }

bool named_control(const RowKey& key, const CompareOptions& options) {
    return std::any_of(options.controls.begin(), options.controls.end(),
                       [&](const std::string& pattern) { return glob_match(pattern, key.kernel); });
}

std::string unchanged_note(const ReportRow& row, const ReportFile& a) {
    return "plugin unchanged (sha256 " + row.plugin_sha256.substr(0, 12) + ", kreg " + a.kreg_version + ")";
}

void append_note(std::string& note, const std::string& more) {
    if (!more.empty()) note += (note.empty() ? "" : "; ") + more;
}

// One row over the runs of a side: its value over its ok runs (side_value), each ok run's samples,
// and whether every run that has it ran the same plugin binary as the first.
struct SideOfRow {
    double value_ms = 0;
    RunsOfRow runs;
    bool one_binary = true;
};

SideOfRow side_of_row(const ReportRow& first, const std::vector<const ReportFile*>& runs, RowStatistic statistic) {
    SideOfRow side;
    for (const ReportFile* run : runs) {
        const auto it =
            std::find_if(run->rows.begin(), run->rows.end(), [&](const ReportRow& r) { return r.key == first.key; });
        if (it == run->rows.end()) continue;
        if (it->plugin_sha256 != first.plugin_sha256) side.one_binary = false;
        if (it->status != "ok") continue;
        side.runs.push_back(it->samples_ms);
    }
    side.value_ms = side_value(side.runs, statistic).value_ms;
    return side;
}

bool one_kreg(const std::vector<const ReportFile*>& a_runs, const std::vector<const ReportFile*>& b_runs) {
    const std::string& version = a_runs[0]->kreg_version;
    if (version.empty()) return false;
    for (const auto* runs : {&a_runs, &b_runs})
        for (const ReportFile* r : *runs)
            if (r->kreg_version != version) return false;
    return true;
}

}  // namespace

Comparison compare_reports(const ReportFile& a, const ReportFile& b, const CompareOptions& options) {
    return compare_runs({&a}, {&b}, options);
}

Comparison compare_runs(const std::vector<const ReportFile*>& a_runs, const std::vector<const ReportFile*>& b_runs,
                        const CompareOptions& options) {
    const ReportFile& a = *a_runs.at(0);
    const ReportFile& b = *b_runs.at(0);
    Comparison out;
    out.options = options;
    out.runs_a = a_runs.size();
    out.runs_b = b_runs.size();
    std::map<RowKey, const ReportRow*> rows_of_b;
    for (const auto& row : b.rows) rows_of_b.emplace(row.key, &row);
    std::map<RowKey, bool> seen_in_a;
    const bool same_kreg = one_kreg(a_runs, b_runs);
    std::map<RowKey, std::pair<SideOfRow, SideOfRow>> sides;  // of the rows ok in both first runs
    for (const auto& row_a : a.rows) {
        RowComparison c;
        c.key = row_a.key;
        c.a = &row_a;
        seen_in_a[row_a.key] = true;
        const auto it = rows_of_b.find(row_a.key);
        if (it == rows_of_b.end()) {
            c.verdict = Verdict::missing_in_b;
            c.regression = options.fail_on_missing && row_a.status == "ok";
            c.note = "only in A (" + row_a.status + ")";
            out.rows.push_back(std::move(c));
            continue;
        }
        c.b = it->second;
        c.plugin_unchanged = same_kreg && !row_a.plugin_sha256.empty() && row_a.plugin_sha256 == c.b->plugin_sha256;
        if (both_ok(c)) {
            auto& [side_a, side_b] = sides[c.key] = {side_of_row(row_a, a_runs, options.statistic),
                                                     side_of_row(*c.b, b_runs, options.statistic)};
            c.plugin_unchanged = c.plugin_unchanged && side_a.one_binary && side_b.one_binary;
        }
        out.rows.push_back(std::move(c));
    }
    // The controls: the named kernels, or else every unchanged row; only rows ok in both runs have medians.
    std::vector<std::pair<double, double>> control_medians;
    for (auto& c : out.rows) {
        if (!both_ok(c)) continue;
        c.control = options.controls.empty() ? c.plugin_unchanged : named_control(c.key, options);
        if (c.control) control_medians.emplace_back(sides[c.key].first.value_ms, sides[c.key].second.value_ms);
    }
    out.model = learn_noise_model(control_medians, options);
    for (auto& c : out.rows) {
        if (!c.b) continue;
        const std::string& sa = c.a->status;
        const std::string& sb = c.b->status;
        if (sa == "ok" && sb == "ok") {
            const auto& [side_a, side_b] = sides[c.key];
            CompareOptions row_options = options;
            if (!options.threshold && timed_by_gpu_clock(c.a->timer) && timed_by_gpu_clock(c.b->timer))
                row_options.threshold = kDefaultThresholdGpuClock;
            c.samples = compare_samples(side_a.runs, side_b.runs, row_options, out.model);
            c.verdict = c.samples.verdict;
            // Same binary, same kreg: a slower verdict is the machine's (the model's verdict stays, for what it
            // says about the model), never the code's.
            c.regression = c.verdict == Verdict::slower && !c.plugin_unchanged;
            c.note = c.samples.note;
            if (c.control && !c.plugin_unchanged) append_note(c.note, "control, but its plugin changed");
        } else if (sa != sb) {
            c.verdict = Verdict::status_changed;
            c.regression = sa == "ok";  // a row that was ok and no longer is, whatever the binary
            c.note = sa + " -> " + sb + (sb != "ok" && !c.b->reason.empty() ? ": " + c.b->reason : "");
        } else {
            c.note = "both " + sa;
        }
        if (c.plugin_unchanged) {
            append_note(c.note, unchanged_note(*c.a, a));
            if (c.verdict == Verdict::slower) append_note(c.note, "slower is the machine's: no regression");
        }
    }
    for (const auto& row_b : b.rows) {
        if (seen_in_a.count(row_b.key)) continue;
        RowComparison c;
        c.key = row_b.key;
        c.b = &row_b;
        c.verdict = Verdict::missing_in_a;
        c.note = "only in B (" + row_b.status + ")";
        out.rows.push_back(std::move(c));
    }
    return out;
}

}  // namespace kreg
