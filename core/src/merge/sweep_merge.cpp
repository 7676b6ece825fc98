#include "merge/sweep_merge.hpp"

#include "common/types.hpp"
#include "merge/shard.hpp"
#include "report/journal.hpp"
#include "report/report_writer.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

namespace kreg {
namespace fs = std::filesystem;

namespace {

// One shard as read: its journal's header and rows, and what its meta says about the slice.
struct ShardRead {
    fs::path given;    // as on the command line
    fs::path journal;  // absolute
    nlohmann::json header;
    std::vector<Record> records;
    SweepShardMeta shard;
    Baseline baseline;
};

std::string short_sha(const std::string& sha) { return sha.substr(0, 12) + (sha.size() > 12 ? "..." : ""); }

// The JSON report of a shard: the file given, or the one its journal header names (relative to its cwd).
fs::path json_report_of(const ShardRead& s) {
    if (!is_journal_path(s.given)) return s.given;
    fs::path json = s.header.value("json", "");
    if (json.is_relative()) json = fs::path(s.header.value("cwd", "")) / json;
    return json;
}

std::optional<ShardRead> read_shard(const fs::path& given, std::vector<MergeProblem>& problems) {
    auto refuse = [&](const std::string& what) {
        problems.push_back({MergeProblem::Kind::mismatch, given.string() + ": " + what, ""});
        return std::nullopt;
    };
    ShardRead s;
    s.given = given;
    std::error_code ec;
    const fs::path absolute = fs::absolute(given, ec);
    s.journal = is_journal_path(absolute) ? absolute : journal_path_for(absolute);
    if (!fs::exists(absolute, ec)) return refuse("no such file");
    if (!fs::is_regular_file(s.journal, ec))
        return refuse("no journal " + s.journal.string() +
                      " next to it (not a report of this kreg, or its journal was removed)");
    JournalContents contents;
    try {
        contents = read_journal(s.journal);
    } catch (const std::exception& e) {
        return refuse(e.what());
    }
    s.header = std::move(contents.header);
    s.records = std::move(contents.records);
    for (const char* key : {"argv", "cwd", "planned", "plan_sha256", "meta"})
        if (!s.header.contains(key))
            return refuse(s.journal.string() + ":1: no \"" + std::string(key) + "\" in the journal's header");
    if (!s.header["argv"].is_array() || !s.header["cwd"].is_string() || !s.header["planned"].is_number_unsigned() ||
        !s.header["meta"].is_object())
        return refuse(s.journal.string() + ":1: malformed journal header");
    const nlohmann::json& meta = s.header["meta"];
    if (!meta.contains("shard"))
        return refuse("not a shard's report: its meta has no \"shard\" (it was not run with --shard I/K)");
    try {
        s.shard = sweep_shard_meta_from_json(meta["shard"]);
    } catch (const std::exception& e) {
        return refuse(e.what());
    }
    const fs::path json = json_report_of(s);
    try {
        std::ifstream in(json, std::ios::binary);
        if (!in) throw std::runtime_error("cannot be opened");
        const nlohmann::json report = nlohmann::json::parse(in);
        s.baseline = baseline_from_json(report.contains("baseline") ? report["baseline"] : nlohmann::json());
    } catch (const std::exception& e) {
        return refuse("its JSON report " + json.string() + " (for /baseline): " + e.what());
    }
    return s;
}

// What two shards of one sweep must agree on; "" when they do.
std::string disagreement(const ShardRead& a, const ShardRead& b) {
    const nlohmann::json& ma = a.header["meta"];
    const nlohmann::json& mb = b.header["meta"];
    if (a.shard.plan_sha256 != b.shard.plan_sha256 || a.shard.plan_size != b.shard.plan_size)
        return "comes from another plan than " + b.given.string() + " (" + std::to_string(a.shard.plan_size) +
               " jobs, sha256 " + short_sha(a.shard.plan_sha256) + " here; " + std::to_string(b.shard.plan_size) +
               " jobs, sha256 " + short_sha(b.shard.plan_sha256) + " there)";
    if (a.shard.config_sha256 != b.shard.config_sha256)
        return "comes from another config than " + b.given.string() + " (config sha256 " +
               short_sha(a.shard.config_sha256) + " here, " + short_sha(b.shard.config_sha256) + " there)";
    for (const char* key : {"kreg_version", "git_sha"})
        if (ma.value(key, "") != mb.value(key, ""))
            return std::string("was made by another kreg than ") + b.given.string() + " (" + key + " " +
                   ma.value(key, "?") + " here, " + mb.value(key, "?") + " there)";
    std::set<std::pair<std::string, std::string>> pa, pb;
    for (const auto& p : ma.value("plugins", nlohmann::json::array()))
        pa.insert({p.value("path", ""), p.value("sha256", "")});
    for (const auto& p : mb.value("plugins", nlohmann::json::array()))
        pb.insert({p.value("path", ""), p.value("sha256", "")});
    if (pa != pb)
        return "loaded other plugin builds than " + b.given.string() + " (the plugins' paths or sha256 differ)";
    if (a.baseline != b.baseline) return "has another baseline than " + b.given.string();
    return "";
}

// The recorded command line without its --shard option: the unsharded command.
std::vector<std::string> argv_without_shard(const std::vector<std::string>& recorded) {
    std::vector<std::string> argv;
    for (size_t i = 0; i < recorded.size(); ++i) {
        if (recorded[i] == "--shard")
            ++i;
        else if (recorded[i].rfind("--shard=", 0) != 0)
            argv.push_back(recorded[i]);
    }
    return argv;
}

// The merged meta: the first shard's, as the unsharded command would have written it, plus where it came from.
nlohmann::json merged_meta(const ShardRead& reference, const std::map<int, const ShardRead*>& by_index, int expect,
                           const std::vector<std::string>& argv) {
    nlohmann::json meta = reference.header["meta"];
    meta.erase("shard");
    meta.erase("progress");
    meta["argv"] = argv;
    nlohmann::json from = nlohmann::json::array();
    for (const auto& [index, s] : by_index) {
        const nlohmann::json& m = s->header["meta"];
        from.push_back({{"index", index},
                        {"report", fs::absolute(s->given).lexically_normal().string()},
                        {"argv", s->header["argv"]},
                        {"timestamp", m.value("timestamp", "")},
                        {"host", m.value("host", nlohmann::json::object())},
                        {"rows", s->records.size()}});
    }
    meta["merged_from"] = {{"count", expect},
                           {"plan_size", reference.shard.plan_size},
                           {"plan_sha256", reference.shard.plan_sha256},
                           {"config_sha256", reference.shard.config_sha256},
                           {"shards", from}};
    return meta;
}

}  // namespace

Baseline baseline_from_json(const nlohmann::json& j) {
    if (j.is_null()) return Baseline();
    if (j.is_string()) return Baseline::same_for_all(j.get<std::string>());
    if (!j.is_object())
        throw std::invalid_argument("/baseline: expected null, a kernel name or {dtype: kernel}, found " + j.dump());
    std::map<DType, std::string> kernels;
    for (const auto& [key, value] : j.items()) {
        const auto dtype = parse_dtype(key);
        if (!dtype) throw std::invalid_argument("/baseline/" + key + ": not a dtype");
        if (!value.is_string())
            throw std::invalid_argument("/baseline/" + key + ": expected a kernel name, found " + value.dump());
        kernels[*dtype] = value.get<std::string>();
    }
    return Baseline::per_dtype(std::move(kernels));
}

SweepMerge merge_sweep_shards(int expect, const std::vector<fs::path>& reports) {
    SweepMerge out;
    auto& problems = out.problems;
    auto mismatch = [&](const fs::path& file, const std::string& what) {
        problems.push_back({MergeProblem::Kind::mismatch, file.string() + ": " + what, ""});
    };
    std::vector<ShardRead> shards;
    for (const auto& r : reports)
        if (auto s = read_shard(r, problems)) shards.push_back(std::move(*s));
    std::stable_sort(shards.begin(), shards.end(),
                     [](const ShardRead& a, const ShardRead& b) { return a.shard.index < b.shard.index; });

    std::map<int, const ShardRead*> by_index;
    const ShardRead* reference = nullptr;
    for (const ShardRead& s : shards) {
        if (s.shard.count != expect) {
            mismatch(s.given, "is shard " + std::to_string(s.shard.index) + " of " + std::to_string(s.shard.count) +
                                  ", not of --expect " + std::to_string(expect));
            continue;
        }
        if (reference) {
            if (std::string why = disagreement(s, *reference); !why.empty()) {
                mismatch(s.given, why);
                continue;
            }
        } else {
            reference = &s;
        }
        const auto [at, fresh] = by_index.emplace(s.shard.index, &s);
        if (!fresh) {
            mismatch(s.given, "is shard " + std::to_string(s.shard.index) + "/" + std::to_string(expect) +
                                  " again (so is " + at->second->given.string() + "); give each shard once");
            continue;
        }
        // Every row must be a job of this shard's slice, and the journal must say the slice's size.
        const uint64_t owned = jobs_in_shard(s.shard.plan_size, s.shard.index, s.shard.count);
        if (s.header["planned"].get<uint64_t>() != owned)
            mismatch(s.given, "plans " + std::to_string(s.header["planned"].get<uint64_t>()) + " jobs, but shard " +
                                  std::to_string(s.shard.index) + "/" + std::to_string(s.shard.count) + " of a " +
                                  std::to_string(s.shard.plan_size) + "-job plan has " + std::to_string(owned));
        std::set<uint64_t> ids;
        for (const Record& r : s.records) {
            if (r.job_id >= s.shard.plan_size || r.job_id % uint64_t(s.shard.count) != uint64_t(s.shard.index - 1)) {
                mismatch(s.given, "holds job " + std::to_string(r.job_id) + ", which is not in shard " +
                                      std::to_string(s.shard.index) + "/" + std::to_string(s.shard.count) + " of a " +
                                      std::to_string(s.shard.plan_size) + "-job plan");
                break;
            }
            ids.insert(r.job_id);
        }
        if (ids.size() < owned) {
            const std::string runner = s.header["argv"].empty() ? "runner" : s.header["argv"][0].get<std::string>();
            problems.push_back({MergeProblem::Kind::incomplete,
                                s.given.string() + ": shard " + std::to_string(s.shard.index) + "/" +
                                    std::to_string(expect) + " is incomplete (" + std::to_string(ids.size()) + " of " +
                                    std::to_string(owned) + " rows)",
                                shell_command(s.shard.cwd, {runner, "--resume", fs::absolute(s.given).string()})});
        }
    }
    if (reference) {
        const std::vector<std::string> argv = reference->header["argv"].get<std::vector<std::string>>();
        for (int i = 1; i <= expect; ++i)
            if (!by_index.count(i))
                problems.push_back({MergeProblem::Kind::incomplete,
                                    "shard " + std::to_string(i) + "/" + std::to_string(expect) +
                                        " is missing (no report given for it)",
                                    shell_command(reference->shard.cwd, argv_with_shard(argv, i, expect))});
    } else if (problems.empty()) {
        problems.push_back({MergeProblem::Kind::mismatch, "no shard reports given", ""});
    }
    if (!problems.empty()) return out;

    // Every job once: shards own disjoint slices, so a repeat or a gap means a report was tampered with.
    std::map<uint64_t, const ShardRead*> owner;
    for (const auto& [index, s] : by_index)
        for (const Record& r : s->records) {
            const auto [at, fresh] = owner.emplace(r.job_id, s);
            if (!fresh && at->second != s)
                mismatch(s->given,
                         "job " + std::to_string(r.job_id) + " also has a row in " + at->second->given.string());
            else if (fresh)
                out.records.push_back(r);
        }
    for (uint64_t id = 0; id < reference->shard.plan_size; ++id)
        if (!owner.count(id)) mismatch(reference->given, "job " + std::to_string(id) + " of the plan is in no shard");
    if (!problems.empty()) return out;
    std::sort(out.records.begin(), out.records.end(),
              [](const Record& a, const Record& b) { return a.job_id < b.job_id; });

    const std::vector<std::string> argv = argv_without_shard(reference->header["argv"].get<std::vector<std::string>>());
    const nlohmann::json meta = merged_meta(*reference, by_index, expect, argv);
    out.meta = meta;
    out.baseline = reference->baseline;
    out.header = {{"argv", argv},
                  {"cwd", reference->shard.cwd},
                  {"planned", reference->shard.plan_size},
                  {"plan_sha256", reference->shard.plan_sha256},
                  {"meta", meta}};
    return out;
}

void write_sweep_merge(const SweepMerge& merge, const fs::path& json, const fs::path& csv, bool force) {
    const fs::path journal = journal_path_for(json);
    std::error_code ec;
    if (!force)
        for (const fs::path& p : {json, csv, journal})
            if (fs::exists(p, ec)) throw std::runtime_error(p.string() + " exists (--force overwrites it)");
    nlohmann::json header = merge.header;
    header["json"] = fs::absolute(json).string();
    header["csv"] = fs::absolute(csv).string();
    // The journal header's plan_sha256 is what --resume compares, and a merged report is complete: resuming it
    // says so. The rows go through the writer, so the journal holds each of them, as a single run's does.
    ReportWriter writer(json, csv, JournalWriter::create(journal, header, force), merge.meta.get<ReportMeta>(),
                        merge.baseline, merge.header["planned"].get<size_t>());
    writer.journal().append_event({{"merged_from", merge.meta["merged_from"]["shards"].size()}});
    for (const Record& r : merge.records) writer.add(r);
    writer.render();
}

}  // namespace kreg
