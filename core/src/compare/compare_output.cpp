#include "compare/compare_output.hpp"

#include "report/csv.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace kreg {
namespace {

using nlohmann::json;

std::string fixed(double v, const char* format) {
    char buf[48];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string describe(const ReportFile& r) {
    std::string s = r.path + ": " + (r.timestamp.empty() ? "?" : r.timestamp) + ", git " +
                    (r.git_sha.empty() ? "?" : r.git_sha) + ", " + (r.gpu_name.empty() ? "no GPU" : r.gpu_name);
    if (r.synthetic) s += "  [SYNTHETIC: not a measurement]";
    if (r.complete && !*r.complete)
        s += "  [INCOMPLETE: an interrupted sweep, " + std::to_string(r.rows.size()) + " of " +
             std::to_string(r.planned) + " rows]";
    return s;
}

json side(const ReportFile& r) {
    json j = {{"path", r.path},    {"timestamp", r.timestamp}, {"git_sha", r.git_sha},
              {"gpu", r.gpu_name}, {"synthetic", r.synthetic}, {"rows", r.rows.size()}};
    j["complete"] = r.complete ? json(*r.complete) : json(nullptr);
    j["planned"] = r.planned ? json(r.planned) : json(nullptr);
    return j;
}

bool both_ok(const RowComparison& r) { return r.a && r.b && r.a->status == "ok" && r.b->status == "ok"; }

std::string percent_text(double fraction) { return fixed(fraction * 100, "%g") + "%"; }

}  // namespace

std::string format_comparison_table(const ReportFile& a, const ReportFile& b, const Comparison& c) {
    std::ostringstream out;
    const auto more = [](std::size_t runs) {
        return runs > 1 ? "  (+" + std::to_string(runs - 1) + " more run(s): medians of the runs' medians)"
                        : std::string();
    };
    out << "A = " << describe(a) << more(c.runs_a) << "\nB = " << describe(b) << more(c.runs_b) << "\n";
    if (!a.gpu_name.empty() && !b.gpu_name.empty() && a.gpu_name != b.gpu_name)
        out << "warning: A ran on " << a.gpu_name << " and B on " << b.gpu_name
            << ": differences are not only the code's\n";
    out << "noise model: " << c.model.note;
    out << "; a row's value is its " << (c.options.statistic == RowStatistic::fastest ? "fastest call" : "median");
    if (c.model.drift_corrected)
        out << "; rows are judged on B/A / drift";
    else
        out << " (name baseline kernels with --control: on a shared machine run-to-run noise can exceed the "
               "threshold)";
    out << "\n\n";
    const std::string a_ms = "A " + std::string(to_string(c.options.statistic)) + " ms";
    const std::string b_ms = "B " + std::string(to_string(c.options.statistic)) + " ms";
    const std::vector<std::string> header = {"kernel", "shape", "dtype", a_ms,      b_ms,  "B/A",
                                             "/drift", "floor", "p",     "verdict", "note"};
    std::vector<std::vector<std::string>> table;
    for (const auto& r : c.rows) {
        std::string shape = shape_text(r.key);
        if (const std::string p = params_text(r.key); !p.empty()) shape += " " + p;
        std::vector<std::string> cells = {r.key.kernel, shape, r.key.dtype};
        if (both_ok(r)) {
            cells.push_back(fixed(r.samples.value_a_ms, "%.4f"));
            cells.push_back(fixed(r.samples.value_b_ms, "%.4f"));
            cells.push_back(r.samples.ratio ? fixed(*r.samples.ratio, "%.3f") : "-");
            cells.push_back(r.samples.adjusted_ratio ? fixed(*r.samples.adjusted_ratio, "%.3f") : "-");
            cells.push_back(fixed(r.samples.noise_floor * 100, "%.1f%%"));
            cells.push_back(r.samples.p_value < 0.001 ? fixed(r.samples.p_value, "%.0e")
                                                      : fixed(r.samples.p_value, "%.3f"));
        } else {
            cells.insert(cells.end(), {r.a ? r.a->status : "-", r.b ? r.b->status : "-", "-", "-", "-", "-"});
        }
        std::string verdict(to_string(r.verdict));
        if (r.control) verdict += " (c)";
        if (r.regression) verdict += " !";
        cells.push_back(verdict);
        cells.push_back(r.note);
        table.push_back(std::move(cells));
    }
    std::vector<std::size_t> width(header.size());
    for (std::size_t i = 0; i < header.size(); ++i) {
        width[i] = header[i].size();
        for (const auto& row : table) width[i] = std::max(width[i], row[i].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (std::size_t i = 0; i < cells.size(); ++i) {
            s += cells[i];
            if (i + 1 < cells.size()) s += std::string(width[i] - cells[i].size() + 2, ' ');
        }
        while (!s.empty() && s.back() == ' ') s.pop_back();
        return s + "\n";
    };
    out << line(header);
    std::vector<std::string> rule;
    for (auto w : width) rule.push_back(std::string(w, '-'));
    out << line(rule);
    for (const auto& row : table) out << line(row);
    out << "\n" << c.rows.size() << " row(s):";
    for (Verdict v : {Verdict::same, Verdict::faster, Verdict::slower, Verdict::status_changed, Verdict::missing_in_a,
                      Verdict::missing_in_b})
        if (const std::size_t n = c.count(v)) out << " " << n << " " << to_string(v) << ",";
    out << " " << c.regressions() << " regression(s) (marked !; (c): a control row). A change counts beyond "
        << "its row's floor: max(threshold " << percent_text(c.model.threshold) << ", "
        << fixed(kNoiseFloorSigmas, "%g")
        << " x between-run noise, and the row's spread over its runs or, with one run a side, the widest control"
        << " and the row's within-run spread), and at p < " << fixed(c.options.alpha, "%g")
        << " (Mann-Whitney U on the drift-corrected samples).\n";
    return out.str();
}

json comparison_to_json(const ReportFile& a, const ReportFile& b, const Comparison& c) {
    json rows = json::array();
    for (const auto& r : c.rows) {
        json j = {{"kernel", r.key.kernel}, {"m", r.key.m}, {"n", r.key.n}, {"k", r.key.k}, {"dtype", r.key.dtype}};
        j["params"] = r.key.params.empty() ? json::object() : json::parse(r.key.params);
        j["status_a"] = r.a ? json(r.a->status) : json(nullptr);
        j["status_b"] = r.b ? json(r.b->status) : json(nullptr);
        j["samples_a"] = r.a ? r.a->samples_ms.size() : 0;
        j["samples_b"] = r.b ? r.b->samples_ms.size() : 0;
        if (both_ok(r)) {
            j["median_a_ms"] = r.samples.median_a_ms;
            j["median_b_ms"] = r.samples.median_b_ms;
            j["ratio"] = r.samples.ratio ? json(*r.samples.ratio) : json(nullptr);
            j["adjusted_ratio"] = r.samples.adjusted_ratio ? json(*r.samples.adjusted_ratio) : json(nullptr);
            j["within_run"] = r.samples.within_run;
            j["value_a_ms"] = r.samples.value_a_ms;
            j["value_b_ms"] = r.samples.value_b_ms;
            j["between_rounds"] = r.samples.between_rounds ? json(*r.samples.between_rounds) : json(nullptr);
            j["noise_floor"] = r.samples.noise_floor;
            j["p_value"] = r.samples.p_value;
        } else {
            j["median_a_ms"] = j["median_b_ms"] = j["ratio"] = j["adjusted_ratio"] = j["within_run"] =
                j["noise_floor"] = j["p_value"] = j["value_a_ms"] = j["value_b_ms"] = j["between_rounds"] = nullptr;
        }
        j["plugin_sha256_a"] = r.a && !r.a->plugin_sha256.empty() ? json(r.a->plugin_sha256) : json(nullptr);
        j["plugin_sha256_b"] = r.b && !r.b->plugin_sha256.empty() ? json(r.b->plugin_sha256) : json(nullptr);
        j["plugin_unchanged"] = r.plugin_unchanged;
        j["control"] = r.control;
        j["verdict"] = std::string(to_string(r.verdict));
        j["regression"] = r.regression;
        j["note"] = r.note;
        rows.push_back(std::move(j));
    }
    json summary = json::object();
    for (Verdict v : {Verdict::same, Verdict::faster, Verdict::slower, Verdict::status_changed, Verdict::missing_in_a,
                      Verdict::missing_in_b})
        summary[std::string(to_string(v))] = c.count(v);
    summary["regressions"] = c.regressions();
    summary["plugin_unchanged"] = std::size_t(
        std::count_if(c.rows.begin(), c.rows.end(), [](const RowComparison& r) { return r.plugin_unchanged; }));
    const json model = {{"control_rows", c.model.control_rows},
                        {"controls", c.options.controls},
                        {"drift_corrected", c.model.drift_corrected},
                        {"drift", c.model.drift},
                        {"between_run_sigma", c.model.between_run_sigma},
                        {"widest_control_deviation", c.model.widest_control_deviation},
                        {"floor_sigmas", kNoiseFloorSigmas},
                        {"statistic", std::string(to_string(c.options.statistic))},
                        {"note", c.model.note}};
    return {{"a", side(a)},
            {"b", side(b)},
            {"threshold", c.model.threshold},
            {"noise_model", model},
            {"runs_a", c.runs_a},
            {"runs_b", c.runs_b},
            {"alpha", c.options.alpha},
            {"fail_on_missing", c.options.fail_on_missing},
            {"rows", rows},
            {"summary", summary}};
}

std::string comparison_to_csv(const Comparison& c) {
    std::ostringstream out;
    out << "kernel,m,n,k,dtype,params,status_a,status_b,median_a_ms,median_b_ms,ratio,p_value,samples_a,samples_b,"
           "verdict,"
           "regression,note,adjusted_ratio,noise_floor,control,plugin_unchanged,value_a_ms,value_b_ms,between_rounds\n";
    for (const auto& r : c.rows) {
        const bool ok = both_ok(r);
        // Text goes through csv_field (quoted, printable, no spreadsheet formulas); numbers never do.
        const auto text = [](const std::string& t) { return csv_field(t); };
        const std::vector<std::string> cells = {
            text(r.key.kernel),
            std::to_string(r.key.m),
            std::to_string(r.key.n),
            std::to_string(r.key.k),
            text(r.key.dtype),
            text(params_text(r.key)),
            text(r.a ? r.a->status : ""),
            text(r.b ? r.b->status : ""),
            ok ? fixed(r.samples.median_a_ms, "%.9g") : "",
            ok ? fixed(r.samples.median_b_ms, "%.9g") : "",
            ok && r.samples.ratio ? fixed(*r.samples.ratio, "%.9g") : "",
            ok ? fixed(r.samples.p_value, "%.6g") : "",
            std::to_string(r.a ? r.a->samples_ms.size() : 0),
            std::to_string(r.b ? r.b->samples_ms.size() : 0),
            std::string(to_string(r.verdict)),
            r.regression ? "true" : "false",
            text(r.note),
            ok && r.samples.adjusted_ratio ? fixed(*r.samples.adjusted_ratio, "%.9g") : "",
            ok ? fixed(r.samples.noise_floor, "%.6g") : "",
            r.control ? "true" : "false",
            r.plugin_unchanged ? "true" : "false",
            ok ? fixed(r.samples.value_a_ms, "%.9g") : "",
            ok ? fixed(r.samples.value_b_ms, "%.9g") : "",
            ok && r.samples.between_rounds ? fixed(*r.samples.between_rounds, "%.6g") : ""};
        for (std::size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << cells[i];
        out << "\n";
    }
    return out.str();
}

}  // namespace kreg
