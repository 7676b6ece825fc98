#include "compare/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace kreg {
namespace {

// Ranks (1-based, ties get their mean rank) of a followed by b. Also says whether any value is tied and
// gives the tie term sum(t^3 - t) over groups of t equal values, for the variance of U.
struct Ranks {
    std::vector<double> rank;
    bool ties = false;
    double tie_term = 0;
};

Ranks rank_all(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<std::pair<double, std::size_t>> all;
    all.reserve(a.size() + b.size());
    for (std::size_t i = 0; i < a.size(); ++i) all.emplace_back(a[i], i);
    for (std::size_t i = 0; i < b.size(); ++i) all.emplace_back(b[i], a.size() + i);
    std::sort(all.begin(), all.end());
    Ranks r;
    r.rank.resize(all.size());
    for (std::size_t i = 0; i < all.size();) {
        std::size_t j = i;
        while (j < all.size() && all[j].first == all[i].first) ++j;
        const double t = double(j - i);
        const double mean_rank = (double(i + 1) + double(j)) / 2.0;
        for (std::size_t k = i; k < j; ++k) r.rank[all[k].second] = mean_rank;
        if (t > 1) {
            r.ties = true;
            r.tie_term += t * t * t - t;
        }
        i = j;
    }
    return r;
}

// P(U <= u) and P(U >= u) under the null hypothesis, from the exact distribution of U for set sizes m
// and n without ties: the number of m-subsets of ranks 1..m+n with each rank sum, counted by dynamic
// programming (counts up to C(100, 50) ~ 1e29 are exact enough in doubles for a p-value).
std::pair<double, double> exact_tails(std::size_t m, std::size_t n, double u) {
    const std::size_t max_u = m * n;
    // count[k][s]: subsets of size k of the ranks seen so far whose U-contribution (rank sum minus the
    // smallest possible, k(k+1)/2) is s. Adding rank r as the k-th element adds r - k to s.
    std::vector<std::vector<double>> count(m + 1, std::vector<double>(max_u + 1, 0.0));
    count[0][0] = 1.0;
    for (std::size_t r = 1; r <= m + n; ++r) {
        for (std::size_t k = std::min(m, r); k >= 1; --k) {
            const std::size_t add = r - k;  // how far this element sits above its minimal rank
            if (add > n) continue;
            for (std::size_t s = max_u; s + 1 > add; --s) count[k][s] += count[k - 1][s - add];
        }
    }
    const std::vector<double>& dist = count[m];
    const double total = std::accumulate(dist.begin(), dist.end(), 0.0);
    double below = 0, above = 0;
    for (std::size_t s = 0; s <= max_u; ++s) {
        if (double(s) <= u + 1e-9) below += dist[s];
        if (double(s) >= u - 1e-9) above += dist[s];
    }
    return {below / total, above / total};
}

}  // namespace

RankTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
    RankTest t;
    if (a.empty() || b.empty()) return t;
    const Ranks r = rank_all(a, b);
    const double na = double(a.size()), nb = double(b.size());
    const double rank_sum_a = std::accumulate(r.rank.begin(), r.rank.begin() + long(a.size()), 0.0);
    t.u = rank_sum_a - na * (na + 1) / 2;
    if (!r.ties && a.size() <= kMaxExactSamples && b.size() <= kMaxExactSamples) {
        const auto [below, above] = exact_tails(a.size(), b.size(), t.u);
        t.p_value = std::min(1.0, 2.0 * std::min(below, above));
        t.exact = true;
        return t;
    }
    const double n = na + nb;
    const double variance = na * nb / 12.0 * ((n + 1) - r.tie_term / (n * (n - 1)));
    if (variance <= 0) return t;  // every value equal: no evidence of any difference
    const double distance = std::max(0.0, std::abs(t.u - na * nb / 2) - 0.5);
    t.p_value = std::min(1.0, std::erfc(distance / std::sqrt(variance) / std::sqrt(2.0)));
    return t;
}

double median_of(std::vector<double> values) {
    if (values.empty()) return 0;
    const std::size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + long(mid), values.end());
    const double upper = values[mid];
    if (values.size() % 2 == 1) return upper;
    const double lower = *std::max_element(values.begin(), values.begin() + long(mid));
    return (lower + upper) / 2;
}

}  // namespace kreg
