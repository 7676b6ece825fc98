#include "tune/tune.hpp"

#include "config/sweep_config.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace kreg::tune {
namespace {
using json = nlohmann::json;

struct Shape3 {
    int64_t m = 0, n = 0, k = 0;
    friend bool operator<(const Shape3& a, const Shape3& b) {
        return std::tie(a.m, a.n, a.k) < std::tie(b.m, b.n, b.k);
    }
};

std::string shape_text(const Shape3& s) {
    return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// What won one measured shape, and against what.
struct Winner {
    std::string kernel;
    double median_ms = 0;
    std::string report;
    std::optional<double> ratio;  // time(reference) / time(kernel), both from the winner's report
    std::optional<std::string> reference;
};

using Group = std::pair<std::string, std::string>;  // (device, dtype)

// One kernel, one build: a kernel measured from two plugin binaries would make the table compare builds.
void check_one_build_per_kernel(const std::vector<TuneReport>& reports) {
    std::map<std::string, std::pair<std::string, std::string>> first_seen;  // kernel -> (sha256, report)
    for (const TuneReport& report : reports)
        for (const auto& [kernel, sha] : report.kernel_sha256) {
            const auto [it, added] = first_seen.emplace(kernel, std::make_pair(sha, report.path));
            if (!added && it->second.first != sha)
                throw TuneError(report.path + ": kernel " + kernel + " ran from plugin build " + sha.substr(0, 12) +
                                ", but " + it->second.second + " measured it from build " +
                                it->second.first.substr(0, 12) + ": tune from reports of one build of each plugin");
        }
}

std::optional<std::string> reference_of(const TuneReport& report, const std::string& dtype) {
    if (auto it = report.reference_by_dtype.find(dtype); it != report.reference_by_dtype.end()) return it->second;
    if (auto it = report.reference_by_dtype.find("*"); it != report.reference_by_dtype.end()) return it->second;
    return std::nullopt;
}

std::optional<double> median_of(const TuneReport& report, const std::string& kernel, const MeasuredRow& at) {
    for (const MeasuredRow& row : report.rows)
        if (row.kernel == kernel && row.device == at.device && row.dtype == at.dtype && row.m == at.m &&
            row.n == at.n && row.k == at.k)
            return row.median_ms;
    return std::nullopt;
}

// Every measured shape's winner, per (device, dtype). Ties of the median go to the kernel first by name, so
// the table does not depend on the order of the reports.
bool candidate(const std::vector<std::string>& patterns, const std::string& kernel) {
    if (patterns.empty()) return true;
    for (const std::string& pattern : patterns)
        if (glob_match(pattern, kernel)) return true;
    return false;
}

std::map<Group, std::map<Shape3, Winner>> winners(const std::vector<TuneReport>& reports,
                                                  const std::vector<std::string>& patterns) {
    std::set<std::string> dispatching;
    std::map<std::string, std::set<std::string>> failed;
    for (const TuneReport& report : reports) {
        dispatching.insert(report.dispatching_kernels.begin(), report.dispatching_kernels.end());
        for (const auto& [group, kernels] : report.failed_kernels) failed[group].insert(kernels.begin(), kernels.end());
    }
    std::map<Group, std::map<Shape3, Winner>> out;
    for (const TuneReport& report : reports)
        for (const MeasuredRow& row : report.rows) {
            if (!candidate(patterns, row.kernel) || dispatching.count(row.kernel) ||
                failed[row.device + "/" + row.dtype].count(row.kernel))
                continue;
            auto& shapes = out[{row.device, row.dtype}];
            const Shape3 shape{row.m, row.n, row.k};
            const auto it = shapes.find(shape);
            if (it != shapes.end() &&
                std::tie(it->second.median_ms, it->second.kernel) <= std::tie(row.median_ms, row.kernel))
                continue;
            Winner w{row.kernel, row.median_ms, report.path, std::nullopt, reference_of(report, row.dtype)};
            if (w.reference)
                if (const auto reference_ms = median_of(report, *w.reference, row))
                    w.ratio = *reference_ms / row.median_ms;
            shapes[shape] = w;
        }
    return out;
}

int64_t floor_sqrt(int64_t x) {
    auto r = int64_t(std::sqrt(static_cast<long double>(x)));
    while (r * r > x) --r;
    while ((r + 1) * (r + 1) <= x) ++r;
    return r;
}

// The interval each distinct measured value owns on its axis: split at geometric midpoints, the first from 1,
// the last unbounded (hi unset).
struct Interval {
    int64_t lo;
    std::optional<int64_t> hi;
};
std::vector<Interval> axis_intervals(const std::vector<int64_t>& values) {
    std::vector<Interval> out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        Interval interval{i == 0 ? 1 : floor_sqrt(values[i - 1] * values[i]) + 1, std::nullopt};
        if (i + 1 < values.size()) interval.hi = floor_sqrt(values[i] * values[i + 1]);
        out.push_back(interval);
    }
    return out;
}

json range_json(const Interval& interval) {
    return json::array({interval.lo, interval.hi ? json(*interval.hi) : json(nullptr)});
}

double log2_distance(const Shape3& a, const Shape3& b) {
    const double dm = std::log2(double(a.m)) - std::log2(double(b.m));
    const double dn = std::log2(double(a.n)) - std::log2(double(b.n));
    const double dk = std::log2(double(a.k)) - std::log2(double(b.k));
    return dm * dm + dn * dn + dk * dk;
}

const Shape3& nearest(const std::map<Shape3, Winner>& measured, const Shape3& point) {
    const Shape3* best = nullptr;
    double best_distance = 0;
    for (const auto& [shape, winner] : measured) {
        const double distance = log2_distance(shape, point);
        if (best == nullptr || distance < best_distance) best = &shape, best_distance = distance;
    }
    return *best;
}

json rule_json(const Interval& m, const Interval& n, const Interval& k, const Shape3& source, const Winner& w) {
    json rule = {{"m", range_json(m)},
                 {"n", range_json(n)},
                 {"k", range_json(k)},
                 {"kernel", w.kernel},
                 {"ratio", w.ratio ? json(*w.ratio) : json(nullptr)},
                 {"reference", w.reference ? json(*w.reference) : json(nullptr)},
                 {"class", "nearest measured " + shape_text(source)},
                 {"source", {{"report", w.report}, {"m", source.m}, {"n", source.n}, {"k", source.k}}}};
    return rule;
}

json entry_json(const Group& group, const std::map<Shape3, Winner>& measured) {
    std::set<int64_t> ms, ns, ks;
    std::map<std::string, int> wins;
    json shapes = json::array();
    for (const auto& [shape, w] : measured) {
        ms.insert(shape.m), ns.insert(shape.n), ks.insert(shape.k);
        ++wins[w.kernel];
        shapes.push_back({{"m", shape.m},
                          {"n", shape.n},
                          {"k", shape.k},
                          {"kernel", w.kernel},
                          {"median_ms", w.median_ms},
                          {"ratio", w.ratio ? json(*w.ratio) : json(nullptr)},
                          {"report", w.report}});
    }
    const std::vector<int64_t> m_values(ms.begin(), ms.end()), n_values(ns.begin(), ns.end()),
        k_values(ks.begin(), ks.end());
    const auto m_axis = axis_intervals(m_values), n_axis = axis_intervals(n_values), k_axis = axis_intervals(k_values);
    json rules = json::array();
    for (std::size_t i = 0; i < m_values.size(); ++i)
        for (std::size_t j = 0; j < n_values.size(); ++j)
            for (std::size_t l = 0; l < k_values.size();) {
                const Shape3& source = nearest(measured, {m_values[i], n_values[j], k_values[l]});
                std::size_t last = l;  // boxes along k with the same source merge into one rule
                while (last + 1 < k_values.size() &&
                       !(nearest(measured, {m_values[i], n_values[j], k_values[last + 1]}) < source) &&
                       !(source < nearest(measured, {m_values[i], n_values[j], k_values[last + 1]})))
                    ++last;
                rules.push_back(rule_json(m_axis[i], n_axis[j], Interval{k_axis[l].lo, k_axis[last].hi}, source,
                                          measured.at(source)));
                l = last + 1;
            }
    // The fallback: the kernel that won the most measured shapes (ties: first by name).
    std::string fallback;
    int most = -1;
    for (const auto& [kernel, count] : wins)
        if (count > most) fallback = kernel, most = count;
    return {{"device", group.first},
            {"dtype", group.second},
            {"fallback", fallback},
            {"classes",
             {{"model", "log2-grid-nearest"}, {"m", m_values}, {"n", n_values}, {"k", k_values}, {"measured", shapes}}},
            {"rules", rules}};
}

}  // namespace

json build_dispatch_table(const TuneRequest& request) {
    check_one_build_per_kernel(request.reports);
    json reports = json::array();
    for (const TuneReport& report : request.reports)
        reports.push_back({{"path", report.path}, {"sha256", report.sha256}});
    json tables = json::array();
    for (const auto& [group, measured] : winners(request.reports, request.kernel_patterns))
        if (!measured.empty()) tables.push_back(entry_json(group, measured));
    return {{"kind", "kreg-dispatch-table"},
            {"version", 1},
            {"made_by", {{"kreg_version", request.kreg_version}, {"command", request.command}, {"reports", reports}}},
            {"tables", tables}};
}

}  // namespace kreg::tune
