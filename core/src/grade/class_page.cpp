#include "grade/class_page.hpp"

#include "common/sha256.hpp"
#include "common/text.hpp"
#include "grade/student_view.hpp"
#include "report/atomic_file.hpp"
#include "report/markup_text.hpp"
#include "report/printable_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace kreg {

namespace {

// The only script the page runs; its hash goes into the page's Content Security Policy. It sorts the
// gradebook table by a clicked header (again: the other way) or by index.html#sort=KEY:asc|desc, ties by
// student, and marks <html> once it has run.
const char* const kScript = R"JS((function () {
  'use strict';
  var table = document.getElementById('gradebook');
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function value(row, i, numeric) {
    var cell = row.cells[i];
    var v = cell.hasAttribute('data-sort') ? cell.getAttribute('data-sort') : cell.textContent;
    if (!numeric) return v.toLowerCase();
    var n = parseFloat(v);
    return isNaN(n) ? -Infinity : n;
  }
  function sortBy(i, descending) {
    var numeric = heads[i].getAttribute('data-type') === 'number';
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a, i, numeric), y = value(b, i, numeric);
      if (x !== y) return (x < y ? -1 : 1) * (descending ? -1 : 1);
      var p = a.getAttribute('data-student'), q = b.getAttribute('data-student');
      return p < q ? -1 : p > q ? 1 : 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    for (var j = 0; j < heads.length; ++j) heads[j].removeAttribute('aria-sort');
    heads[i].setAttribute('aria-sort', descending ? 'descending' : 'ascending');
  }
  function indexOfKey(key) {
    for (var j = 0; j < heads.length; ++j) if (heads[j].getAttribute('data-key') === key) return j;
    return -1;
  }
  Array.prototype.forEach.call(heads, function (head, i) {
    head.addEventListener('click', function () {
      var descending = head.getAttribute('aria-sort') === 'ascending';
      sortBy(i, descending);
      try {
        history.replaceState(null, '', '#sort=' + head.getAttribute('data-key') + ':' + (descending ? 'desc' : 'asc'));
      } catch (e) { /* some browsers refuse history on file:// pages; the sort stands */ }
    });
  });
  var wanted = /^#sort=([A-Za-z0-9_-]+):(asc|desc)$/.exec(location.hash);
  if (wanted && indexOfKey(wanted[1]) >= 0) sortBy(indexOfKey(wanted[1]), wanted[2] === 'desc');
  document.documentElement.setAttribute('data-kreg-ready', String(body.rows.length));
})();
)JS";

const char* const kStyle =
    "body{font:15px/1.45 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
    "th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}th{background:#f3f3f3}"
    "#gradebook th{cursor:pointer;user-select:none}#gradebook th[aria-sort=ascending]::after{content:' \\25B2'}"
    "#gradebook th[aria-sort=descending]::after{content:' "
    "\\25BC'}td.num{text-align:right}td.summary{white-space:pre-line;"
    "max-width:40em;font-size:.9em}.board{margin:1em 0 2em}.bar{fill:#4a7ab5}.axis{font-size:11px;fill:#444}";

std::string base64(const std::string& bytes) {
    static const char* const kDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const uint32_t n = (uint32_t(uint8_t(bytes[i])) << 16) |
                           (i + 1 < bytes.size() ? uint32_t(uint8_t(bytes[i + 1])) << 8 : 0) |
                           (i + 2 < bytes.size() ? uint32_t(uint8_t(bytes[i + 2])) : 0);
        out += kDigits[(n >> 18) & 63];
        out += kDigits[(n >> 12) & 63];
        out += i + 1 < bytes.size() ? kDigits[(n >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? kDigits[n & 63] : '=';
    }
    return out;
}

// CSP's 'sha256-...' source: the base64 of the script's digest.
std::string script_hash(const std::string& script) {
    const std::string hex = sha256_hex(script);
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes += char(std::stoi(hex.substr(i, 2), nullptr, 16));
    return "sha256-" + base64(bytes);
}

std::string e(const std::string& text) { return html_escape(printable_utf8(text, 4000)); }

std::string number(double v, int precision) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", precision, v);
    return buffer;
}

// A tier's measured value for the board: the ratio to its reference, or the fraction of the copy
// ceiling, with its interval; none when the tier was not measured, not believed or flagged.
struct Measured {
    double value = 0, low = 0, high = 0;
    bool met = false;
};

std::optional<Measured> measured(const CheckResult& check) {
    const nlohmann::json& ev = check.evidence;
    if (!ev.is_object() || ev.contains("flag")) return std::nullopt;
    const char* key = ev.contains("ratio") ? "ratio" : "fraction_of_copy";
    const char* interval = ev.contains("ratio") ? "ratio_interval" : "fraction_interval";
    if (!ev.contains(key) || !ev[key].is_number()) return std::nullopt;
    Measured m{ev[key].get<double>(), 0, 0, check.passed};
    if (!std::isfinite(m.value)) return std::nullopt;
    if (ev.contains(interval) && ev[interval].is_object()) {
        m.low = ev[interval].value("low", m.value);
        m.high = ev[interval].value("high", m.value);
    } else {
        m.low = m.high = m.value;
    }
    return m;
}

std::string histogram_svg(const std::vector<StudentResult>& views) {
    constexpr int kBins = 10, kWidth = 440, kHeight = 170, kBarArea = 120, kLeft = 30;
    int counts[kBins] = {};
    for (const auto& v : views) {
        const double percent = v.max_score > 0 ? 100.0 * v.score / v.max_score : 0;
        counts[std::clamp(int(percent / 10), 0, kBins - 1)]++;
    }
    const int most = std::max(1, *std::max_element(counts, counts + kBins));
    std::string svg = "<svg id=\"histogram\" role=\"img\" aria-label=\"score histogram\" width=\"" +
                      std::to_string(kWidth) + "\" height=\"" + std::to_string(kHeight) +
                      "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
    const int slot = (kWidth - kLeft) / kBins;
    for (int b = 0; b < kBins; ++b) {
        const int h = counts[b] * kBarArea / most, x = kLeft + b * slot, y = 10 + kBarArea - h;
        svg += "<rect class=\"bar\" data-bin=\"" + std::to_string(b) + "\" data-count=\"" + std::to_string(counts[b]) +
               "\" x=\"" + std::to_string(x + 2) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
               std::to_string(slot - 4) + "\" height=\"" + std::to_string(h) + "\"><title>" + std::to_string(b * 10) +
               (b == kBins - 1 ? "-100 %: " : "-" + std::to_string(b * 10 + 10) + " %: ") + std::to_string(counts[b]) +
               "</title></rect>\n";
        if (counts[b] > 0)
            svg += "<text class=\"axis\" x=\"" + std::to_string(x + slot / 2) + "\" y=\"" + std::to_string(y - 2) +
                   "\" text-anchor=\"middle\">" + std::to_string(counts[b]) + "</text>\n";
        svg += "<text class=\"axis\" x=\"" + std::to_string(x + slot / 2) + "\" y=\"" + std::to_string(kBarArea + 26) +
               "\" text-anchor=\"middle\">" + std::to_string(b * 10) + "</text>\n";
    }
    svg += "<text class=\"axis\" x=\"" + std::to_string(kWidth / 2) + "\" y=\"" + std::to_string(kHeight - 4) +
           "\" text-anchor=\"middle\">score, % of the maximum (bins of 10; 100 in the last)</text>\n</svg>\n";
    return svg;
}

std::string boards(const std::vector<StudentResult>& views, const Rubric& rubric) {
    if (!rubric.leaderboard.show) return "<p>The rubric hides the speed-up boards.</p>\n";
    std::string html;
    for (const auto& tier : rubric.performance) {
        if (is_hidden(CheckResult{"performance", tier.name, 0, 0, false, "", nullptr}, rubric)) continue;
        struct Entry {
            std::string student;
            Measured m;
        };
        std::vector<Entry> entries;
        std::size_t unmeasured = 0;
        for (const auto& v : views) {
            if (std::find(rubric.leaderboard.opt_out.begin(), rubric.leaderboard.opt_out.end(), v.student) !=
                rubric.leaderboard.opt_out.end())
                continue;
            std::optional<Measured> m;
            for (const auto& c : v.checks)
                if (c.kind == "performance" && c.name == tier.name) m = measured(c);
            if (m)
                entries.push_back({v.student, *m});
            else
                ++unmeasured;
        }
        std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
            return a.m.value != b.m.value ? a.m.value > b.m.value : a.student < b.student;
        });
        const std::string what =
            tier.against_copy_ceiling()
                ? "fraction of the copy bandwidth, needs " + number(*tier.min_fraction_of_copy, 2)
                : "speed-up against " + tier.reference + ", needs " + number(tier.min_ratio, 2) + "x";
        html += "<section class=\"board\" data-tier=\"" + e(tier.name) + "\"><h3>" + e(tier.name) + "</h3>\n<p>" +
                e(what) + " at " + e(to_string(tier.shape)) + "; " + std::to_string(entries.size()) + " measured" +
                (unmeasured
                     ? ", " + std::to_string(unmeasured) + " not (the tier did not run, or its time was not believed)"
                     : "") +
                ".</p>\n<table><thead><tr><th>rank</th><th>student</th><th>" +
                (tier.against_copy_ceiling() ? "fraction" : "ratio") +
                "</th><th>95 % interval</th><th>met</th></tr></thead><tbody>\n";
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const Entry& entry = entries[i];
            html += "<tr data-student=\"" + e(entry.student) + "\"><td class=\"num\">" + std::to_string(i + 1) +
                    "</td><td><a href=\"student-view/" + e(entry.student) + ".html\">" + e(entry.student) +
                    "</a></td><td class=\"num\">" + number(entry.m.value, 3) + "</td><td>[" + number(entry.m.low, 3) +
                    ", " + number(entry.m.high, 3) + "]</td><td>" + (entry.m.met ? "yes" : "no") + "</td></tr>\n";
        }
        html += "</tbody></table></section>\n";
    }
    return html;
}

}  // namespace

std::string class_page_html(const std::vector<StudentResult>& staff_results, const Rubric& rubric) {
    std::vector<StudentResult> views;
    for (const auto& r : staff_results) views.push_back(student_view(r, rubric));  // nothing hidden past here
    const std::vector<GradebookColumn> columns = gradebook_columns(rubric);
    double sum = 0, max_sum = 0;
    for (const auto& v : views) {
        sum += v.score;
        max_sum += v.max_score;
    }
    const std::string script = kScript;
    std::string h =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src '" +
        script_hash(script) + "'\">\n<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>" +
        e(rubric.name) + ": class page</title>\n<style>" + kStyle + "</style></head>\n<body>\n";
    h += "<h1>" + e(rubric.name) + "</h1>\n<p>" + std::to_string(views.size()) + " students" +
         (views.empty() ? ""
                        : ", mean score " + format_points(sum / double(views.size())) + " of " +
                              format_points(max_sum / double(views.size()))) +
         ". Each student's name links to their feedback.</p>\n";

    h += "<h2>Gradebook</h2>\n<p>Click a column to sort by it (again for the other way).</p>\n<table "
         "id=\"gradebook\"><thead><tr>"
         "<th data-key=\"student\">student</th><th data-key=\"score\" data-type=\"number\">score</th>"
         "<th data-key=\"max\" data-type=\"number\">max</th><th data-key=\"status\">status</th>";
    for (std::size_t i = 0; i < columns.size(); ++i)
        h += "<th data-key=\"c" + std::to_string(i) + "\" data-type=\"number\">" + e(columns[i].header) + "</th>";
    h += "<th data-key=\"summary\">summary</th></tr></thead>\n<tbody>\n";
    for (const auto& v : views) {
        h += "<tr data-student=\"" + e(v.student) + "\"><td><a href=\"student-view/" + e(v.student) + ".html\">" +
             e(v.student) + "</a></td><td class=\"num\">" + format_points(v.score) + "</td><td class=\"num\">" +
             format_points(v.max_score) + "</td><td>" + e(v.status) + "</td>";
        // Points only, from staff's checks as gradebook.csv sums them: a hidden column names no case.
        const StudentResult& staff = staff_results[std::size_t(&v - views.data())];
        for (const auto& column : columns) {
            double points = 0;
            bool found = false;
            for (const auto& c : staff.checks)
                if (c.kind == column.kind &&
                    std::find(column.names.begin(), column.names.end(), c.name) != column.names.end()) {
                    points += c.points;
                    found = true;
                }
            h += found ? "<td class=\"num\">" + format_points(points) + "</td>"
                       : "<td class=\"num\" data-sort=\"\"></td>";
        }
        h += "<td class=\"summary\">" + html_escape(printable_lines(v.summary, 4000)) + "</td></tr>\n";
    }
    h += "</tbody></table>\n";
    h += "<h2>Scores</h2>\n" + histogram_svg(views);
    h += "<h2>Speed-up boards</h2>\n" + boards(views, rubric);
    h += "<script>" + script + "</script>\n</body></html>\n";
    return h;
}

void write_class_page(const Gradebook& gradebook, const Rubric& rubric) {
    write_file_atomically(gradebook.dir() / "index.html", class_page_html(gradebook.all(), rubric));
}

}  // namespace kreg
