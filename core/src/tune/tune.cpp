#include "tune/tune.hpp"

#include "config/sweep_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

// Every candidate kernel's time at one measured shape (the lowest over the reports that measured it there),
// with its ratio to the reference from the same report, which it names; the winner is the fastest of them.
struct Timing {
    double median_ms = 0;
    std::optional<double> ratio;
    std::string report;
    std::optional<std::string> reference;
};
struct MeasuredShape {
    Winner winner;
    std::map<std::string, Timing> kernels;
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

std::map<Group, std::map<Shape3, MeasuredShape>> measured_shapes(const std::vector<TuneReport>& reports,
                                                                 const std::vector<std::string>& patterns) {
    std::set<std::string> dispatching;
    std::map<std::string, std::set<std::string>> failed;
    for (const TuneReport& report : reports) {
        dispatching.insert(report.dispatching_kernels.begin(), report.dispatching_kernels.end());
        for (const auto& [group, kernels] : report.failed_kernels) failed[group].insert(kernels.begin(), kernels.end());
    }
    std::map<Group, std::map<Shape3, MeasuredShape>> out;
    for (const TuneReport& report : reports)
        for (const MeasuredRow& row : report.rows) {
            if (!candidate(patterns, row.kernel) || dispatching.count(row.kernel) ||
                failed[row.device + "/" + row.dtype].count(row.kernel))
                continue;
            MeasuredShape& shape = out[{row.device, row.dtype}][Shape3{row.m, row.n, row.k}];
            std::optional<double> ratio;
            const std::optional<std::string> reference = reference_of(report, row.dtype);
            if (reference)
                if (const auto reference_ms = median_of(report, *reference, row)) ratio = *reference_ms / row.median_ms;
            const auto known = shape.kernels.find(row.kernel);
            if (known == shape.kernels.end() || row.median_ms < known->second.median_ms)
                shape.kernels[row.kernel] = {row.median_ms, ratio, report.path, reference};
            const Winner& w = shape.winner;
            if (!w.kernel.empty() && std::tie(w.median_ms, w.kernel) <= std::tie(row.median_ms, row.kernel)) continue;
            shape.winner = Winner{row.kernel, row.median_ms, report.path, ratio, reference};
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

// The measured shapes nearest to a point in log2 space, nearest first (ties: first in (m, n, k) order).
std::vector<Shape3> nearest(const std::map<Shape3, MeasuredShape>& measured, const Shape3& point, std::size_t count) {
    std::vector<std::pair<double, Shape3>> by_distance;
    for (const auto& [shape, times] : measured) by_distance.emplace_back(log2_distance(shape, point), shape);
    std::sort(by_distance.begin(), by_distance.end(), [](const auto& a, const auto& b) {
        return a.first < b.first || (a.first == b.first && a.second < b.second);
    });
    std::vector<Shape3> out;
    for (std::size_t i = 0; i < by_distance.size() && i < count; ++i) out.push_back(by_distance[i].second);
    return out;
}

// What a box of the grid routes to, and from what.
struct Choice {
    std::string kernel;
    Shape3 source;  // the nearest measured shape
    std::optional<double> ratio;
    std::optional<std::string> reference;
    std::string report;
    std::string shape_class;
};

// A measured grid point keeps its own winner. Any other takes, over its kNeighbours nearest measured shapes,
// the kernel whose time is least above the fastest there: the weighted mean of log(its time / the fastest
// time) over the shapes that measured it at all of them, weight 1 / (squared log2 distance + 1/4), so a
// nearer shape counts more and no one shape decides alone (a kernel that won the nearest shape by 1 % but
// lost the next three by 30 % is not chosen). Ties go to the kernel first by name. Chosen by leave-one-out
// on the H200 tuning sweep (docs/DISPATCH.md): each shape routed by a table built without it.
constexpr std::size_t kNeighbours = 4;
constexpr double kDistanceSoftening = 0.25;

Choice choose(const std::map<Shape3, MeasuredShape>& measured, const Shape3& point) {
    const std::vector<Shape3> near = nearest(measured, point, kNeighbours);
    const MeasuredShape& closest = measured.at(near.front());
    const std::string kernel = [&] {
        if (near.size() == 1 || log2_distance(near.front(), point) == 0) return closest.winner.kernel;
        std::optional<std::pair<double, std::string>> best;
        for (const auto& [name, timing] : closest.kernels) {
            double weighted = 0, weights = 0;
            bool everywhere = true;
            for (const Shape3& shape : near) {
                const MeasuredShape& there = measured.at(shape);
                const auto it = there.kernels.find(name);
                if (it == there.kernels.end()) {
                    everywhere = false;
                    break;
                }
                const double weight = 1.0 / (log2_distance(shape, point) + kDistanceSoftening);
                weighted += weight * std::log(it->second.median_ms / there.winner.median_ms);
                weights += weight;
            }
            if (everywhere && (!best || std::make_pair(weighted / weights, name) < *best))
                best = std::make_pair(weighted / weights, name);
        }
        return best ? best->second : closest.winner.kernel;
    }();
    // The chosen kernel was measured at the nearest shape (candidates are taken from it): its ratio there, from
    // the report that measured it.
    const Timing& there = closest.kernels.at(kernel);
    Choice choice{kernel, near.front(), there.ratio, there.reference, there.report, ""};
    choice.shape_class =
        log2_distance(near.front(), point) == 0
            ? "measured " + shape_text(near.front())
            : "nearest measured " + shape_text(near.front()) + " and " + std::to_string(near.size() - 1) + " more";
    return choice;
}

// How well the model generalises, from the measurements alone: each measured shape routed by a table built
// without it, and the fastest kernel's time there over the chosen one's (1: the choice was the fastest).
json leave_one_out(const std::map<Shape3, MeasuredShape>& measured) {
    if (measured.size() < 2) return nullptr;
    double log_sum = 0;
    int within = 0, shapes = 0;
    json worst;
    double worst_share = 2;
    for (const auto& [shape, times] : measured) {
        std::map<Shape3, MeasuredShape> others = measured;
        others.erase(shape);
        const std::string kernel = choose(others, shape).kernel;
        const auto it = times.kernels.find(kernel);
        if (it == times.kernels.end()) continue;  // the choice was not measured here: nothing to compare
        const double share = times.winner.median_ms / it->second.median_ms;
        log_sum += std::log(share);
        within += share >= 0.95;
        ++shapes;
        if (share < worst_share)
            worst_share = share,
            worst = {{"m", shape.m}, {"n", shape.n}, {"k", shape.k}, {"kernel", kernel}, {"of_fastest", share}};
    }
    if (shapes == 0) return nullptr;
    return {{"shapes", shapes},
            {"geomean_of_fastest", std::exp(log_sum / shapes)},
            {"within_5_percent", within},
            {"worst", worst}};
}

json rule_json(const Interval& m, const Interval& n, const Interval& k, const Choice& c) {
    json rule = {{"m", range_json(m)},
                 {"n", range_json(n)},
                 {"k", range_json(k)},
                 {"kernel", c.kernel},
                 {"ratio", c.ratio ? json(*c.ratio) : json(nullptr)},
                 {"reference", c.reference ? json(*c.reference) : json(nullptr)},
                 {"class", c.shape_class},
                 {"source", {{"report", c.report}, {"m", c.source.m}, {"n", c.source.n}, {"k", c.source.k}}}};
    return rule;
}

json entry_json(const Group& group, const std::map<Shape3, MeasuredShape>& measured) {
    std::set<int64_t> ms, ns, ks;
    std::map<std::string, int> wins;
    json shapes = json::array();
    for (const auto& [shape, times] : measured) {
        const Winner& w = times.winner;
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
                const Choice choice = choose(measured, {m_values[i], n_values[j], k_values[l]});
                std::size_t last = l;  // boxes along k with one kernel and one nearest shape merge into one rule
                while (last + 1 < k_values.size()) {
                    const Choice next = choose(measured, {m_values[i], n_values[j], k_values[last + 1]});
                    if (next.kernel != choice.kernel || next.shape_class != choice.shape_class) break;
                    ++last;
                }
                rules.push_back(rule_json(m_axis[i], n_axis[j], Interval{k_axis[l].lo, k_axis[last].hi}, choice));
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
             {{"model", "log2-grid-knn4"},
              {"m", m_values},
              {"n", n_values},
              {"k", k_values},
              {"measured", shapes},
              {"leave_one_out", leave_one_out(measured)}}},
            {"rules", rules}};
}

}  // namespace

json build_dispatch_table(const TuneRequest& request) {
    check_one_build_per_kernel(request.reports);
    json reports = json::array();
    for (const TuneReport& report : request.reports)
        reports.push_back({{"path", report.path}, {"sha256", report.sha256}});
    json tables = json::array();
    for (const auto& [group, measured] : measured_shapes(request.reports, request.kernel_patterns))
        if (!measured.empty()) tables.push_back(entry_json(group, measured));
    return {{"kind", "kreg-dispatch-table"},
            {"version", 1},
            {"made_by", {{"kreg_version", request.kreg_version}, {"command", request.command}, {"reports", reports}}},
            {"tables", tables}};
}

std::string leave_one_out_text(const json& entry) {
    const json* loo = entry.contains("classes") && entry["classes"].contains("leave_one_out")
                          ? &entry["classes"]["leave_one_out"]
                          : nullptr;
    if (loo == nullptr || !loo->is_object()) return "";
    char buf[160];
    std::snprintf(buf, sizeof buf, "; leave-one-out: %.3f of the fastest (geometric mean), %d of %d shapes within 5 %%",
                  (*loo)["geomean_of_fastest"].get<double>(), (*loo)["within_5_percent"].get<int>(),
                  (*loo)["shapes"].get<int>());
    return buf;
}

}  // namespace kreg::tune
