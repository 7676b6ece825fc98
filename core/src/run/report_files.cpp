#include "run/report_files.hpp"

#include "common/sha256.hpp"
#include "platform/host.hpp"
#include "report/markup_text.hpp"  // shell_word

#include <ctime>
#include <system_error>

namespace kreg {
namespace fs = std::filesystem;

namespace {

std::string timestamp_for_file() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    tm = platform::utc_calendar(t);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
        text.replace(at, from.size(), to);
    return text;
}

bool present(const fs::path& p) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(p, ec));
}

}  // namespace

ReportTargets choose_report_targets(const std::string& json_template, const std::string& csv_template) {
    const std::string time = timestamp_for_file();
    const bool timestamped = json_template.find(kTimePlaceholder) != std::string::npos ||
                             csv_template.find(kTimePlaceholder) != std::string::npos;
    ReportTargets t;
    for (int n = 1; n <= 1000; ++n) {
        const std::string stamp = n == 1 ? time : time + "-" + std::to_string(n);
        t.json = replace_all(json_template, kTimePlaceholder, stamp);
        t.csv = replace_all(csv_template, kTimePlaceholder, stamp);
        t.journal = journal_path_for(t.json);
        if (!timestamped || (!present(t.json) && !present(t.csv) && !present(t.journal))) break;
    }
    return t;
}

std::string csv_beside(const std::string& json_path) {
    const std::string csv = fs::path(json_path).replace_extension(".csv").string();
    return csv == json_path ? json_path + ".csv" : csv;
}

std::string why_not_overwrite(const ReportTargets& targets, bool force, const std::string& runner) {
    if (force) return "";
    for (const fs::path& p : {targets.json, targets.csv, targets.journal}) {
        if (!present(p)) continue;
        std::string why = p.string() + " exists";
        std::string way_out = "pass --force to overwrite it, or name other reports (--json/--csv, or a " +
                              std::string(kTimePlaceholder) + " in the path)";
        if (present(targets.journal)) {
            try {
                const JournalContents j = read_journal(targets.journal);
                const size_t planned = j.header.value("planned", size_t(0));
                if (j.records.size() >= planned) {
                    why += " (a complete report of " + std::to_string(planned) + " rows)";
                } else {
                    why += " (an interrupted sweep: " + std::to_string(j.records.size()) + " of " +
                           std::to_string(planned) + " rows)";
                    way_out = "continue it with: " + shell_word(runner) + " --resume " +
                              shell_word(targets.json.string()) + "; or " + way_out;
                }
            } catch (const std::exception&) {
                // Not a journal we can read: the plain refusal says enough.
            }
        }
        return why + "; " + way_out;
    }
    return "";
}

std::string plan_fingerprint(const std::vector<PlannedJob>& plan) {
    std::string all;
    for (const PlannedJob& p : plan) {
        all += nlohmann::json(p.job).dump();
        all += '\n';
    }
    return sha256_hex(all);
}

std::optional<ResumeState> read_resume_state(const std::string& report, std::string& error) {
    std::error_code ec;
    const fs::path given = fs::absolute(report, ec);
    ResumeState s;
    s.journal_path = is_journal_path(given) ? given : journal_path_for(given);
    if (!present(s.journal_path)) {
        error = "cannot resume " + report + ": no journal " + s.journal_path.string() +
                (present(given) ? " next to it (a report written before journals, or its journal was removed)" : "");
        return std::nullopt;
    }
    try {
        s.contents = read_journal(s.journal_path);
    } catch (const std::exception& e) {
        error = "cannot resume " + report + ": " + e.what();
        return std::nullopt;
    }
    const nlohmann::json& h = s.contents.header;
    for (const char* key : {"argv", "cwd", "json", "csv", "planned", "plan_sha256", "meta"})
        if (!h.contains(key)) {
            error = "cannot resume " + report + ": journal " + s.journal_path.string() + ":1: no \"" + key +
                    "\" in its header, so the plan cannot be reconstructed";
            return std::nullopt;
        }
    if (!h["argv"].is_array() || h["argv"].empty() || !h["cwd"].is_string() || !h["planned"].is_number_unsigned()) {
        error = "cannot resume " + report + ": journal " + s.journal_path.string() + ":1: malformed header";
        return std::nullopt;
    }
    return s;
}

}  // namespace kreg
