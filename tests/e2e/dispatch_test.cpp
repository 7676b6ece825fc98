// The dispatch mechanism end to end on the CPU (docs/DISPATCH.md): a fresh sweep of cpu_naive and cpu_blocked,
// `runner tune` on its report, and cpu_dispatch run with KREG_DISPATCH_TABLE pointing at the table. Which
// kernel is faster is never assumed: the expected route of every shape is read from the report tune was given,
// and the route taken is read from each cpu_dispatch row's extra.variant. Also: tune refuses bad input with the
// file and the reason, and cpu_dispatch says which table it used and fails clearly on an unreadable one.
#include "../../plugins/dispatch_common/dispatch_table.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <tuple>

namespace kreg::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kRunner = KREG_RUNNER;
// Vector-like, tiny, mid and ragged shapes: the two kernels differ most between these, but the test does not
// care which way.
const std::string kShapes = "--shape 1x300x200 --shape 8x8x8 --shape 96x96x96 --shape 200x33x150";
const std::string kSweepOptions = " --repeat 5 --warmup 1 --timeout 60 --seed 7";

using Shape = std::tuple<int64_t, int64_t, int64_t>;

json read_json(const fs::path& path) {
    std::ifstream in(path);
    return json::parse(in);
}
void write_json(const fs::path& path, const json& doc) { std::ofstream(path) << doc.dump(1); }

// The report's fastest ok kernel per shape (lowest median), exactly as the table must have chosen it.
std::map<Shape, std::string> fastest_by_shape(const json& report) {
    std::map<Shape, std::pair<double, std::string>> best;
    for (const json& r : report["records"]) {
        if (r["status"] != "ok") continue;
        const Shape shape{r["m"].get<int64_t>(), r["n"].get<int64_t>(), r["k"].get<int64_t>()};
        const std::pair<double, std::string> candidate{r["stats"]["median_ms"].get<double>(), r["kernel"]};
        const auto it = best.find(shape);
        if (it == best.end() || candidate < it->second) best[shape] = candidate;
    }
    std::map<Shape, std::string> out;
    for (const auto& [shape, entry] : best) out[shape] = entry.second;
    return out;
}

// The kernel a cpu_dispatch row says it ran: extra.variant is "<kernel>: <why> of <table>".
std::string routed_kernel(const json& record) {
    if (!record.contains("extra") || !record["extra"].contains("variant")) return "(no extra.variant)";
    const std::string variant = record["extra"]["variant"];
    return variant.substr(0, variant.find(':'));
}

class DispatchE2E : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = fresh_dir("dispatch");
        const auto sweep =
            run_command(kRunner + " --kernels cpu_naive,cpu_blocked " + kShapes + kSweepOptions + " --json cpu.json",
                        dir_, dir_ / "sweep");
        ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
        const auto tune = run_command(kRunner + " tune cpu.json --out table.json", dir_, dir_ / "tune");
        ASSERT_EQ(tune.exit_code, 0) << tune.err;
    }
    static fs::path dir_;
};
fs::path DispatchE2E::dir_;

TEST_F(DispatchE2E, EachShapeRoutesToTheKernelTheReportMeasuredFastest) {
    const auto expected = fastest_by_shape(read_json(dir_ / "cpu.json"));
    ASSERT_EQ(expected.size(), 4u);
    const auto run = run_command("KREG_DISPATCH_TABLE=table.json " + kRunner + " --kernels cpu_dispatch " + kShapes +
                                     " --repeat 2 --warmup 0 --json routed.json",
                                 dir_, dir_ / "routed");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json routed = read_json(dir_ / "routed.json");
    int checked = 0;
    for (const json& r : routed["records"]) {
        ASSERT_EQ(r["status"], "ok") << r.dump();
        const Shape shape{r["m"].get<int64_t>(), r["n"].get<int64_t>(), r["k"].get<int64_t>()};
        EXPECT_EQ(routed_kernel(r), expected.at(shape)) << r["extra"].dump();
        EXPECT_NE(r["extra"]["variant"].get<std::string>().find("of KREG_DISPATCH_TABLE=table.json"), std::string::npos)
            << r["extra"]["variant"];
        ++checked;
    }
    EXPECT_EQ(checked, 4);
}

TEST_F(DispatchE2E, AnUnmeasuredShapeRoutesAsTheTableSays) {
    const auto table = dispatch::parse_table(slurp(dir_ / "table.json"), "table.json");
    const auto* entry = table.find("cpu", "fp32");
    ASSERT_NE(entry, nullptr);
    const auto run = run_command("KREG_DISPATCH_TABLE=table.json " + kRunner +
                                     " --kernels cpu_dispatch --shape 3x500x100 --shape 150x150x40 --repeat 2"
                                     " --warmup 0 --json unmeasured.json",
                                 dir_, dir_ / "unmeasured");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    for (const json& r : read_json(dir_ / "unmeasured.json")["records"]) {
        ASSERT_EQ(r["status"], "ok") << r.dump();
        EXPECT_EQ(routed_kernel(r), dispatch::choose(*entry, r["m"], r["n"], r["k"]).kernel) << r["extra"].dump();
    }
}

TEST_F(DispatchE2E, WithoutTheVariableTheEmbeddedTableIsUsedAndNamed) {
    const auto run = run_command("env -u KREG_DISPATCH_TABLE " + kRunner +
                                     " --kernels cpu_dispatch --shape 5x6x7 --repeat 2 --warmup 0 --json embedded.json",
                                 dir_, dir_ / "embedded");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json r = read_json(dir_ / "embedded.json")["records"][0];
    ASSERT_EQ(r["status"], "ok") << r.dump();
    EXPECT_NE(r["extra"]["variant"].get<std::string>().find("of embedded plugins/cpu_dispatch/table.json (sha256 "),
              std::string::npos)
        << r["extra"]["variant"];
}

TEST_F(DispatchE2E, AnUnreadableOrForeignTableFailsTheRowWithTheReason) {
    write_json(
        dir_ / "foreign.json",
        json{{"kind", "kreg-dispatch-table"},
             {"version", 1},
             {"tables",
              {{{"device", "cpu"}, {"dtype", "fp32"}, {"fallback", "cuda_09_warptiled"}, {"rules", json::array()}}}}});
    for (const auto& [table, expected] : std::vector<std::pair<std::string, std::string>>{
             {"missing.json", "KREG_DISPATCH_TABLE=missing.json: cannot be opened"},
             {"cpu.json", "KREG_DISPATCH_TABLE=cpu.json: /baseline: unknown key"},
             {"foreign.json", "routes to 'cuda_09_warptiled', which cpu_dispatch does not contain"}}) {
        const auto run =
            run_command("KREG_DISPATCH_TABLE=" + table + " " + kRunner +
                            " --kernels cpu_dispatch --shape 4x4x4 --repeat 1 --warmup 0 --json bad.json --force",
                        dir_, dir_ / "bad");
        const json r = read_json(dir_ / "bad.json")["records"][0];
        EXPECT_NE(r["status"], "ok") << table;
        EXPECT_NE(r["reason"].get<std::string>().find(expected), std::string::npos) << table << ": " << r["reason"];
    }
}

TEST_F(DispatchE2E, TuneRefusesBadInputWithTheFileAndTheReason) {
    // The broken reports live outside the test's folder, whose reports are all checked against the schema.
    const fs::path bad = fs::temp_directory_path() / ("kreg-e2e-dispatch-refused-" + std::to_string(::getpid()));
    fs::remove_all(bad);
    fs::create_directories(bad);
    fs::copy_file(dir_ / "cpu.json", bad / "cpu.json");
    fs::copy_file(dir_ / "table.json", bad / "table.json");
    const json good = read_json(dir_ / "cpu.json");
    std::vector<std::tuple<std::string, json, std::string>> cases;
    json unverified = good;
    for (json& r : unverified["records"]) r.erase("tolerance");
    cases.emplace_back("unverified.json", unverified, "ok but not verified");
    json interrupted = good;
    interrupted["meta"]["progress"]["complete"] = false;
    cases.emplace_back("interrupted.json", interrupted, "incomplete: the sweep was interrupted");
    json other_version = good;
    other_version["meta"]["kreg_version"] = "0.0.0-other";
    cases.emplace_back("other-version.json", other_version, "made by kreg 0.0.0-other");
    for (const auto& [name, doc, reason] : cases) {
        write_json(bad / name, doc);
        const auto run = run_command(kRunner + " tune " + name + " --out t.json --force", bad, bad / "run");
        EXPECT_EQ(run.exit_code, 2) << name;
        EXPECT_NE(run.err.find("runner tune: refused: " + name + ": "), std::string::npos) << run.err;
        EXPECT_NE(run.err.find(reason), std::string::npos) << run.err;
    }
    // Mixed builds: the same kernels measured from another build of a plugin.
    json rebuilt = good;
    for (json& plugin : rebuilt["meta"]["plugins"])
        if (plugin["name"] == "cpu_blocked") plugin["sha256"] = std::string(64, 'f');
    write_json(bad / "rebuilt.json", rebuilt);
    auto run = run_command(kRunner + " tune cpu.json rebuilt.json --out t.json --force", bad, bad / "run");
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("rebuilt.json: kernel cpu_blocked ran from plugin build ffffffffffff, but cpu.json"),
              std::string::npos)
        << run.err;
    std::ofstream(bad / "malformed.json") << "{\"meta\": {";
    run = run_command(kRunner + " tune malformed.json --out t.json --force", bad, bad / "run");
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("malformed.json: not valid JSON"), std::string::npos) << run.err;
    run = run_command(kRunner + " tune table.json --out t.json --force", bad, bad / "run");
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("table.json: not a kreg report"), std::string::npos) << run.err;
    // An existing output needs --force; nothing is written on refusal.
    run = run_command(kRunner + " tune cpu.json --out table.json", bad, bad / "run");
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("table.json exists"), std::string::npos) << run.err;
    // A table that cannot be written is exit 3 with the path and why, not an abort (/proc takes no new file).
    run = run_command(kRunner + " tune cpu.json --out /proc/kreg-table.json", bad, bad / "run");
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_NE(run.err.find("runner tune: cannot write /proc/kreg-table.json"), std::string::npos) << run.err;
    fs::remove_all(bad);
}

}  // namespace
}  // namespace kreg::test
