// Reports: the meta block, JSON and CSV over the same records, atomic rewrites, speed-ups and the
// console table.
#include "common/host_info.hpp"
#include "common/operation_table.hpp"
#include "report/atomic_file.hpp"
#include "report/console.hpp"
#include "report/csv.hpp"
#include "report/journal.hpp"
#include "report/json_report.hpp"
#include "report/meta.hpp"
#include "report/report_writer.hpp"
#include "report/speedup.hpp"

#include "json_schema.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kreg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------------
// Helpers

const test::ScratchRoot scratch("kreg_report_test");
fs::path fresh_dir(const std::string& name) { return scratch.fresh_dir(name); }

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

std::vector<std::string> directory_entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// A minimal RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false, field_started = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            if (!field.empty()) throw std::runtime_error("quote inside an unquoted field");
            quoted = field_started = true;
        } else if (c == ',') {
            row.push_back(field);
            field.clear();
            field_started = true;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            row.push_back(field);
            rows.push_back(row);
            row.clear();
            field.clear();
            field_started = false;
        } else {
            field += c;
            field_started = true;
        }
    }
    if (quoted) throw std::runtime_error("unterminated quoted field");
    if (field_started || !row.empty()) {
        row.push_back(field);
        rows.push_back(row);
    }
    return rows;
}

std::vector<std::string> split(const std::string& s, char separator) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, separator)) parts.push_back(part);
    return parts;
}

// Cells of a parsed CSV row by column name.
struct CsvRow {
    std::vector<std::string> header, cells;
    const std::string& operator[](const std::string& column) const {
        for (size_t i = 0; i < header.size(); ++i)
            if (header[i] == column) return cells.at(i);
        throw std::out_of_range("no column " + column);
    }
};

Record ok_record(const std::string& kernel, Shape shape, double median_ms, DType dtype = DType::fp32) {
    Record r;
    r.job_id = 7;
    r.kernel = kernel;
    r.plugin = "kreg_cpu";
    r.plugin_path = "/opt/kreg/lib/kreg/plugins/libkreg_cpu.so";
    r.backend = Backend::cpu;
    r.dtype = dtype;
    r.shape = shape;
    r.seed = 42;
    r.status = RowStatus::ok;
    r.max_rel_err = 1.234567891e-7;
    r.tolerance = 1e-5;
    r.timer = "host";
    r.samples_ms = {median_ms * 0.99, median_ms, median_ms * 1.013};
    r.stats = TimingStats{3, median_ms, median_ms * 0.99, median_ms * 1.001, median_ms * 0.0115, 0.0114886};
    r.gflops = work_flops(Operation::gemm, shape) / (median_ms * 1e-3) / 1e9;
    r.extra.launch = LaunchInfo{{1, 2, 3}, {32, 8, 1}, 0};
    return r;
}

Record failed_record(const std::string& kernel, Shape shape, RowStatus status, std::string reason) {
    Record r;
    r.job_id = 9;
    r.kernel = kernel;
    r.plugin = "kreg_cpu";
    r.plugin_path = "/opt/kreg/lib/kreg/plugins/libkreg_cpu.so";
    r.shape = shape;
    r.status = status;
    r.reason = std::move(reason);
    return r;
}

const Shape k512{512, 512, 512};
const Shape k256{256, 256, 128};

// ---------------------------------------------------------------------------------------------------
// Meta

MetaInputs sample_meta_inputs() {
    MetaInputs in;
    in.argv = {"runner", "--config", "sweep.json", "--seed", "18446744073709551557"};
    in.config = {{"kernels", {"cpu_naive", "cpu_blocked"}}, {"repeats", 10}};
    in.seed = 18446744073709551557ull;  // above INT64_MAX: must stay unsigned
    PluginFacts good{"/p/libkreg_cpu.so", "kreg_cpu", "1.2.0", std::string(64, 'a'), 1, 0, ""};
    PluginFacts bad{
        "/p/libbroken.so", "", "", std::string(64, 'b'), 2, 0, "wrong ABI major version: got 2, supported 1"};
    in.plugins = {good, bad};
    return in;
}

TEST(ReportMeta, HasEveryField) {
    const json meta = make_report_meta(sample_meta_inputs());
    for (const char* key : {"schema_version", "kreg_version", "git_sha", "argv", "timestamp", "host", "gpu", "plugins",
                            "config", "seed", "operations"})
        EXPECT_TRUE(meta.contains(key)) << key;
    EXPECT_EQ(meta.size(), 11u) << meta.dump(2);

    EXPECT_EQ(meta["schema_version"], kReportSchemaVersion);
    EXPECT_TRUE(std::regex_match(meta["schema_version"].get<std::string>(), std::regex(R"(\d+\.\d+\.\d+)")));
    EXPECT_EQ(meta["kreg_version"], KREG_VERSION);
    const std::string sha = meta["git_sha"];
    EXPECT_TRUE(sha == "unknown" || std::regex_match(sha, std::regex("[0-9a-f]{12}"))) << sha;
    EXPECT_EQ(meta["argv"], json(sample_meta_inputs().argv));
    EXPECT_TRUE(
        std::regex_match(meta["timestamp"].get<std::string>(), std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")))
        << meta["timestamp"];
    EXPECT_TRUE(meta["gpu"].is_null());
    EXPECT_EQ(meta["config"], sample_meta_inputs().config);
    ASSERT_TRUE(meta["seed"].is_number_unsigned());
    EXPECT_EQ(meta["seed"].get<uint64_t>(), 18446744073709551557ull);
}

TEST(ReportMeta, PluginsCarryVersionHashAndLoadError) {
    const json plugins = json(make_report_meta(sample_meta_inputs()))["plugins"];
    ASSERT_EQ(plugins.size(), 2u);
    EXPECT_EQ(plugins[0]["path"], "/p/libkreg_cpu.so");
    EXPECT_EQ(plugins[0]["name"], "kreg_cpu");
    EXPECT_EQ(plugins[0]["version"], "1.2.0");
    EXPECT_EQ(plugins[0]["sha256"], std::string(64, 'a'));
    EXPECT_EQ(plugins[0]["abi_major"], 1);
    EXPECT_EQ(plugins[0]["abi_minor"], 0);
    EXPECT_TRUE(plugins[0]["load_error"].is_null());
    EXPECT_EQ(plugins[1]["abi_major"], 2);
    EXPECT_EQ(plugins[1]["load_error"], "wrong ABI major version: got 2, supported 1");
}

TEST(ReportMeta, GpuFactsPassThroughAndCeilingsAreTyped) {
    MetaInputs in = sample_meta_inputs();
    in.gpu = GpuInfo{};
    in.gpu->facts = {{"name", "NVIDIA H100"}, {"compute_capability", "9.0"}};
    in.gpu->ceilings = GpuCeilings{};
    in.gpu->ceilings->dram_copy_gbps = 3000.0;
    in.gpu->ceilings->bf16_tflops = 600.0;
    in.gpu->ceilings->unavailable = {{"sgemm_tflops", "plugin has no kernel 'cublas_sgemm'"}};
    in.gpu->ceilings->plugin =
        CeilingPlugin{"kreg_cublas", "1.0.0+cublas.13.1.0", "/p/libkreg_cublas.so", std::nullopt};
    const json gpu = json(make_report_meta(in))["gpu"];
    EXPECT_EQ(gpu["facts"], in.gpu->facts);
    EXPECT_EQ(gpu["ceilings"],
              json::parse(R"({"dram_copy_gbps": 3000.0, "sgemm_tflops": null, "tf32_tflops": null, "bf16_tflops": 600.0,
                              "unavailable": {"sgemm_tflops": "plugin has no kernel 'cublas_sgemm'"},
                              "plugin": {"name": "kreg_cublas", "version": "1.0.0+cublas.13.1.0",
                                         "path": "/p/libkreg_cublas.so", "sha256": null}})"));
    EXPECT_FALSE(gpu.contains(kCeilingsUnavailableKey));  // written only when there is a reason
    EXPECT_EQ(json(gpu.get<GpuInfo>()), gpu);             // and read back to the same JSON
}

TEST(ReportMeta, ReadsBackToTheSameJsonAndNamesAMistypedKeyByItsPath) {
    MetaInputs in = sample_meta_inputs();
    in.gpu = GpuInfo{};
    in.gpu->facts = {{"name", "NVIDIA H200"}, {"uuid", "GPU-1"}};
    in.gpu->ceilings_unavailable = "no cuBLAS plugin";
    ReportMeta meta = make_report_meta(in);
    meta.shard = SweepShardMeta{2, 3, 10, "abc", "def", "/w"};
    meta.devices.push_back({0, "GPU-1", in.gpu});
    meta.progress = ReportProgress{10, 4, false, "/w/r.journal.jsonl"};
    const json written = meta;
    EXPECT_EQ(written["gpu"][kCeilingsUnavailableKey], "no cuBLAS plugin");
    EXPECT_EQ(json(written.get<ReportMeta>()), written);
    const ReportMeta back = written.get<ReportMeta>();
    EXPECT_EQ(back.gpu->name(), "NVIDIA H200");
    EXPECT_EQ(back.plugins.at(1).load_error, "wrong ABI major version: got 2, supported 1");
    EXPECT_EQ(back.seed, 18446744073709551557ull);

    json wrong = written;
    wrong["gpu"]["ceilings"] = {{"size", "large"}};
    try {
        (void)wrong.get<ReportMeta>();
        FAIL() << "a string for ceilings.size was read";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("/gpu/ceilings/size: ", 0), 0u) << e.what();
    }
}

// ---------------------------------------------------------------------------------------------------
// Field tables against configs/schema/report.schema.json: what each typed struct writes is what the schema
// describes, key for key, and a meta with every field set validates.

json report_schema() {
    std::ifstream in(std::string(KREG_SOURCE_DIR) + "/configs/schema/report.schema.json");
    return json::parse(in);
}

std::set<std::string> property_keys(const json& object_schema) {
    std::set<std::string> keys;
    for (const auto& [key, value] : object_schema.at("properties").items()) keys.insert(key);
    return keys;
}

std::set<std::string> as_set(const std::vector<std::string>& keys) { return {keys.begin(), keys.end()}; }

TEST(ReportFields, EachFieldTableWritesExactlyTheKeysTheSchemaDescribes) {
    const json defs = report_schema().at("definitions");
    const json& meta = defs.at("meta");
    std::set<std::string> meta_keys = property_keys(meta);
    for (const char* fixture_only : {"synthetic", "synthetic_note"}) meta_keys.erase(fixture_only);
    EXPECT_EQ(as_set(report_meta_keys()), meta_keys);
    EXPECT_EQ(as_set(report_progress_keys()), property_keys(defs.at("progress")));
    EXPECT_EQ(as_set(plugin_facts_keys()), property_keys(defs.at("plugin")));
    EXPECT_EQ(as_set(report_device_keys()), property_keys(meta.at("properties").at("devices").at("items")));
    EXPECT_EQ(as_set(host_info_keys()), property_keys(meta.at("properties").at("host")));
    EXPECT_EQ(as_set(operation_facts_keys()), property_keys(meta.at("properties").at("operations").at("items")));
    const json& gpu = meta.at("properties").at("gpu");
    EXPECT_EQ(as_set(gpu_info_keys()), property_keys(gpu));
    const json& ceilings = gpu.at("properties").at("ceilings");
    EXPECT_EQ(as_set(gpu_ceilings_keys()), property_keys(ceilings));
    EXPECT_EQ(as_set(ceiling_plugin_keys()), property_keys(ceilings.at("properties").at("plugin")));
    std::set<std::string> shard_keys;
    const json shard = SweepShardMeta{};
    for (const auto& [key, value] : shard.items()) shard_keys.insert(key);
    EXPECT_EQ(shard_keys, property_keys(defs.at("shard")));
    // What the schema requires of meta is written even when empty.
    const json written = ReportMeta{};
    for (const auto& key : meta.at("required")) EXPECT_TRUE(written.contains(key.get<std::string>())) << key;
}

TEST(ReportFields, AMetaWithEveryFieldSetValidatesAgainstTheSchema) {
    MetaInputs in = sample_meta_inputs();
    GpuInfo gpu;
    gpu.facts = {{"name", "NVIDIA H200"}, {"uuid", "GPU-1"}};
    gpu.ceilings = GpuCeilings{3900.0,
                               50.0,
                               400.0,
                               800.0,
                               {},
                               8192,
                               int64_t(1) << 30,
                               10,
                               2.5,
                               CeilingPlugin{"kreg_cublas", "1.0.0+cublas.13.1.0", "/p/c.so", std::string(64, 'c')}};
    gpu.ceilings_unavailable = "calibration failed: out of memory";
    in.gpu = gpu;
    ReportMeta meta = make_report_meta(in);
    meta.progress = ReportProgress{4, 4, true, "/w/r.journal.jsonl"};
    meta.shard = SweepShardMeta{1, 2, 8, std::string(64, 'p'), std::string(64, 'c'), "/w"};
    meta.devices = {{0, "GPU-1", gpu}, {1, "GPU-2", std::nullopt}};
    const json report = {
        {"meta", meta}, {"baseline", nullptr}, {"records", json::array()}, {"summary", json::object()}};
    const auto errors = test::JsonSchema(report_schema()).validate(report);
    EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front()) << "\n" << report.dump(2);
}

TEST(ReportFields, MetaCarriesTheOperationTableAndReadsItBack) {
    const ReportMeta meta = make_report_meta(sample_meta_inputs());
    ASSERT_EQ(meta.operations.size(), all_operations().size());
    for (size_t i = 0; i < meta.operations.size(); ++i) {
        const Operation op = all_operations()[i];
        const OperationFacts& facts = meta.operations[i];
        EXPECT_EQ(facts.name, to_string(op));
        EXPECT_EQ(facts.rate, operation_row(op).rate_field()) << facts.name;
        ASSERT_EQ(facts.keys.size(), operation_row(op).shape_keys().size()) << facts.name;
        EXPECT_EQ(facts.keys.front(), operation_row(op).shape_keys().front().name) << facts.name;
    }
    EXPECT_EQ(meta.operations.front().keys, (std::vector<std::string>{"m", "n", "k"}));
    const json written = meta;
    const ReportMeta back = written.get<ReportMeta>();
    ASSERT_EQ(back.operations.size(), meta.operations.size());
    EXPECT_EQ(json(back.operations), json(meta.operations));
    // A report older than the field reads back with none.
    json old = written;
    old.erase("operations");
    EXPECT_TRUE(old.get<ReportMeta>().operations.empty());
}

TEST(ReportFields, EveryCsvColumnIsARowFieldOfTheSchemaAndDocumented) {
    const json defs = report_schema().at("definitions");
    std::set<std::string> row_keys = property_keys(defs.at("record"));
    for (const auto& key : property_keys(defs.at("stats"))) row_keys.insert(key);
    std::ifstream doc_in(std::string(KREG_SOURCE_DIR) + "/docs/REPORTS.md");
    const std::string doc((std::istreambuf_iterator<char>(doc_in)), std::istreambuf_iterator<char>());
    EXPECT_NE(doc.find(csv_header()), std::string::npos)
        << "docs/REPORTS.md does not show the CSV header " << csv_header();
    for (const std::string& column : split(csv_header(), ',')) {
        if (column == "samples") continue;  // stats.count: how many samples the row's statistics are of
        EXPECT_TRUE(row_keys.count(column)) << "CSV column " << column << " is no field of a row in the schema";
    }
}

TEST(HostInfo, NamesTheMachine) {
    const json host = host_info();
    for (const char* key : {"hostname", "os", "cpu_model", "logical_cpus"}) EXPECT_TRUE(host.contains(key)) << key;
    EXPECT_FALSE(host["hostname"].get<std::string>().empty());
    EXPECT_GE(host["logical_cpus"].get<int>(), 1);
    // sysname, release and machine, e.g. "Linux 6.1.0-18-amd64 x86_64".
    EXPECT_EQ(split(host["os"].get<std::string>(), ' ').size(), 3u) << host["os"];
    EXPECT_FALSE(host["cpu_model"].get<std::string>().empty());
}

// ---------------------------------------------------------------------------------------------------
// JSON report

std::vector<Record> mixed_records() {
    std::vector<Record> records{ok_record("cublas", k512, 0.5), ok_record("cpu_blocked", k512, 2.0),
                                ok_record("cpu_blocked", k256, 0.25),
                                failed_record("cpu_naive", k512, RowStatus::skipped, "shape, not a multiple of 64"),
                                failed_record("broken", k512, RowStatus::crashed, "SIGSEGV \"in\" run_gemm\nat 0x0")};
    records[3].seed = 3;
    records[4].signal = "SIGSEGV";
    records[4].exit_code = -11;
    return records;
}

TEST(ReportJson, HasMetaRecordsAndSummary) {
    const json meta = make_report_meta(sample_meta_inputs());
    const auto records = mixed_records();
    const json report = report_json(meta, records, Baseline());
    EXPECT_EQ(report["meta"], meta);
    EXPECT_TRUE(report["baseline"].is_null());
    ASSERT_EQ(report["records"].size(), records.size());
    for (const json& row : report["records"]) EXPECT_FALSE(row.contains("speedup_vs_baseline"));
    EXPECT_EQ(report["summary"],
              json({{"ok", 3}, {"wrong_result", 0}, {"skipped", 1}, {"failed", 0}, {"crashed", 1}, {"timeout", 0}}));
}

TEST(ReportJson, RecordsRoundTripThroughFromJson) {
    const auto records = mixed_records();
    const json report = report_json(json::object(), records, Baseline::same_for_all("cublas"));
    for (size_t i = 0; i < records.size(); ++i) {
        const Record back = report["records"][i].get<Record>();
        EXPECT_EQ(json(back), json(records[i])) << i;
    }
}

TEST(ReportJson, SpeedupPerRecordWhenBaselineGiven) {
    const json report = report_json(json::object(), mixed_records(), Baseline::same_for_all("cublas"));
    EXPECT_EQ(report["baseline"], "cublas");
    const json& rows = report["records"];
    EXPECT_DOUBLE_EQ(rows[0]["speedup_vs_baseline"].get<double>(), 1.0);   // the baseline itself
    EXPECT_DOUBLE_EQ(rows[1]["speedup_vs_baseline"].get<double>(), 0.25);  // 0.5 ms / 2.0 ms
    EXPECT_TRUE(rows[2]["speedup_vs_baseline"].is_null());                 // no baseline at 256x256x128
    EXPECT_TRUE(rows[3]["speedup_vs_baseline"].is_null());                 // skipped
}

TEST(ReportJson, ReadBackFromFile) {
    const fs::path dir = fresh_dir("read_back");
    const auto records = mixed_records();
    write_file_atomically(dir / "report.json", dump_report(report_json(json::object(), records, Baseline())));
    const auto back = read_records_json(dir / "report.json");
    ASSERT_EQ(back.size(), records.size());
    for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(json(back[i]), json(records[i])) << i;

    // A bare array of records is accepted too.
    write_file_atomically(dir / "array.json", json(records).dump());
    EXPECT_EQ(read_records_json(dir / "array.json").size(), records.size());
}

TEST(ReportJson, InvalidUtf8InAReasonDoesNotStopTheReport) {
    std::vector<Record> records{failed_record("k", k512, RowStatus::failed, "bad byte \xff here")};
    const std::string text = dump_report(report_json(json::object(), records, Baseline()));
    EXPECT_NE(text.find("bad byte"), std::string::npos);
    json parsed;
    EXPECT_NO_THROW(parsed = json::parse(text));
    EXPECT_EQ(parsed["records"].size(), 1u);
}

TEST(ReportJson, ReadErrorsNameTheFileAndRecord) {
    const fs::path dir = fresh_dir("read_errors");
    const auto expect_error = [](const fs::path& path, const std::string& fragment) {
        try {
            read_records_json(path);
            ADD_FAILURE() << "expected an exception for " << path;
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(path.filename().string()), std::string::npos) << what;
            EXPECT_NE(what.find(fragment), std::string::npos) << what;
        }
    };
    expect_error(dir / "missing.json", "cannot open");
    write_file_atomically(dir / "truncated.json", "{\"records\": [");
    expect_error(dir / "truncated.json", "not valid JSON");
    write_file_atomically(dir / "no_records.json", "{\"meta\": {}}");
    expect_error(dir / "no_records.json", "records");
    json bad = report_json(json::object(), mixed_records(), Baseline());
    bad["records"][2]["status"] = "exploded";
    write_file_atomically(dir / "bad_status.json", bad.dump());
    expect_error(dir / "bad_status.json", "records[2]");
}

// ---------------------------------------------------------------------------------------------------
// CSV

TEST(Csv, HeaderIsStable) {
    const std::string required = "kernel,plugin,backend,dtype,m,n,k,status,max_rel_err,median_ms,min_ms,cv,gflops";
    EXPECT_EQ(csv_header().substr(0, required.size()), required);
    EXPECT_EQ(csv_header(), required +
                                ",mean_ms,stddev_ms,samples,tolerance,speedup_vs_baseline,reason,plugin_path,seed,job_"
                                "id,timer,operation,block,gbps");
}

TEST(Csv, RowHasOneFieldPerColumnAndValuesParseBack) {
    const Record r = ok_record("cpu_blocked", k512, 1.23456789);
    const auto rows = parse_csv(csv_header() + "\n" + csv_row(r, 0.4321987654) + "\n");
    ASSERT_EQ(rows.size(), 2u);
    ASSERT_EQ(rows[1].size(), rows[0].size());
    const CsvRow row{rows[0], rows[1]};
    EXPECT_EQ(row["kernel"], "cpu_blocked");
    EXPECT_EQ(row["plugin"], "kreg_cpu");
    EXPECT_EQ(row["backend"], "cpu");
    EXPECT_EQ(row["dtype"], "fp32");
    EXPECT_EQ(row["m"], "512");
    EXPECT_EQ(row["n"], "512");
    EXPECT_EQ(row["k"], "512");
    EXPECT_EQ(row["status"], "ok");
    EXPECT_EQ(row["samples"], "3");
    EXPECT_EQ(row["seed"], "42");
    EXPECT_EQ(row["job_id"], "7");
    EXPECT_EQ(row["timer"], "host");
    EXPECT_EQ(row["reason"], "");
    EXPECT_EQ(row["plugin_path"], r.plugin_path);

    // %.6f for milliseconds: half a unit in the sixth decimal.
    EXPECT_NEAR(std::stod(row["median_ms"]), r.stats->median_ms, 5e-7);
    EXPECT_NEAR(std::stod(row["min_ms"]), r.stats->min_ms, 5e-7);
    EXPECT_NEAR(std::stod(row["mean_ms"]), r.stats->mean_ms, 5e-7);
    EXPECT_NEAR(std::stod(row["stddev_ms"]), r.stats->stddev_ms, 5e-7);
    // %.6g for errors and ratios: half a unit in the sixth significant digit.
    EXPECT_NEAR(std::stod(row["max_rel_err"]), *r.max_rel_err, 5e-6 * *r.max_rel_err);
    EXPECT_NEAR(std::stod(row["tolerance"]), *r.tolerance, 5e-6 * *r.tolerance);
    EXPECT_NEAR(std::stod(row["cv"]), r.stats->cv, 5e-6 * r.stats->cv);
    EXPECT_NEAR(std::stod(row["speedup_vs_baseline"]), 0.4321987654, 5e-6 * 0.4321987654);
    // %.3f for GFLOP/s.
    EXPECT_NEAR(std::stod(row["gflops"]), *r.gflops, 5e-4);
    EXPECT_EQ(row["operation"], "gemm");
    EXPECT_EQ(row["block"], "");
    EXPECT_EQ(row["gbps"], "");
}

TEST(Csv, TransposeRowsNameTheOperationAndBlockAndCarryGbpsInsteadOfKAndGflops) {
    Record r = ok_record("cpu_block_transpose", Shape{12, 18, 0, 6}, 0.5);
    r.operation = Operation::block_transpose;
    r.gflops.reset();
    r.gbps = 3.4567891;
    Record t = r;
    t.kernel = "cpu_transpose";
    t.operation = Operation::transpose;
    t.shape = Shape{17, 33, 0};
    const auto rows =
        parse_csv(csv_header() + "\n" + csv_row(r, std::nullopt) + "\n" + csv_row(t, std::nullopt) + "\n");
    ASSERT_EQ(rows.size(), 3u);
    const CsvRow block{rows[0], rows[1]}, plain{rows[0], rows[2]};
    EXPECT_EQ(block["operation"], "block_transpose");
    EXPECT_EQ(block["m"], "12");
    EXPECT_EQ(block["n"], "18");
    EXPECT_EQ(block["k"], "");  // no K: not a 0 that reads like one
    EXPECT_EQ(block["block"], "6");
    EXPECT_EQ(block["gflops"], "");
    EXPECT_EQ(block["gbps"], "3.457");
    EXPECT_EQ(plain["operation"], "transpose");
    EXPECT_EQ(plain["m"], "17");
    EXPECT_EQ(plain["n"], "33");
    EXPECT_EQ(plain["k"], "");
    EXPECT_EQ(plain["block"], "");
    EXPECT_EQ(plain["gbps"], "3.457");
}

TEST(Csv, AbsentValuesAreEmptyFields) {
    const Record r = failed_record("cpu_naive", k512, RowStatus::skipped, "no device");
    const auto rows = parse_csv(csv_header() + "\n" + csv_row(r, std::nullopt));
    ASSERT_EQ(rows.size(), 2u);
    const CsvRow row{rows[0], rows[1]};
    for (const char* column : {"max_rel_err", "median_ms", "min_ms", "cv", "gflops", "mean_ms", "stddev_ms",
                               "tolerance", "speedup_vs_baseline"})
        EXPECT_EQ(row[column], "") << column;
    EXPECT_EQ(row["samples"], "0");
    EXPECT_EQ(row["status"], "skipped");
}

TEST(Csv, ReasonsWithCommasQuotesAndNewlinesSurviveQuoting) {
    const std::string nasty = "kernel said: \"bad, very bad\"\nsecond line, with comma\r\nthird";
    Record r = failed_record("broken", k512, RowStatus::failed, nasty);
    Record plain = failed_record("other", k256, RowStatus::timeout, "took longer than 300 s");
    const std::string text =
        csv_header() + "\n" + csv_row(r, std::nullopt) + "\n" + csv_row(plain, std::nullopt) + "\n";
    const auto rows = parse_csv(text);
    ASSERT_EQ(rows.size(), 3u) << text;
    for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size());
    EXPECT_EQ((CsvRow{rows[0], rows[1]}["reason"]), nasty);
    EXPECT_EQ((CsvRow{rows[0], rows[1]}["kernel"]), "broken");
    EXPECT_EQ((CsvRow{rows[0], rows[2]}["reason"]), "took longer than 300 s");
    EXPECT_EQ((CsvRow{rows[0], rows[2]}["status"]), "timeout");
}

TEST(Csv, FieldQuotingFollowsRfc4180) {
    EXPECT_EQ(csv_field("plain"), "plain");
    EXPECT_EQ(csv_field(""), "");
    EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
}

TEST(Csv, TextCellsThatASpreadsheetWouldRunAreNeutralisedButNumbersAreNot) {
    EXPECT_EQ(csv_field("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
    EXPECT_EQ(csv_field("+1"), "'+1");
    EXPECT_EQ(csv_field("-2 apples"), "'-2 apples");
    EXPECT_EQ(csv_field("@SUM(A1)"), "'@SUM(A1)");
    EXPECT_EQ(csv_field("\tx"), "' x");
    EXPECT_EQ(csv_field("\rx"), "' x");  // a lone CR is a control byte like any other
    EXPECT_EQ(csv_field("a=b"), "a=b");  // only the first character counts

    Record r = failed_record("=evil", k512, RowStatus::wrong_result, "@import");
    r.max_rel_err = -0.5;  // a number, however odd: stays a number
    r.tolerance = -1e-5;
    const auto rows = parse_csv(csv_header() + "\n" + csv_row(r, -2.0) + "\n");
    ASSERT_EQ(rows.size(), 2u);
    const CsvRow row{rows[0], rows[1]};
    EXPECT_EQ(row["kernel"], "'=evil");
    EXPECT_EQ(row["reason"], "'@import");
    EXPECT_EQ(row["max_rel_err"], "-0.5");
    EXPECT_EQ(row["tolerance"], "-1e-05");
    EXPECT_EQ(row["speedup_vs_baseline"], "-2");
}

TEST(Csv, ControlBytesAndInvalidUtf8NeverReachACell) {
    const std::string field = csv_field("red \x1b[31mtext\x07 bell\x7f, bad \xff byte\nnext line");
    for (char c : field) {
        const auto byte = static_cast<unsigned char>(c);
        EXPECT_TRUE(byte >= 0x20 || c == '\n') << int(byte);
        EXPECT_NE(byte, 0x7F);
    }
    EXPECT_EQ(field, "\"red  [31mtext  bell , bad \xEF\xBF\xBD byte\nnext line\"");
    Record r = failed_record("k", k512, RowStatus::failed, std::string("nul\0byte", 8));
    EXPECT_EQ((CsvRow{parse_csv(csv_header())[0], parse_csv(csv_row(r, std::nullopt))[0]}["reason"]), "nul byte");
}

TEST(ConsoleTable, ControlBytesAndInvalidUtf8NeverReachTheTerminal) {
    Record r = failed_record("k", k512, RowStatus::failed, "\x1b]0;owned\x07 and \xc3");
    const std::string table = format_table({r}, Baseline());
    const std::string progress = format_progress(1, 1, r);
    for (const std::string* text : {&table, &progress})
        for (char c : *text) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n') << int(c);
    EXPECT_NE(progress.find(" ]0;owned  and \xEF\xBF\xBD"), std::string::npos) << progress;
}

// A table of GEMM and transpose rows (a merged report, a grading table): each rate cell is its own row's,
// with its unit; a GEMM row never shows GB/s because another row moved data.
TEST(ConsoleTable, EachRowsRateIsItsOwnWhenOperationsMix) {
    Record gemm = ok_record("gemm_kernel", k512, 2.0);
    gemm.gflops = 134.2;
    Record copy = ok_record("transpose_kernel", Shape{4096, 4096, 1}, 0.1);
    copy.operation = Operation::transpose;
    copy.gflops.reset();
    copy.gbps = 1342.5;
    const auto lines = split(format_table({gemm, copy}, Baseline()), '\n');
    ASSERT_GE(lines.size(), 4u);
    EXPECT_NE(lines[0].find("rate"), std::string::npos) << lines[0];
    EXPECT_EQ(lines[0].find("GB/s"), std::string::npos) << lines[0];
    EXPECT_NE(lines[2].find("134.2 GFLOP/s"), std::string::npos) << lines[2];
    EXPECT_EQ(lines[2].find("GB/s"), std::string::npos) << lines[2];
    EXPECT_NE(lines[3].find("1342.5 GB/s"), std::string::npos) << lines[3];
    // One kind alone keeps its unit in the header and bare numbers in the cells.
    const auto gemm_only = split(format_table({gemm}, Baseline()), '\n');
    EXPECT_NE(gemm_only[0].find("GFLOP/s"), std::string::npos);
    EXPECT_EQ(gemm_only[2].find("GFLOP/s"), std::string::npos) << gemm_only[2];
    const auto copy_only = split(format_table({copy}, Baseline()), '\n');
    EXPECT_NE(copy_only[0].find("GB/s"), std::string::npos);
    EXPECT_NE(copy_only[2].find("1342.5"), std::string::npos) << copy_only[2];
}

// A sweep's rows skipped for one reason (no GPU: every CUDA row) show that reason whole once; each later row
// points back to the first, so 150 rows do not print the same sentence 150 times.
TEST(ConsoleTable, ARepeatedSkipReasonIsPrintedOnceAndLaterRowsPointBack) {
    const std::string why = "no CUDA device: no NVIDIA driver (cudaGetDeviceCount: cudaErrorInsufficientDriver)";
    const std::vector<Record> records{failed_record("cuda_a", k512, RowStatus::skipped, why),
                                      failed_record("cuda_b", k512, RowStatus::skipped, why),
                                      failed_record("cuda_c", k512, RowStatus::skipped, "another reason"),
                                      failed_record("cuda_d", k512, RowStatus::skipped, why)};
    const std::string table = format_table(records, Baseline());
    size_t count = 0;
    for (size_t at = table.find(why); at != std::string::npos; at = table.find(why, at + 1)) ++count;
    EXPECT_EQ(count, 1u) << table;
    EXPECT_NE(table.find("another reason"), std::string::npos) << table;
    size_t pointers = 0;
    const std::string back = "skipped for the same reason as cuda_a " + to_string(k512) + " above";
    for (size_t at = table.find(back); at != std::string::npos; at = table.find(back, at + 1)) ++pointers;
    EXPECT_EQ(pointers, 2u) << table;
}

TEST(Csv, NonFiniteErrorIsWrittenAndParses) {
    Record r = failed_record("nan_maker", k512, RowStatus::wrong_result, "output has Inf");
    r.max_rel_err = std::numeric_limits<double>::infinity();
    const auto rows = parse_csv(csv_header() + "\n" + csv_row(r, std::nullopt));
    EXPECT_TRUE(std::isinf(std::stod(CsvRow{rows[0], rows[1]}["max_rel_err"])));
}

TEST(Csv, DocumentHasOneRowPerRecordWithSpeedups) {
    const auto records = mixed_records();
    const auto rows = parse_csv(csv_document(records, Baseline::same_for_all("cublas")));
    ASSERT_EQ(rows.size(), records.size() + 1);
    EXPECT_EQ(rows[0], split(csv_header(), ','));
    for (size_t i = 0; i < records.size(); ++i) {
        const CsvRow row{rows[0], rows[i + 1]};
        EXPECT_EQ(row["kernel"], records[i].kernel);
        EXPECT_EQ(row["reason"], records[i].reason);
    }
    EXPECT_EQ((CsvRow{rows[0], rows[2]}["speedup_vs_baseline"]), "0.25");
    EXPECT_EQ((CsvRow{rows[0], rows[3]}["speedup_vs_baseline"]), "");
}

// ---------------------------------------------------------------------------------------------------
// Atomic writes

TEST(AtomicFile, CreatesParentsAndReplacesContentLeavingNoTemporaryFile) {
    const fs::path dir = fresh_dir("atomic");
    const fs::path path = dir / "nested" / "deeper" / "report.csv";
    write_file_atomically(path, "first version, longer than the second\n");
    EXPECT_EQ(read_text(path), "first version, longer than the second\n");
    write_file_atomically(path, "second\n");
    EXPECT_EQ(read_text(path), "second\n");
    EXPECT_EQ(directory_entries(path.parent_path()), std::vector<std::string>{"report.csv"});
    write_file_atomically(path, "");
    EXPECT_EQ(read_text(path), "");
    EXPECT_EQ(directory_entries(path.parent_path()), std::vector<std::string>{"report.csv"});
}

TEST(AtomicFile, FailureNamesThePathAndLeavesNoTemporaryFile) {
    const fs::path dir = fresh_dir("atomic_failure");
    const fs::path occupied = dir / "report.json";
    fs::create_directory(occupied);  // rename cannot replace a directory with a file
    try {
        write_file_atomically(occupied, "{}");
        FAIL() << "expected an exception";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(occupied.string()), std::string::npos) << e.what();
    }
    EXPECT_EQ(directory_entries(dir), std::vector<std::string>{"report.json"});
    EXPECT_TRUE(fs::is_directory(occupied));

    const fs::path under_a_file = dir / "a_file";
    write_file_atomically(under_a_file, "x");
    EXPECT_THROW(write_file_atomically(under_a_file / "report.json", "{}"), std::runtime_error);
    EXPECT_EQ(read_text(under_a_file), "x");
}

// ---------------------------------------------------------------------------------------------------
// ReportWriter

std::vector<std::vector<std::string>> read_csv(const fs::path& path) { return parse_csv(read_text(path)); }

// Records with distinct job ids, as a sweep makes them (the writer refuses a job twice).
std::vector<Record> numbered(std::vector<Record> records) {
    for (size_t i = 0; i < records.size(); ++i) records[i].job_id = i;
    return records;
}

JournalWriter fresh_journal(const fs::path& dir) {
    return JournalWriter::create(dir / "r.journal.jsonl", {{"planned", 5}}, false);
}

TEST(ReportWriter, RendersAtOnceWithTheProgressAndJournalsEveryRowAsItArrives) {
    const fs::path dir = fresh_dir("writer");
    const fs::path json_path = dir / "out" / "report.json", csv_path = dir / "out" / "report.csv";
    const auto records = numbered(mixed_records());
    ReportWriter writer(json_path, csv_path, fresh_journal(dir), make_report_meta(sample_meta_inputs()), Baseline(),
                        records.size());

    // Rendered at once, with no rows, so an unwritable path fails before the sweep.
    EXPECT_TRUE(read_records_json(json_path).empty());
    EXPECT_EQ(read_csv(csv_path).size(), 1u);
    json report = json::parse(read_text(json_path));
    EXPECT_EQ(
        report["meta"]["progress"],
        json({{"planned", 5}, {"done", 0}, {"complete", false}, {"journal", (dir / "r.journal.jsonl").string()}}));

    for (size_t n = 1; n <= records.size(); ++n) {
        writer.add(records[n - 1]);
        // The journal has the row at once; the reports wait for their next render (5 s by default).
        const auto journaled = read_journal(dir / "r.journal.jsonl").records;
        ASSERT_EQ(journaled.size(), n);
        EXPECT_EQ(json(journaled.back()), json(records[n - 1]));
        EXPECT_EQ(writer.done(), n);
    }
    writer.render();
    const auto from_json = read_records_json(json_path);
    ASSERT_EQ(from_json.size(), records.size());
    for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(json(from_json[i]), json(records[i]));
    EXPECT_EQ(read_csv(csv_path).size(), records.size() + 1);
    report = json::parse(read_text(json_path));
    EXPECT_EQ(report["meta"]["schema_version"], kReportSchemaVersion);
    EXPECT_EQ(report["meta"]["progress"]["done"], 5);
    EXPECT_EQ(report["meta"]["progress"]["complete"], true);
    EXPECT_EQ(report["summary"]["ok"], 3);
    EXPECT_EQ(directory_entries(json_path.parent_path()), (std::vector<std::string>{"report.csv", "report.json"}));
}

// The writer renders the reports as text from each row's serialised form (fast); they must be the very JSON
// report_json() describes, baseline speed-ups and summary included, and the very CSV csv_document() makes.
TEST(ReportWriter, TheRenderedReportIsExactlyTheJsonReportJsonDescribes) {
    for (const Baseline& baseline : {Baseline(), Baseline::same_for_all("cublas"),
                                     Baseline::per_dtype({{DType::fp32, "cublas"}, {DType::tf32, "cpu_naive"}})}) {
        SCOPED_TRACE(baseline.to_text());
        const fs::path dir = fresh_dir("writer_same_json");
        const auto records = numbered(mixed_records());
        const json meta = make_report_meta(sample_meta_inputs());
        ReportWriter writer(dir / "r.json", dir / "r.csv", fresh_journal(dir), meta, baseline, 6,
                            {records[1], records[0]});
        for (size_t i = 2; i < records.size(); ++i) writer.add(records[i]);
        writer.render();
        json expected_meta = meta;
        expected_meta["progress"] = {
            {"planned", 6}, {"done", 5}, {"complete", false}, {"journal", (dir / "r.journal.jsonl").string()}};
        EXPECT_EQ(json::parse(read_text(dir / "r.json")), report_json(expected_meta, records, baseline));
        EXPECT_EQ(read_text(dir / "r.csv"), csv_document(records, baseline));
    }
    const fs::path dir = fresh_dir("writer_same_json_empty");
    ReportWriter empty(dir / "r.json", std::nullopt, fresh_journal(dir), json::object(),
                       Baseline::same_for_all("cublas"), 1);
    EXPECT_EQ(json::parse(read_text(dir / "r.json"))["records"], json::array());
}

TEST(ReportWriter, WithAZeroIntervalEveryRowIsRendered) {
    const fs::path dir = fresh_dir("writer_every_row");
    ReportWriter writer(dir / "r.json", std::nullopt, fresh_journal(dir), json::object(), Baseline(), 5);
    writer.set_render_interval(std::chrono::milliseconds(0));
    const auto records = numbered(mixed_records());
    for (size_t n = 1; n <= 2; ++n) {
        writer.add(records[n - 1]);
        EXPECT_EQ(read_records_json(dir / "r.json").size(), n);
    }
}

TEST(ReportWriter, ResumedRowsComeFirstInPlanOrderAndAJobIsNeverAddedTwice) {
    const fs::path dir = fresh_dir("writer_resumed");
    auto records = numbered(mixed_records());
    // Rows 0, 3 and 4 are done (read back from a journal, in any order); 1 and 2 are still to come.
    ReportWriter writer(dir / "r.json", std::nullopt, fresh_journal(dir), json::object(), Baseline(), 5,
                        {records[4], records[0], records[3], records[0]});
    EXPECT_EQ(writer.done(), 3u);
    EXPECT_TRUE(writer.has(3));
    EXPECT_FALSE(writer.has(1));
    EXPECT_THROW(writer.add(records[3]), std::logic_error);
    writer.add(records[2]);
    writer.add(records[1]);
    writer.render();
    std::vector<uint64_t> ids;
    for (const auto& r : read_records_json(dir / "r.json")) ids.push_back(r.job_id);
    EXPECT_EQ(ids, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(json::parse(read_text(dir / "r.json"))["meta"]["progress"]["complete"], true);
    EXPECT_EQ(read_journal(dir / "r.journal.jsonl").records.size(), 2u);  // only the new rows were journaled
}

TEST(ProgressReporter, CountsResumedRowsPrintsEachSkipReasonOnceAndNamesTheDevice) {
    const fs::path dir = fresh_dir("writer_progress");
    auto resumed = ok_record("cpu_naive", {8, 8, 8}, 1.0);
    resumed.job_id = 0;
    ReportWriter writer(dir / "r.json", std::nullopt, fresh_journal(dir), json::object(), Baseline(), 5, {resumed});
    std::ostringstream out;
    auto owned = std::make_unique<ProgressReporter>(out, false);
    ProgressReporter& progress = *owned;
    writer.add_reporter(std::move(owned));
    EXPECT_EQ(out.str(), "") << "a resumed row is counted, not printed";
    for (uint64_t id : {1, 2}) {
        auto skipped = failed_record("cuda_x", {8, 8, 8}, RowStatus::skipped, "no CUDA device");
        skipped.job_id = id;
        writer.add(skipped);
    }
    auto lane = ok_record("cuda_y", {16, 16, 16}, 2.0);
    lane.job_id = 3;
    lane.extra.device = 1;
    lane.extra.device_uuid = "GPU-b";
    writer.add(lane);
    progress.finish();
    const std::string text = out.str();
    EXPECT_NE(text.find("[2/5] cuda_x  fp32  8x8x8  skipped  no CUDA device\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("[3/5]"), std::string::npos) << "the second row of a reason already printed: " << text;
    EXPECT_NE(text.find("[4/5] cuda_y  fp32  16x16x16  ok  2.000 ms"), std::string::npos) << text;
    EXPECT_NE(text.find(" [device 1]\n"), std::string::npos) << text;
    EXPECT_NE(text.find("runner: 1 more row(s) skipped: no CUDA device\n"), std::string::npos) << text;

    // With quiet skips (the reason was said before any row) no skipped row and no summary is printed.
    const fs::path quiet_dir = fresh_dir("writer_progress_quiet");
    ReportWriter quiet_writer(quiet_dir / "r.json", std::nullopt, fresh_journal(quiet_dir), json::object(), Baseline(),
                              1);
    std::ostringstream quiet_out;
    auto quiet = std::make_unique<ProgressReporter>(quiet_out, true);
    ProgressReporter& quiet_progress = *quiet;
    quiet_writer.add_reporter(std::move(quiet));
    quiet_writer.add(failed_record("cuda_x", {8, 8, 8}, RowStatus::skipped, "no CUDA device"));
    quiet_progress.finish();
    EXPECT_EQ(quiet_out.str(), "");
}

TEST(ReportWriter, WithoutACsvPathOnlyTheJsonAndItsJournalAreWritten) {
    const fs::path dir = fresh_dir("writer_meta");
    ReportWriter writer(dir / "r.json", std::nullopt, fresh_journal(dir), make_report_meta(sample_meta_inputs()),
                        Baseline(), 1);
    writer.add(ok_record("cpu_blocked", k512, 1.0));
    writer.render();
    const json report = json::parse(read_text(dir / "r.json"));
    EXPECT_EQ(report["meta"]["kreg_version"], json(make_report_meta(sample_meta_inputs()))["kreg_version"]);
    EXPECT_EQ(report["records"].size(), 1u);
    EXPECT_EQ(directory_entries(dir), (std::vector<std::string>{"r.journal.jsonl", "r.json"}));  // no CSV asked for
}

TEST(ReportWriter, LaterBaselineRowUpdatesEarlierSpeedups) {
    const fs::path dir = fresh_dir("writer_baseline");
    ReportWriter writer(std::nullopt, dir / "r.csv", fresh_journal(dir), json::object(),
                        Baseline::same_for_all("cublas"), 2);
    writer.set_render_interval(std::chrono::milliseconds(0));
    Record blocked = ok_record("cpu_blocked", k512, 4.0), cublas = ok_record("cublas", k512, 1.0);
    blocked.job_id = 0;
    cublas.job_id = 1;
    writer.add(blocked);
    EXPECT_EQ((CsvRow{read_csv(dir / "r.csv")[0], read_csv(dir / "r.csv")[1]}["speedup_vs_baseline"]), "");
    writer.add(cublas);
    const auto rows = read_csv(dir / "r.csv");
    EXPECT_EQ((CsvRow{rows[0], rows[1]}["speedup_vs_baseline"]), "0.25");
    EXPECT_EQ((CsvRow{rows[0], rows[2]}["speedup_vs_baseline"]), "1");
}

TEST(ReportWriter, UnwritablePathFailsAtConstruction) {
    const fs::path dir = fresh_dir("writer_unwritable");
    write_file_atomically(dir / "file", "x");
    EXPECT_THROW(ReportWriter(dir / "file" / "r.json", std::nullopt, fresh_journal(dir), json::object(), Baseline(), 1),
                 std::runtime_error);
}

// ---------------------------------------------------------------------------------------------------
// Speed-ups

TEST(Speedup, BaselineMedianOverRowMedianForTheSameProblem) {
    const std::vector<Record> all{ok_record("cublas", k512, 0.5), ok_record("mine", k512, 2.0),
                                  ok_record("cublas", k256, 0.1), ok_record("mine", k256, 0.05),
                                  ok_record("mine", k512, 1.0, DType::tf32)};
    EXPECT_DOUBLE_EQ(*speedup_vs_baseline(all[1], all, Baseline::same_for_all("cublas")), 0.25);
    EXPECT_DOUBLE_EQ(*speedup_vs_baseline(all[3], all, Baseline::same_for_all("cublas")), 2.0);
    EXPECT_DOUBLE_EQ(*speedup_vs_baseline(all[0], all, Baseline::same_for_all("cublas")), 1.0);
    EXPECT_FALSE(speedup_vs_baseline(all[4], all, Baseline::same_for_all("cublas")));  // no tf32 baseline
    EXPECT_FALSE(speedup_vs_baseline(all[1], all, Baseline::same_for_all("nonexistent")));
}

TEST(Speedup, NeedsBothRowsOk) {
    std::vector<Record> all{ok_record("cublas", k512, 0.5), ok_record("mine", k512, 2.0)};
    Record wrong = ok_record("mine", k512, 0.1);
    wrong.status = RowStatus::wrong_result;
    EXPECT_FALSE(speedup_vs_baseline(wrong, all, Baseline::same_for_all("cublas")));

    all[0].status = RowStatus::failed;
    EXPECT_FALSE(speedup_vs_baseline(all[1], all, Baseline::same_for_all("cublas")));
    // A later ok baseline row for the same problem is used when the first one failed.
    all.push_back(ok_record("cublas", k512, 1.0));
    EXPECT_DOUBLE_EQ(*speedup_vs_baseline(all[1], all, Baseline::same_for_all("cublas")), 0.5);
}

TEST(Speedup, BatchAgreesWithSingleRow) {
    std::vector<Record> all = mixed_records();
    all.push_back(ok_record("cublas", k512, 9.0));  // a second baseline row: the first one counts
    all.push_back(ok_record("cublas", k256, 0.5));
    const auto batch = speedups_vs_baseline(all, Baseline::same_for_all("cublas"));
    ASSERT_EQ(batch.size(), all.size());
    for (size_t i = 0; i < all.size(); ++i)
        EXPECT_EQ(batch[i], speedup_vs_baseline(all[i], all, Baseline::same_for_all("cublas"))) << i;
    EXPECT_DOUBLE_EQ(*batch[2], 2.0);
    for (const auto& s : speedups_vs_baseline(all, Baseline())) EXPECT_FALSE(s);
}

// Rows that differ only in their per-call tile edge are different problems, in the batch as for one row.
TEST(Speedup, TheTileEdgeIsPartOfTheProblem) {
    const auto block_row = [](const char* kernel, int64_t block, double median_ms) {
        Record r = ok_record(kernel, Shape{64, 64, 0, block}, median_ms);
        r.operation = Operation::block_transpose;
        return r;
    };
    const std::vector<Record> all{block_row("copy", 2, 1.0), block_row("copy", 4, 3.0), block_row("mine", 2, 2.0),
                                  block_row("mine", 4, 1.0)};
    const auto batch = speedups_vs_baseline(all, Baseline::same_for_all("copy"));
    ASSERT_EQ(batch.size(), 4u);
    EXPECT_DOUBLE_EQ(*batch[2], 0.5);
    EXPECT_DOUBLE_EQ(*batch[3], 3.0);
    for (size_t i = 0; i < all.size(); ++i)
        EXPECT_EQ(batch[i], speedup_vs_baseline(all[i], all, Baseline::same_for_all("copy"))) << i;
}

// ---------------------------------------------------------------------------------------------------
// Console

// Positions where each label starts in the header line.
std::vector<size_t> column_starts(const std::string& header, const std::vector<std::string>& labels) {
    std::vector<size_t> starts;
    for (const auto& label : labels) {
        const size_t at = header.find(label, starts.empty() ? 0 : starts.back());
        EXPECT_NE(at, std::string::npos) << label;
        starts.push_back(at);
    }
    return starts;
}

void expect_aligned(const std::vector<std::string>& lines, const std::vector<size_t>& starts) {
    for (const std::string& line : lines) {
        EXPECT_EQ(line.find_last_not_of(' ') + 1, line.size()) << "trailing spaces: '" << line << "'";
        for (size_t c = 0; c < starts.size(); ++c) {
            const size_t s = starts[c];
            if (s >= line.size()) continue;  // an empty last column
            EXPECT_NE(line[s], ' ') << "column " << c << " of '" << line << "'";
            if (s > 0) EXPECT_EQ(line[s - 1], ' ') << "column " << c << " of '" << line << "'";
            if (c + 1 < starts.size() && starts[c + 1] < line.size()) {
                // Between this column's text and the next column's start there is only padding.
                const std::string cell = line.substr(s, starts[c + 1] - s);
                const size_t end = cell.find_last_not_of(' ');
                EXPECT_GE(cell.size() - end - 1, 2u) << "column " << c << " of '" << line << "'";
            }
        }
    }
}

TEST(ConsoleTable, ColumnsAlignAndCountsFollow) {
    const auto records = mixed_records();
    const std::string table = format_table(records, Baseline::same_for_all("cublas"));
    const auto lines = split(table, '\n');
    // header, rule, 5 rows, the skipped row's reason (1 line) and the crashed row's (2 lines), blank, counts
    ASSERT_EQ(lines.size(), 2 + records.size() + 3 + 2) << table;
    const std::vector<std::string> labels{"kernel",    "dtype",   "shape",   "status",
                                          "median ms", "GFLOP/s", "max err", "speed-up"};
    const auto starts = column_starts(lines[0], labels);
    EXPECT_EQ(starts[0], 0u);
    const std::vector<std::string> rows{lines[0], lines[1], lines[2], lines[3], lines[4], lines[5], lines[7]};
    expect_aligned(rows, starts);

    // Cells land under their headers.
    for (size_t i = 0; i < records.size(); ++i) {
        const std::string& line = rows[2 + i];
        EXPECT_EQ(line.substr(starts[0], records[i].kernel.size()), records[i].kernel);
        EXPECT_EQ(line.substr(starts[2], to_string(records[i].shape).size()), to_string(records[i].shape));
        EXPECT_EQ(line.substr(starts[3], to_string(records[i].status).size()), to_string(records[i].status));
    }
    EXPECT_EQ(lines[2].substr(starts[4], 4), "0.5 ");   // cublas median
    EXPECT_EQ(lines[3].substr(starts[7], 5), "0.25x");  // cpu_blocked vs cublas
    EXPECT_EQ(lines[4].substr(starts[7]), "-");         // no baseline at 256x256x128; an ok row has no reason
    // A row that is not ok: its whole reason under it, line by line.
    EXPECT_EQ(lines[6], "    shape, not a multiple of 64");
    EXPECT_EQ(lines[8], "    SIGSEGV \"in\" run_gemm");
    EXPECT_EQ(lines[9], "    at 0x0");
    EXPECT_EQ(lines[10], "");
    EXPECT_EQ(lines[11], "5 rows: 3 ok, 1 skipped, 1 crashed");
}

TEST(ConsoleTable, NoSpeedupColumnWithoutBaselineAndLongReasonsAreShownWhole) {
    const std::string reason =
        "first call: NaN at (0, 0) computed from the padding after B: a value was read past the "
        "end of B (the NaN carries its payload) " +
        std::string(300, 'r');
    std::vector<Record> records{ok_record("a", k512, 1.0), failed_record("b", k512, RowStatus::failed, reason)};
    const std::string table = format_table(records, Baseline());
    EXPECT_EQ(table.find("speed-up"), std::string::npos);
    const auto lines = split(table, '\n');
    const auto starts =
        column_starts(lines[0], {"kernel", "dtype", "shape", "status", "median ms", "GFLOP/s", "max err"});
    expect_aligned(std::vector<std::string>(lines.begin(), lines.begin() + 4), starts);
    EXPECT_EQ(lines[4], "    " + reason);
    EXPECT_EQ(table.find("..."), std::string::npos) << table;
    EXPECT_EQ(lines.back(), "2 rows: 1 ok, 1 failed");
}

TEST(IndentedText, EveryLineIndentedAndPrintable) {
    EXPECT_EQ(indented_text("", 4, 100), "");
    EXPECT_EQ(indented_text("a\nb\r\n\x1b[31mc ", 2, 100), "  a\n  b\n   [31mc\n");
}

// A bf16 and tf32 sweep: each row is compared with the baseline of its own dtype, never another dtype's.
std::vector<Record> two_dtype_records() {
    return {ok_record("cublas_bf16", k512, 0.5, DType::bf16), ok_record("mma", k512, 1.0, DType::bf16),
            ok_record("cublas_tf32", k512, 1.0, DType::tf32), ok_record("mma", k512, 0.8, DType::tf32),
            ok_record("mma", k512, 4.0, DType::fp32)};
}
const Baseline kPerDtype = Baseline::per_dtype({{DType::bf16, "cublas_bf16"}, {DType::tf32, "cublas_tf32"}});

TEST(Speedup, EachRowAgainstTheBaselineOfItsDtype) {
    const auto all = two_dtype_records();
    const auto batch = speedups_vs_baseline(all, kPerDtype);
    ASSERT_EQ(batch.size(), all.size());
    EXPECT_DOUBLE_EQ(*batch[0], 1.0);
    EXPECT_DOUBLE_EQ(*batch[1], 0.5);  // 0.5 ms cublas_bf16 / 1.0 ms
    EXPECT_DOUBLE_EQ(*batch[2], 1.0);
    EXPECT_DOUBLE_EQ(*batch[3], 1.25);  // 1.0 ms cublas_tf32 / 0.8 ms
    EXPECT_FALSE(batch[4]);             // fp32 has no baseline here
    for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(batch[i], speedup_vs_baseline(all[i], all, kPerDtype)) << i;
    // One kernel for all dtypes finds no cublas_bf16 rows in tf32: that is why per-dtype baselines exist.
    const auto one = speedups_vs_baseline(all, Baseline::same_for_all("cublas_bf16"));
    EXPECT_DOUBLE_EQ(*one[1], 0.5);
    EXPECT_FALSE(one[3]);
}

TEST(ReportJson, PerDtypeBaselineIsAnObjectAndSpeedupsFollowTheRowsDtype) {
    const json report = report_json(json::object(), two_dtype_records(), kPerDtype);
    EXPECT_EQ(report["baseline"], json({{"bf16", "cublas_bf16"}, {"tf32", "cublas_tf32"}}));
    const json& rows = report["records"];
    EXPECT_DOUBLE_EQ(rows[1]["speedup_vs_baseline"].get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(rows[3]["speedup_vs_baseline"].get<double>(), 1.25);
    EXPECT_TRUE(rows[4]["speedup_vs_baseline"].is_null());
}

TEST(Csv, SpeedupsFollowTheRowsDtype) {
    const auto rows = parse_csv(csv_document(two_dtype_records(), kPerDtype));
    ASSERT_EQ(rows.size(), 6u);
    EXPECT_EQ((CsvRow{rows[0], rows[2]}["speedup_vs_baseline"]), "0.5");
    EXPECT_EQ((CsvRow{rows[0], rows[4]}["speedup_vs_baseline"]), "1.25");
    EXPECT_EQ((CsvRow{rows[0], rows[5]}["speedup_vs_baseline"]), "");
}

TEST(ConsoleTable, SpeedupsFollowTheRowsDtype) {
    const auto lines = split(format_table(two_dtype_records(), kPerDtype), '\n');
    const auto starts = column_starts(lines[0], {"speed-up"});
    EXPECT_EQ(lines[3].substr(starts[0]), "0.50x");
    EXPECT_EQ(lines[5].substr(starts[0]), "1.25x");
    EXPECT_EQ(lines[6].substr(starts[0]), "-");
}

TEST(ReportWriter, PerDtypeBaselineInTheRenderedReportAndCsv) {
    const fs::path dir = fresh_dir("writer_per_dtype");
    auto records = two_dtype_records();
    for (size_t i = 0; i < records.size(); ++i) records[i].job_id = i;
    ReportWriter writer(dir / "r.json", dir / "r.csv", fresh_journal(dir), json::object(), kPerDtype, records.size());
    for (const Record& r : records) writer.add(r);
    writer.render();
    const json report = json::parse(read_text(dir / "r.json"));
    EXPECT_EQ(report["baseline"], json({{"bf16", "cublas_bf16"}, {"tf32", "cublas_tf32"}}));
    EXPECT_DOUBLE_EQ(report["records"][3]["speedup_vs_baseline"].get<double>(), 1.25);
    const auto rows = read_csv(dir / "r.csv");
    EXPECT_EQ((CsvRow{rows[0], rows[4]}["speedup_vs_baseline"]), "1.25");
}

TEST(ConsoleTable, FarSlowerKernelDoesNotReadAsZeroSpeedup) {
    const std::vector<Record> records{ok_record("cublas", k512, 0.0123), ok_record("cpu_naive", k512, 250.0)};
    const auto lines = split(format_table(records, Baseline::same_for_all("cublas")), '\n');
    const auto starts = column_starts(lines[0], {"speed-up"});
    EXPECT_EQ(lines[2].substr(starts[0]), "1.00x");
    EXPECT_EQ(lines[3].substr(starts[0]), "4.9e-05x");
}

TEST(ConsoleTable, EmptyTableStillHasCounts) {
    const auto lines = split(format_table({}, Baseline()), '\n');
    EXPECT_EQ(lines.back(), "0 rows");
}

TEST(ConsoleProgress, OkRowShowsTiming) {
    Record r = ok_record("cpu_blocked", k512, 1.234);
    r.gflops = 217.5;
    EXPECT_EQ(format_progress(3, 40, r), "[ 3/40] cpu_blocked  fp32  512x512x512  ok  1.234 ms  217.5 GFLOP/s");
    EXPECT_EQ(format_progress(40, 40, r).substr(0, 8), "[40/40] ");
}

TEST(ConsoleProgress, OtherRowsShowErrorAndReason) {
    Record r = failed_record("cpu_naive", k256, RowStatus::wrong_result, "max error 0.032 above tolerance\n1e-05");
    r.max_rel_err = 0.032;
    EXPECT_EQ(
        format_progress(7, 12, r),
        "[ 7/12] cpu_naive  fp32  256x256x128  wrong_result  max err 0.032  max error 0.032 above tolerance 1e-05");
}

TEST(OneLine, CutsAtACharacterBoundary) {
    EXPECT_EQ(one_line("a\nb\tc", 10), "a b c");
    EXPECT_EQ(one_line("abcdefghij", 8), "abcde...");
    // "é" is two bytes; cutting after 4 bytes would split it.
    const std::string cut = one_line("abc\xc3\xa9xxxxxxxx", 7);
    EXPECT_EQ(cut, "abc...");
}

}  // namespace
}  // namespace kreg
