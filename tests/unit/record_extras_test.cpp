// The typed evidence of a row (common/record_extras.hpp): every struct survives its JSON round trip,
// what a worker sends is read strictly (an unknown field, a wrong type or a missing field is refused,
// naming the JSON path), and the reports kreg renders match configs/schema/report.schema.json.
#include "common/job.hpp"
#include "common/record_extras.hpp"
#include "json_schema.hpp"
#include "report/journal.hpp"
#include "report/json_report.hpp"
#include "report/meta.hpp"
#include "report/report_writer.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

namespace kreg {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using test::JsonSchema;

// Every member set, optional ones included, so a field the writer or the reader forgets shows.
RecordExtras full_extras() {
    RecordExtras x;
    x.device = 1;
    x.launch = LaunchInfo{{16, 8, 1}, {128, 1, 1}, 49152};
    x.launch_error = "KREG_STATUS_ERROR: no";
    x.variant = "cuBLASLt 13.1.0 algo 66 tile 256x128 stages 4 splitK 1";
    x.attributes = KernelAttributes{96, 32768, 65536, 16, 1024, 90, 90};
    x.attributes_error = "cudaErrorInvalidDeviceFunction";
    x.model_bytes = 1.5e9;
    x.verify_sampled = true;
    x.warm_cache = false;
    x.l2_flush_bytes = 125829120;
    x.timing_method = "held_stream_until_timeout";
    x.launch_overhead_ms = 0.004;
    x.hold_timeouts = 2;
    x.hold_timeout_s = 1.0;
    x.kernel_time = KernelTimeEvidence{10, 0.0062, 0.006, 0.0088, 1, 0, 1, 2, 3, 0.5, 2, 0.4, 1};
    x.timer_fallback = "CUPTI unavailable: CUPTI_ERROR_NOT_INITIALIZED";
    x.c_fence = "guard_band";
    x.c_fence_fallback = "the driver has no cuMemAddressReserve";
    AnticheatEvidence a;
    a.calls = 13;
    a.calls_verified = 12;
    a.calls_exported = 1;
    a.every_call_checked = true;
    a.buffer_sets = 3;
    a.failed_at = "timed call 4";
    a.device_wide_sync = true;
    a.threads_left_running = true;
    a.max_threads_left = 2;
    a.guard_band_elements = 1024;
    a.guard_page_bytes = 1 << 20;
    a.timing = TimingCrossCheckFacts{true, 3, 0.5, 2.5, 0.05};
    a.off_stream_calls = 5;
    a.outliving_calls = 4;
    x.anticheat = a;
    x.call_checks = CallChecks{{"first call", "last timed call"}, 7, 16, 3e-7};
    SamplingEvidence s;
    s.stop = "noise_target";
    s.confidence = 0.95;
    s.relative_half_width = 0.004;
    s.noise_target = 0.005;
    s.time_cap_s = 1.0;
    s.clock_settle = ClockSettleFacts{20, 0.3, true};
    x.sampling = s;
    RooflineEvidence r;
    r.ceiling = "host_fp32";
    r.unavailable = "not measured";
    r.flops = 2e9;
    r.min_dram_bytes = 1.2e7;
    r.arithmetic_intensity = 166.7;
    r.modelled_ai = 40.0;
    r.achieved_tflops = 1.5;
    r.measured_peak_tflops = 51.2;
    r.fraction_of_measured_peak = 0.03;
    r.computed_peak_tflops = 66.9;
    r.fraction_of_computed_peak = 0.02;
    r.peak_tflops = 66.9;
    r.bandwidth_gbps = 4800;
    r.ridge_ai = 13.9;
    r.bound = "compute";
    r.floor_ms = 0.03;
    r.safety_factor = 0.5;
    r.faster_than_floor = false;
    x.roofline = r;
    x.trusted_check = TrustedCheckEvidence{5, true, {1, 2, 18446744073709551615ULL}};
    x.timing_claims = TimingClaims{1.25, 1.0, true, 0.3};
    return x;
}

json with(json j, const std::string& pointer, json value) {
    j[json::json_pointer(pointer)] = std::move(value);
    return j;
}

// The message of the ExtrasError reading j throws, or "" when it reads.
std::string read_error(const json& j) {
    try {
        (void)j.get<RecordExtras>();
    } catch (const ExtrasError& e) {
        return e.what();
    }
    return "";
}

TEST(RecordExtras, EveryStructSurvivesItsRoundTrip) {
    const RecordExtras x = full_extras();
    const json j = x;
    // The keys the reports have always had.
    EXPECT_EQ(j["launch"]["grid"], json({16, 8, 1}));
    EXPECT_EQ(j["attributes"]["registers"], 96);
    EXPECT_EQ(j["anticheat"]["timing_mismatch"], true) << "the cross-check's facts stay flat in anticheat";
    EXPECT_EQ(j["sampling"]["clock_settle"]["calls"], 20);
    EXPECT_EQ(j["trusted_check"]["call_seeds"][2], 18446744073709551615ULL);
    const RecordExtras back = j.get<RecordExtras>();
    EXPECT_EQ(json(back), j);
    // Each struct alone, through its own to_json/from_json.
    EXPECT_EQ(json(j["launch"].get<LaunchInfo>()), j["launch"]);
    EXPECT_EQ(json(j["attributes"].get<KernelAttributes>()), j["attributes"]);
    EXPECT_EQ(json(j["anticheat"].get<AnticheatEvidence>()), j["anticheat"]);
    EXPECT_EQ(json(j["call_checks"].get<CallChecks>()), j["call_checks"]);
    EXPECT_EQ(json(j["kernel_time"].get<KernelTimeEvidence>()), j["kernel_time"]);
    EXPECT_EQ(j["kernel_time"]["event_ms_median"], 0.0088);
    EXPECT_EQ(json(j["sampling"].get<SamplingEvidence>()), j["sampling"]);
    EXPECT_EQ(json(j["sampling"]["clock_settle"].get<ClockSettleFacts>()), j["sampling"]["clock_settle"]);
    EXPECT_EQ(json(j["roofline"].get<RooflineEvidence>()), j["roofline"]);
    EXPECT_EQ(json(j["trusted_check"].get<TrustedCheckEvidence>()), j["trusted_check"]);
    EXPECT_EQ(json(j["timing_claims"].get<TimingClaims>()), j["timing_claims"]);
    EXPECT_EQ(back.anticheat->timing->wall_ms_median, 2.5);
    EXPECT_EQ(*back.launch_overhead_ms, 0.004);
}

TEST(RecordExtras, UnsetMembersAreAbsentAndAnEmptyObjectReadsAsNothing) {
    const RecordExtras none;
    EXPECT_EQ(json(none), json::object());
    EXPECT_TRUE(none.empty());
    const RecordExtras back = json::object().get<RecordExtras>();
    EXPECT_FALSE(back.launch || back.anticheat || back.roofline || back.device);
    AnticheatEvidence cpu;  // no CUDA facts: no timing_* keys
    cpu.calls = 2;
    EXPECT_FALSE(json(cpu).contains("timing_mismatch"));
    EXPECT_FALSE(json(cpu).contains("device_wide_sync"));
}

TEST(RecordExtras, ARowWithoutABoundSaysWhyAndOlderUncalibratedRowsStillRead) {
    const TimingClaims claims{2.0, 0.0, true, std::numeric_limits<double>::infinity(), {}, {}, "a correctness run"};
    const json j = claims;
    EXPECT_FALSE(j.contains("harness_allowance_ms"));
    EXPECT_EQ(j["no_bound"], "a correctness run");
    const TimingClaims back = j.get<TimingClaims>();
    EXPECT_TRUE(std::isinf(back.harness_allowance_ms));
    EXPECT_EQ(back.no_bound, "a correctness run");
    json older = {{"claimed_median_ms", 2.0},
                  {"grader_bound_median_ms", 0.0},
                  {"believed", true},
                  {"harness_allowance_ms", "uncalibrated"}};
    EXPECT_TRUE(std::isinf(older.get<TimingClaims>().harness_allowance_ms));
    // Bounded: the allowance with its error and what measured it.
    const TimingClaims bounded{2.0, 1.7, true, 0.3, 0.1, "cpu_naive, 20 timed calls", {}};
    const json b = bounded;
    EXPECT_EQ(b["harness_allowance_error_ms"], 0.1);
    EXPECT_EQ(b["calibration"], "cpu_naive, 20 timed calls");
    EXPECT_FALSE(b.contains("no_bound"));
    EXPECT_EQ(b.get<TimingClaims>().harness_allowance_error_ms, 0.1);
    // Neither an allowance nor a reason: refused.
    json neither = older;
    neither.erase("harness_allowance_ms");
    EXPECT_THROW(neither.get<TimingClaims>(), std::exception);
}

TEST(RecordExtras, OlderReportsNullsReadAsUnset) {
    // The roofline of reports before the typed extras wrote null for values it could not compute.
    const json roof = {{"flops", 1.0}, {"ridge_ai", nullptr}, {"bound", nullptr}, {"faster_than_floor", nullptr}};
    const RooflineEvidence r = roof.get<RooflineEvidence>();
    EXPECT_EQ(*r.flops, 1.0);
    EXPECT_FALSE(r.ridge_ai || r.bound || r.faster_than_floor);
}

TEST(RecordExtras, AnUnknownFieldIsRefusedAtEveryLevelNamingItsPath) {
    const json good = full_extras();
    EXPECT_EQ(read_error(good), "");
    EXPECT_EQ(read_error(with(good, "/bogus", 1)), "/extra/bogus: unknown field");
    EXPECT_EQ(read_error(with(good, "/launch/grid_size", 1)), "/extra/launch/grid_size: unknown field");
    EXPECT_EQ(read_error(with(good, "/attributes/spills", 0)), "/extra/attributes/spills: unknown field");
    EXPECT_EQ(read_error(with(good, "/anticheat/cheated", false)), "/extra/anticheat/cheated: unknown field");
    EXPECT_EQ(read_error(with(good, "/call_checks/skipped", 0)), "/extra/call_checks/skipped: unknown field");
    EXPECT_EQ(read_error(with(good, "/kernel_time/trust_me", 1)), "/extra/kernel_time/trust_me: unknown field");
    EXPECT_EQ(read_error(with(good, "/sampling/clock_settle/mhz", 1)),
              "/extra/sampling/clock_settle/mhz: unknown field");
    EXPECT_EQ(read_error(with(good, "/roofline/trust_me", true)), "/extra/roofline/trust_me: unknown field");
    EXPECT_EQ(read_error(with(good, "/trusted_check/note", "x")), "/extra/trusted_check/note: unknown field");
    EXPECT_EQ(read_error(with(good, "/timing_claims/note", "x")), "/extra/timing_claims/note: unknown field");
    // Each struct read on its own is as strict.
    EXPECT_THROW(
        (void)json({{"grid", {1, 1, 1}}, {"block", {1, 1, 1}}, {"dynamic_smem", 0}, {"x", 1}}).get<LaunchInfo>(),
        ExtrasError);
}

TEST(RecordExtras, WrongTypesAndMissingFieldsAreRefused) {
    const json good = full_extras();
    EXPECT_EQ(read_error(with(good, "/device", true)), "/extra/device: must be an integer, got boolean");
    EXPECT_EQ(read_error(with(good, "/attributes/registers", 2.5)),
              "/extra/attributes/registers: must be an integer, got number");
    EXPECT_EQ(read_error(with(good, "/launch/grid", json({1, 2}))),
              "/extra/launch/grid: must be an array of 3, got array");
    EXPECT_EQ(read_error(with(good, "/launch/block/1", -1)),
              "/extra/launch/block/1: must be an integer >= 0, got number");
    EXPECT_EQ(read_error(with(good, "/anticheat/every_call_checked", 1)),
              "/extra/anticheat/every_call_checked: must be true or false, got number");
    EXPECT_EQ(read_error(with(good, "/model_bytes", "1e9")), "/extra/model_bytes: must be a number, got string");
    EXPECT_EQ(read_error(with(good, "/sampling", json::array())), "/extra/sampling: must be an object, got array");
    EXPECT_EQ(read_error(with(good, "/hold_timeouts", 3000000000LL)), "/extra/hold_timeouts: out of range");
    json missing = good;
    missing["anticheat"].erase("calls");
    EXPECT_EQ(read_error(missing), "/extra/anticheat/calls: missing");
    json half = good;
    half["anticheat"].erase("timing_mismatch");
    EXPECT_EQ(read_error(half), "/extra/anticheat/mismatched_calls: without timing_mismatch");
    EXPECT_EQ(read_error(with(good, "/timing_claims/harness_allowance_ms", "lots")),
              "/extra/timing_claims/harness_allowance_ms: must be a number, got string");
}

Record sample_row() {
    Record r;
    r.job_id = 3;
    r.kernel = "cpu_naive";
    r.plugin = "cpu_naive";
    r.plugin_path = "/p/cpu_naive.so";
    r.shape = Shape{8, 8, 8};
    r.seed = 42;
    r.status = RowStatus::ok;
    r.timer = "host";
    r.samples_ms = {1.0, 1.1, 0.9};
    r.stats = TimingStats{3, 1.0, 0.9, 1.0, 0.1, 0.1};
    r.max_rel_err = 1e-7;
    r.tolerance = 1e-5;
    r.gflops = 0.001;
    r.extra = full_extras();
    return r;
}

TEST(RecordExtras, ARecordWithAnUnknownExtraIsRefusedAsAWholeAsTheWorkerProtocolReadsIt) {
    json row = sample_row();
    EXPECT_EQ(json(row.get<Record>()), row);
    row["extra"]["launch"]["lied"] = true;
    try {
        (void)row.get<Record>();
        FAIL() << "a record with an unknown extra field was read";
    } catch (const ExtrasError& e) {
        EXPECT_STREQ(e.what(), "/extra/launch/lied: unknown field");
    }
}

// ---- The report schema ------------------------------------------------------------------------------

JsonSchema report_schema() {
    return JsonSchema::load(std::string(KREG_SOURCE_DIR) + "/configs/schema/report.schema.json");
}

std::string joined(const std::vector<std::string>& errors) {
    std::string s;
    for (const auto& e : errors) s += e + "\n";
    return s;
}

json parse_file(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
}

MetaInputs meta_inputs() {
    MetaInputs in;
    in.argv = {"runner", "--kernels", "cpu_*"};
    in.config = {{"name", "t"}};
    in.seed = 42;
    in.plugins.push_back(PluginFacts{"/p/cpu_naive.so", "cpu_naive", "1.0.0", std::string(64, 'a'), 1, 0, ""});
    in.plugins.push_back(PluginFacts{"/p/bad.so", "", "", std::string(64, 'b'), 0, 0, "not a shared library"});
    return in;
}

TEST(ReportSchema, AReportWithEveryExtraAndItsProgressMatchesTheSchema) {
    static const test::ScratchRoot root("kreg_record_extras_test");
    const fs::path dir = root.fresh_dir("report-schema");
    Record failed = record_for(Job{}, RowStatus::crashed, "worker killed by SIGSEGV");
    failed.job_id = 4;
    failed.signal = "SIGSEGV";
    {
        ReportWriter writer(dir / "r.json", std::nullopt,
                            JournalWriter::create(dir / "r.journal.jsonl", {{"planned", 3}}, false),
                            make_report_meta(meta_inputs()), Baseline::same_for_all("cpu_naive"), 3);
        writer.add(sample_row());
        writer.add(failed);
        writer.render();
    }
    const json report = parse_file(dir / "r.json");
    ASSERT_TRUE(report["meta"].contains("progress"));
    EXPECT_EQ(report["meta"]["progress"]["complete"], false);
    const auto errors = report_schema().validate(report);
    EXPECT_TRUE(errors.empty()) << joined(errors);
}

TEST(ReportSchema, TheValidatorRefusesWhatTheSchemaForbids) {
    const json report = report_json(make_report_meta(meta_inputs()), {sample_row()}, Baseline());
    const JsonSchema schema = report_schema();
    ASSERT_TRUE(schema.validate(report).empty()) << joined(schema.validate(report));
    EXPECT_EQ(joined(schema.validate(with(report, "/records/0/extra/bogus", 1))),
              "/records/0/extra/bogus: unknown field\n");
    EXPECT_EQ(joined(schema.validate(with(report, "/records/0/status", "fine"))),
              "/records/0/status: \"fine\" is not one of "
              "[\"ok\",\"wrong_result\",\"skipped\",\"failed\",\"crashed\",\"timeout\"]\n");
    EXPECT_EQ(joined(schema.validate(with(report, "/records/0/extra/launch/grid", json({1, 2})))),
              "/records/0/extra/launch/grid: fewer than 3 items\n");
    EXPECT_EQ(joined(schema.validate(with(report, "/records/0/n", 0))), "/records/0/n: 0 < 1\n");  // m may be 0
    EXPECT_EQ(joined(schema.validate(with(report, "/summary/fine", 1))),
              "/summary/fine (name): \"fine\" is not one of "
              "[\"ok\",\"wrong_result\",\"skipped\",\"failed\",\"crashed\",\"timeout\"]\n");
    json no_seed = report;
    no_seed["meta"].erase("seed");
    EXPECT_EQ(joined(schema.validate(no_seed)), "/meta: missing required 'seed'\n");
    EXPECT_EQ(joined(schema.validate(with(report, "/records/0/extra/timing_claims/harness_allowance_ms", "lots"))),
              "/records/0/extra/timing_claims/harness_allowance_ms: matches 0 of oneOf's schemas, not exactly 1\n");
    // The baseline: null, one kernel, or one per dtype (issue 12), and nothing else.
    const Baseline per_dtype = Baseline::per_dtype({{DType::bf16, "cublas_bf16"}, {DType::tf32, "cublas_tf32"}});
    const json per_dtype_report = report_json(make_report_meta(meta_inputs()), {sample_row()}, per_dtype);
    EXPECT_TRUE(schema.validate(per_dtype_report).empty()) << joined(schema.validate(per_dtype_report));
    EXPECT_TRUE(schema.validate(with(report, "/baseline", "cublas_sgemm")).empty());
    EXPECT_FALSE(schema.validate(with(report, "/baseline", json{{"bf61", "cublas_bf16"}})).empty());
    EXPECT_FALSE(schema.validate(with(report, "/baseline", json{{"bf16", 3}})).empty());
    EXPECT_FALSE(schema.validate(with(report, "/baseline", json::array({"cublas_sgemm"}))).empty());
    EXPECT_THROW(JsonSchema(json{{"pattern", "x"}}).validate(json("x")), std::runtime_error)
        << "a keyword the validator does not implement is an error, not a pass";
}

// The committed full-format reports: the tools' fixture and the published results.
TEST(ReportSchema, CommittedReportsMatchTheSchemaAndReadAsRecords) {
    std::vector<fs::path> files{fs::path(KREG_TEST_DATA_DIR) / "reports" / "gpu_sample.json"};
    for (const auto& entry : fs::directory_iterator(fs::path(KREG_SOURCE_DIR) / "docs" / "results"))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    ASSERT_GE(files.size(), 2u);
    const JsonSchema schema = report_schema();
    for (const fs::path& f : files) {
        const json report = parse_file(f);
        const auto errors = schema.validate(report);
        EXPECT_TRUE(errors.empty()) << f << ":\n" << joined(errors);
        EXPECT_NO_THROW(read_records_json(f)) << f << ": the typed reader takes every row";
    }
}

}  // namespace
}  // namespace kreg
