#include "sweep_rows.hpp"

#include "platform/atomic_replace.hpp"
#include "platform/child_process.hpp"

#include <stdexcept>

namespace kreg::windows_test {
namespace {

using platform::ChildProcess;

std::string last_line(const std::string& text) {
    const auto end = text.find_last_not_of("\r\n");
    if (end == std::string::npos) return "";
    const auto start = text.find_last_of('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1,
                       end - (start == std::string::npos ? 0 : start + 1) + 1);
}

// Runs the probe once: its one JSON line, or the row saying how it ended without one.
nlohmann::json ask(const std::filesystem::path& probe, const std::vector<std::string>& args, double timeout_s,
                   SweepRow& row) {
    ChildProcess child = ChildProcess::start(probe, args);
    std::string line;
    const ChildProcess::Read read = child.read_line(line, timeout_s);
    if (read == ChildProcess::Read::timed_out) child.kill_tree();
    const platform::ChildExit end = child.wait();
    if (read == ChildProcess::Read::line) {
        // A claim: it must be a JSON object, else it is the child's fault.
        nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
        if (reply.is_object()) return reply;
        row.status = "failed";
        row.reason = "the probe's reply is not a JSON object";
        return nullptr;
    }
    row.status = read == ChildProcess::Read::timed_out ? "timeout" : "crashed";
    row.reason =
        read == ChildProcess::Read::timed_out ? "no reply within " + std::to_string(int(timeout_s)) + " s; " : "";
    row.reason += "the probe " + end.describe();
    const std::string said = last_line(child.stderr_tail());
    if (!said.empty()) row.reason += "; its stderr: " + said;
    return nullptr;
}

}  // namespace

std::vector<SweepRow> sweep(const std::filesystem::path& probe, const std::vector<std::filesystem::path>& plugins,
                            int64_t size, double timeout_s) {
    std::vector<SweepRow> rows;
    for (const std::filesystem::path& plugin : plugins) {
        SweepRow listing{plugin.filename().string(), "", "", "", nullptr};
        const nlohmann::json listed = ask(probe, {"list", plugin.string()}, timeout_s, listing);
        if (listed.is_null() || listed.contains("error") || !listed.value("kernels", nlohmann::json()).is_array()) {
            if (listing.status.empty()) {
                listing.status = "failed";
                listing.reason = listed.value("error", std::string("the probe listed no kernels"));
            }
            rows.push_back(listing);
            continue;
        }
        for (const nlohmann::json& kernel : listed["kernels"]) {
            SweepRow row{plugin.filename().string(), kernel.get<std::string>(), "", "", nullptr};
            const std::string n = std::to_string(size);
            const nlohmann::json reply = ask(probe, {"run", plugin.string(), row.kernel, n, n, n}, timeout_s, row);
            if (!reply.is_null() && reply.contains("status")) {
                row.record = reply;
                row.status = reply["status"].get<std::string>();
                row.reason = reply.value("reason", std::string());
            } else if (!reply.is_null()) {
                row.status = "failed";
                row.reason = reply.value("error", std::string("the probe sent no record"));
            }
            rows.push_back(row);
        }
    }
    return rows;
}

void write_report(const std::filesystem::path& path, const std::vector<SweepRow>& rows) {
    nlohmann::json report{{"rows", nlohmann::json::array()}};
    for (const SweepRow& r : rows)
        report["rows"].push_back({{"plugin", r.plugin},
                                  {"kernel", r.kernel},
                                  {"status", r.status},
                                  {"reason", r.reason},
                                  {"record", r.record}});
    const std::string failure = platform::replace_file(path, report.dump(2) + "\n");
    if (!failure.empty()) throw std::runtime_error("cannot write '" + path.string() + "': " + failure);
}

}  // namespace kreg::windows_test
