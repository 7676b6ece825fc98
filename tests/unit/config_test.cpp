// Sweep configs: the bad-config corpus (each file with its expected JSON path and message), shape
// expansion, overrides, command-line size options, config paths, kernel globs, and the shipped configs
// and schema.
#include "common/baseline.hpp"
#include "common/suggest.hpp"
#include "config/sweep_config.hpp"
#include "bad_corpus.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

namespace kreg {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kData = KREG_TEST_DATA_DIR;
const fs::path kSource = KREG_SOURCE_DIR;

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The ConfigError that parsing text throws; fails the test when it does not throw.
ConfigError parse_error_of(const json& doc) {
    try {
        parse_sweep_config(doc, "t.json");
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError for " << doc.dump();
    return ConfigError("", "", "");
}

std::vector<Shape> shapes_of(const json& shape_specs) {
    return parse_sweep_config(json{{"kernels", {"k"}}, {"shapes", shape_specs}}, "t.json").shapes;
}
std::vector<Shape> squares(std::initializer_list<int64_t> sizes) {
    std::vector<Shape> out;
    for (int64_t s : sizes) out.push_back({s, s, s});
    return out;
}

// ---- ConfigError and suggestions ----

TEST(ConfigError, WhatJoinsFilePathAndMessage) {
    const ConfigError e("a.json", "/shapes/2/k", "size must be >= 1, got 0");
    EXPECT_STREQ(e.what(), "a.json: /shapes/2/k: size must be >= 1, got 0");
    EXPECT_EQ(e.file(), "a.json");
    EXPECT_EQ(e.json_path(), "/shapes/2/k");
    EXPECT_EQ(e.message(), "size must be >= 1, got 0");
    EXPECT_STREQ(ConfigError("a.json", "", "invalid JSON").what(), "a.json: invalid JSON");
}

TEST(Suggest, FindsTyposAndSwaps) {
    const std::vector<std::string> keys{"warmup", "repeats", "seed", "shapes"};
    EXPECT_EQ(closest_match("repeat", keys), "repeats");
    EXPECT_EQ(closest_match("reapets", keys), "repeats");  // adjacent swap counts once
    EXPECT_EQ(closest_match("Warmup", keys), "warmup");    // case-insensitive
    EXPECT_EQ(edit_distance("fp23", "fp32"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Suggest, StaysQuietWhenNothingIsClose) {
    EXPECT_EQ(closest_match("frobnicate", {"warmup", "repeats"}), std::nullopt);
    EXPECT_EQ(closest_match("x", {"m", "n", "k"}), std::nullopt);  // one edit is a whole rewrite here
    EXPECT_EQ(closest_match("abc", {}), std::nullopt);
    EXPECT_EQ(did_you_mean("frobnicate", {"warmup"}), "");
    EXPECT_EQ(did_you_mean("cpu_naiv", {"cpu_blocked", "cpu_naive"}), " (did you mean 'cpu_naive'?)");
}

TEST(Suggest, PrefersTheCloserCandidateThenTheEarlierOne) {
    EXPECT_EQ(closest_match("tf31", {"fp32", "tf32"}), "tf32");
    EXPECT_EQ(closest_match("abcd", {"abce", "abcf"}), "abce");
}

// ---- The bad-config corpus ----

// Every tests/data/bad_configs/X.json has X.expect: {"json_path": ..., "message_contains": ...}, and
// every .expect file its .json.
TEST(BadConfigs, EachFailsWithItsExpectedPathAndMessage) {
    EXPECT_GE(test::check_bad_corpus(kData / "bad_configs", [](const fs::path& f) { load_sweep_config(f); }), 30);
}

TEST(LoadSweepConfig, MissingFileIsAConfigErrorNamingIt) {
    const fs::path missing = kData / "good_configs" / "no_such_file.json";
    try {
        load_sweep_config(missing);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.file(), missing.string());
        EXPECT_NE(e.message().find("cannot open"), std::string::npos) << e.what();
    }
    try {
        load_sweep_config(kData / "good_configs");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.message().find("is a directory"), std::string::npos) << e.what();
    }
}

// ---- Parsing good configs ----

TEST(ParseSweepConfig, MinimalConfigGetsTheDefaults) {
    const fs::path file = kData / "good_configs" / "minimal.json";
    const SweepConfig c = load_sweep_config(file);
    EXPECT_EQ(c.source, file.string());
    EXPECT_EQ(c.name, "minimal");
    EXPECT_EQ(c.description, "");
    EXPECT_EQ(c.kernels, std::vector<std::string>{"cpu_naive"});
    EXPECT_EQ(c.shapes, (std::vector<Shape>{{2, 3, 4}}));
    EXPECT_EQ(c.dtypes, std::vector<DType>{DType::fp32});
    EXPECT_EQ(c.seed, 42u);
    const RunSettings defaults;
    EXPECT_EQ(c.settings.warmup, defaults.warmup);
    EXPECT_EQ(c.settings.repeats, defaults.repeats);
    EXPECT_EQ(c.settings.time_budget_s, std::nullopt);
    EXPECT_EQ(c.settings.verify, defaults.verify);
    EXPECT_EQ(c.settings.tolerance, std::nullopt);
    EXPECT_EQ(c.settings.timeout_s, defaults.timeout_s);
    EXPECT_EQ(c.settings.warm_cache, defaults.warm_cache);
    EXPECT_EQ(c.settings.device, defaults.device);
    EXPECT_TRUE(c.baseline.none());
    EXPECT_EQ(c.output.json, std::nullopt);
    EXPECT_EQ(c.output.csv, std::nullopt);
}

TEST(ParseSweepConfig, EveryKeyIsRead) {
    const SweepConfig c = load_sweep_config(kData / "good_configs" / "every_key.json");
    EXPECT_EQ(c.name, "everything");
    EXPECT_EQ(c.description, "Sets every top-level key once");
    EXPECT_EQ(c.kernels, (std::vector<std::string>{"cpu_*", "cuda_0?_*"}));
    std::vector<Shape> expected = squares({64, 128, 256});
    for (Shape s : std::vector<Shape>{{1, 3, 10},
                                      {1, 3, 20},
                                      {1, 3, 30},
                                      {2, 3, 10},
                                      {2, 3, 20},
                                      {2, 3, 30},
                                      {5, 9, 11},
                                      {6, 9, 12},
                                      {7, 9, 13}})
        expected.push_back(s);
    for (Shape s : squares({16, 24, 36, 54, 81})) expected.push_back(s);  // mul 1.5; then 128, 64 are repeats
    EXPECT_EQ(c.shapes, expected);
    EXPECT_EQ(c.dtypes, (std::vector<DType>{DType::bf16, DType::fp32}));
    EXPECT_EQ(c.seed, 18446744073709551615ull);
    EXPECT_EQ(c.settings.warmup, 0);
    EXPECT_EQ(c.settings.repeats, 7);
    EXPECT_EQ(c.settings.time_budget_s, 0.5);
    EXPECT_FALSE(c.settings.verify);
    EXPECT_EQ(c.settings.tolerance, 0.001);
    EXPECT_EQ(c.settings.timeout_s, 30.0);
    EXPECT_TRUE(c.settings.warm_cache);
    EXPECT_EQ(c.settings.device, 1);
    EXPECT_EQ(c.baseline, Baseline::same_for_all("cpu_naive"));
    EXPECT_EQ(c.output.json, "out/every.json");
    EXPECT_EQ(c.output.csv, "out/every.csv");
}

TEST(ParseSweepConfig, BaselineIsOneKernelOrOnePerDtype) {
    json doc{{"kernels", {"k"}}, {"shapes", {{{"square", 4}}}}, {"dtypes", {"bf16", "tf32", "fp32"}}};
    doc["baseline"] = "cublas_sgemm";
    const SweepConfig one = parse_sweep_config(doc, "one.json");
    EXPECT_TRUE(one.baseline.is_same_for_all());
    for (DType d : all_dtypes()) EXPECT_EQ(*one.baseline.kernel_for(d), "cublas_sgemm");
    EXPECT_EQ(one.to_json().at("baseline"), "cublas_sgemm");

    doc["baseline"] = {{"tf32", "cublas_tf32"}, {"bf16", "cublas_bf16"}};
    const SweepConfig per = parse_sweep_config(doc, "per.json");
    EXPECT_FALSE(per.baseline.is_same_for_all());
    EXPECT_EQ(*per.baseline.kernel_for(DType::bf16), "cublas_bf16");
    EXPECT_EQ(*per.baseline.kernel_for(DType::tf32), "cublas_tf32");
    EXPECT_EQ(per.baseline.kernel_for(DType::fp32), nullptr);  // fp32 rows get no speed-up
    EXPECT_EQ(per.baseline.kernels(), (std::vector<std::string>{"cublas_tf32", "cublas_bf16"}));
    EXPECT_EQ(per.to_json().at("baseline"), doc["baseline"]);
    json again = per.to_json();
    again.erase("source");
    EXPECT_EQ(parse_sweep_config(again, "per.json").baseline, per.baseline);
}

TEST(ParseSweepConfig, TheTimerIsAutoUnlessNamedAndAnUnknownOneNamesItsPath) {
    json doc{{"kernels", {"k"}}, {"shapes", {{{"square", 4}}}}};
    const SweepConfig plain = parse_sweep_config(doc, "t.json");
    EXPECT_EQ(plain.settings.timer, TimerChoice::automatic);
    EXPECT_FALSE(plain.to_json().contains("timer")) << "the default stays out of the report's config";
    doc["timer"] = "events";
    const SweepConfig events = parse_sweep_config(doc, "t.json");
    EXPECT_EQ(events.settings.timer, TimerChoice::events);
    EXPECT_EQ(events.to_json().at("timer"), "events");
    doc["timer"] = "fast";
    const ConfigError e = parse_error_of(doc);
    EXPECT_EQ(e.json_path(), "/timer");
    EXPECT_EQ(e.message(), "timer must be auto, cupti or events, got \"fast\"");
    // The job's settings carry it to the worker and back.
    RunSettings s;
    s.timer = TimerChoice::cupti;
    EXPECT_EQ(json(s).get<RunSettings>().timer, TimerChoice::cupti);
    json old_job = json(s);
    old_job.erase("timer");  // a worker reading a job from before the timer existed
    EXPECT_EQ(old_job.get<RunSettings>().timer, TimerChoice::automatic);
}

TEST(ParseSweepConfig, BaselineErrorsNameTheJsonPath) {
    const json base{{"kernels", {"k"}}, {"shapes", {{{"square", 4}}}}};
    const auto error_of = [&](const json& baseline) -> std::pair<std::string, std::string> {
        json doc = base;
        doc["baseline"] = baseline;
        try {
            parse_sweep_config(doc, "b.json");
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.file(), "b.json");
            return {e.json_path(), e.message()};
        }
        return {"no error", ""};
    };
    auto [path, message] = error_of({{"bf61", "cublas_bf16"}});
    EXPECT_EQ(path, "/baseline/bf61");
    EXPECT_NE(message.find("unknown dtype 'bf61'"), std::string::npos) << message;
    EXPECT_NE(message.find("did you mean 'bf16'"), std::string::npos) << message;
    std::tie(path, message) = error_of({{"bf16", ""}});
    EXPECT_EQ(path, "/baseline/bf16");
    EXPECT_NE(message.find("empty string"), std::string::npos) << message;
    std::tie(path, message) = error_of({{"tf32", 3}});
    EXPECT_EQ(path, "/baseline/tf32");
    std::tie(path, message) = error_of(json::object());
    EXPECT_EQ(path, "/baseline");
    EXPECT_NE(message.find("names no dtype"), std::string::npos) << message;
    std::tie(path, message) = error_of(json::array({"cublas_sgemm"}));
    EXPECT_EQ(path, "/baseline");
    EXPECT_NE(message.find("per dtype"), std::string::npos) << message;
    std::tie(path, message) = error_of("");
    EXPECT_EQ(path, "/baseline");
}

TEST(ParseBaselineOption, NameOrDtypePairs) {
    EXPECT_EQ(parse_baseline_option("cublas_sgemm"), Baseline::same_for_all("cublas_sgemm"));
    EXPECT_EQ(parse_baseline_option("fp32=cublas_sgemm, bf16=cublas_bf16"),
              Baseline::per_dtype({{DType::fp32, "cublas_sgemm"}, {DType::bf16, "cublas_bf16"}}));
    EXPECT_EQ(parse_baseline_option("fp32=cublas_sgemm,bf16=cublas_bf16").to_text(),
              "fp32=cublas_sgemm,bf16=cublas_bf16");
    for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
             {"", "empty kernel name"},
             {"bf61=cublas_bf16", "unknown dtype 'bf61' in 'bf61=cublas_bf16' (did you mean 'bf16'?)"},
             {"bf16=", "empty kernel name for bf16"},
             {"bf16=a,bf16=b", "dtype bf16 is given twice"},
             {"fp32=cublas_sgemm,cublas_bf16",
              "'cublas_bf16' in 'fp32=cublas_sgemm,cublas_bf16' is not DTYPE=KERNEL"}}) {
        try {
            parse_baseline_option(text);
            ADD_FAILURE() << "no error for '" << text << "'";
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.file(), kCommandLineSource);
            EXPECT_EQ(e.json_path(), "--baseline");
            EXPECT_NE(e.message().find(expected), std::string::npos) << e.message();
        }
    }
}

TEST(DefaultBaseline, EachDtypeGetsItsCublasKernelWhereTheSweepHasIt) {
    const std::vector<std::string> all_cublas{"cuda_10_mma", "cublas_sgemm", "cublas_tf32", "cublas_bf16"};
    const Baseline b = default_baseline({DType::bf16, DType::tf32, DType::fp32, DType::fp16}, all_cublas);
    EXPECT_EQ(b, Baseline::per_dtype(
                     {{DType::fp32, "cublas_sgemm"}, {DType::tf32, "cublas_tf32"}, {DType::bf16, "cublas_bf16"}}));
    EXPECT_EQ(b.kernel_for(DType::fp16), nullptr);  // no cuBLAS fp16 kernel is registered
    // Only the dtypes swept, and only kernels among the sweep's.
    EXPECT_EQ(default_baseline({DType::bf16}, all_cublas), Baseline::per_dtype({{DType::bf16, "cublas_bf16"}}));
    EXPECT_EQ(default_baseline({DType::bf16, DType::tf32}, {"cuda_10_mma", "cublas_tf32"}),
              Baseline::per_dtype({{DType::tf32, "cublas_tf32"}}));
    EXPECT_TRUE(default_baseline({DType::fp32}, {"cpu_naive"}).none());
    // An fp32-only sweep's default reads as the plain name in the report, as before.
    EXPECT_EQ(default_baseline({DType::fp32}, all_cublas).simplified_for({DType::fp32}).to_json(),
              json("cublas_sgemm"));
    EXPECT_EQ(b.simplified_for({DType::bf16, DType::tf32}), b);
    EXPECT_EQ(b.to_json(), json({{"bf16", "cublas_bf16"}, {"fp32", "cublas_sgemm"}, {"tf32", "cublas_tf32"}}));
    EXPECT_TRUE(Baseline().to_json().is_null());
}

TEST(ParseSweepConfig, NameDefaultsForSourcesThatAreNotFiles) {
    const json doc{{"kernels", {"k"}}, {"shapes", {{{"square", 4}}}}};
    EXPECT_EQ(parse_sweep_config(doc, std::string(kCommandLineSource)).name, "default");
    EXPECT_EQ(parse_sweep_config(doc, "dir/sweeps/a100.json").name, "a100");
}

TEST(ParseSweepConfig, ToJsonParsesBackToTheSameConfig) {
    const SweepConfig original = load_sweep_config(kData / "good_configs" / "every_key.json");
    json canonical = original.to_json();
    EXPECT_EQ(canonical.at("source"), original.source);
    canonical.erase("source");
    const SweepConfig again = parse_sweep_config(canonical, original.source);
    json again_json = again.to_json();
    again_json.erase("source");
    EXPECT_EQ(again_json, canonical);
    EXPECT_EQ(again.shapes, original.shapes);
    EXPECT_EQ(canonical.at("shapes").size(), original.shapes.size());
    EXPECT_EQ(canonical.at("dtypes"), json({"bf16", "fp32"}));
}

TEST(ParseSweepConfig, UnsetOptionalsAreLeftOutOfTheCanonicalForm) {
    const json j = load_sweep_config(kData / "good_configs" / "minimal.json").to_json();
    EXPECT_FALSE(j.contains("time_budget_s"));
    EXPECT_FALSE(j.contains("tolerance"));
    EXPECT_FALSE(j.contains("baseline"));
    EXPECT_EQ(j.at("output"), json::object());
    EXPECT_EQ(j.at("repeats"), RunSettings{}.repeats);
}

TEST(ParseSweepConfig, ErrorsInTheDocumentNameTheSource) {
    const ConfigError e = parse_error_of(json{{"kernels", {"k"}}, {"shapes", {{{"square", 0}}}}});
    EXPECT_EQ(e.file(), "t.json");
    EXPECT_EQ(e.json_path(), "/shapes/0/square");
    EXPECT_STREQ(e.what(), "t.json: /shapes/0/square: size must be >= 1, got 0");
}

TEST(ParseSweepConfig, KeysWithSlashOrTildeAreEscapedInThePath) {
    const ConfigError e = parse_error_of(json{{"kernels", {"k"}}, {"shapes", {{{"square", 4}}}}, {"a/b~c", 1}});
    EXPECT_EQ(e.json_path(), "/a~1b~0c");
}

// ---- Shape expansion ----

TEST(ShapeExpansion, ScalarsGiveOneShape) {
    EXPECT_EQ(shapes_of({{{"m", 3}, {"n", 5}, {"k", 7}}}), (std::vector<Shape>{{3, 5, 7}}));
}

TEST(ShapeExpansion, CartesianIsTheDefaultWithKInnermost) {
    const std::vector<Shape> expected{{1, 3, 4}, {1, 3, 5}, {2, 3, 4}, {2, 3, 5}};
    EXPECT_EQ(shapes_of({{{"m", {1, 2}}, {"n", 3}, {"k", {4, 5}}}}), expected);
    EXPECT_EQ(shapes_of({{{"m", {1, 2}}, {"n", 3}, {"k", {4, 5}}, {"combine", "cartesian"}}}), expected);
}

TEST(ShapeExpansion, ZipPairsListsAndBroadcastsScalars) {
    EXPECT_EQ(shapes_of({{{"m", {1, 2}}, {"n", 3}, {"k", {4, 5}}, {"combine", "zip"}}}),
              (std::vector<Shape>{{1, 3, 4}, {2, 3, 5}}));
    EXPECT_EQ(shapes_of({{{"m", 1}, {"n", 2}, {"k", 3}, {"combine", "zip"}}}), (std::vector<Shape>{{1, 2, 3}}));
    // A range is list-valued too.
    EXPECT_EQ(
        shapes_of({{{"m", {{"from", 8}, {"to", 16}, {"pow2", true}}}, {"n", {7, 9}}, {"k", 1}, {"combine", "zip"}}}),
        (std::vector<Shape>{{8, 7, 1}, {16, 9, 1}}));
}

TEST(ShapeExpansion, SquareTakesEveryFormOfDimension) {
    EXPECT_EQ(shapes_of({{{"square", 17}}}), squares({17}));
    EXPECT_EQ(shapes_of({{{"square", {512, 1024}}}}), squares({512, 1024}));
    EXPECT_EQ(shapes_of({{{"square", {{"from", 64}, {"to", 512}, {"pow2", true}}}}}), squares({64, 128, 256, 512}));
}

TEST(ShapeExpansion, LinearRangesIncludeToOnlyWhenItLands) {
    EXPECT_EQ(shapes_of({{{"square", {{"from", 1}, {"to", 9}, {"step", 4}}}}}), squares({1, 5, 9}));
    EXPECT_EQ(shapes_of({{{"square", {{"from", 1}, {"to", 10}, {"step", 4}}}}}), squares({1, 5, 9}));
    EXPECT_EQ(shapes_of({{{"square", {{"from", 7}, {"to", 7}, {"step", 3}}}}}), squares({7}));
}

TEST(ShapeExpansion, Pow2RangesStopAtTo) {
    EXPECT_EQ(shapes_of({{{"square", {{"from", 1}, {"to", 20}, {"pow2", true}}}}}), squares({1, 2, 4, 8, 16}));
}

TEST(ShapeExpansion, GeometricRangesRoundAndDropRepeats) {
    EXPECT_EQ(shapes_of({{{"square", {{"from", 100}, {"to", 1000}, {"mul", 2}}}}}), squares({100, 200, 400, 800}));
    // 1, 1.5, 2.25, 3.375, 5.06, 7.59 -> 1, 2, 2, 3, 5, 8: the repeated 2 is dropped.
    EXPECT_EQ(shapes_of({{{"square", {{"from", 1}, {"to", 8}, {"mul", 1.5}}}}}), squares({1, 2, 3, 5, 8}));
}

TEST(ShapeExpansion, DuplicatesAcrossSpecsKeepTheirFirstPosition) {
    EXPECT_EQ(shapes_of({{{"square", {4, 8}}}, {{"m", 2}, {"n", 2}, {"k", 2}}, {{"square", {8, 2, 16}}}}),
              squares({4, 8, 2, 16}));
    EXPECT_EQ(shapes_of({{{"square", {3, 3, 3}}}}), squares({3}));
}

TEST(ShapeExpansion, IntegralNumbersWrittenAsFloatsAreAccepted) {
    EXPECT_EQ(shapes_of({{{"square", 1024.0}}}), squares({1024}));
}

TEST(ShapeExpansion, TheLimitIsOnTheTotalToo) {
    // Two specs of 60000 shapes each: each is allowed alone, together they are too many.
    const json wide{{"m", {{"from", 1}, {"to", 60000}, {"step", 1}}}, {"n", 1}, {"k", 1}};
    const json tall{{"m", 1}, {"n", {{"from", 1}, {"to", 60000}, {"step", 1}}}, {"k", 1}};
    EXPECT_EQ(shapes_of(json::array({wide})).size(), 60000u);
    const ConfigError e = parse_error_of(json{{"kernels", {"k"}}, {"shapes", json::array({wide, tall})}});
    EXPECT_EQ(e.json_path(), "/shapes");
    EXPECT_NE(e.message().find("more than 100000"), std::string::npos) << e.what();
}

TEST(ShapeExpansion, OneHundredThousandSpecsExpandAndDeduplicateInLinearTime) {
    // 100000 one-shape specs, the second half repeating the first: de-duplication must be linear (a
    // quadratic one takes minutes here), and each shape is kept once, in order of first occurrence.
    json specs = json::array();
    for (int64_t i = 0; i < 100000; ++i)
        specs.push_back({{"m", 1 + i % 50000}, {"n", 7}, {"k", 1 + (i % 50000) / 1000}});
    const std::vector<Shape> shapes = shapes_of(specs);
    ASSERT_EQ(shapes.size(), 50000u);
    EXPECT_EQ(shapes.front(), (Shape{1, 7, 1}));
    EXPECT_EQ(shapes.back(), (Shape{50000, 7, 50}));
}

TEST(ParseSweepConfig, NonFiniteNumbersInABuiltDocumentAreOutOfRange) {
    json doc{{"kernels", {"k"}}, {"shapes", {{{"square", 8}}}}};
    doc["timeout_s"] = std::numeric_limits<double>::infinity();
    const ConfigError e = parse_error_of(doc);
    EXPECT_EQ(e.json_path(), "/timeout_s");
    EXPECT_NE(e.message().find("number out of range"), std::string::npos) << e.what();
}

TEST(ParseSweepConfig, AnUnsafeFileStemDoesNotBecomeTheDefaultName) {
    const json doc{{"kernels", {"k"}}, {"shapes", {{{"square", 8}}}}};
    EXPECT_EQ(parse_sweep_config(doc, "dir/.hidden.json").name, "default");
    EXPECT_EQ(parse_sweep_config(doc, "dir/a100.json").name, "a100");
}

// ---- Overrides and command-line options ----

TEST(ApplyOverrides, JsonAndCsvOnOnePathNameBothKeys) {
    SweepConfig config = load_sweep_config(kData / "good_configs" / "minimal.json");
    config.output.csv = "out/r.csv";
    const json before = config.to_json();
    CliOverrides o;
    o.json = "out/./r.csv";  // the config's CSV, written differently: --json alone takes the CSV beside it
    SweepConfig moved = config;
    apply_overrides(moved, o);
    EXPECT_EQ(moved.output.json, "out/./r.csv");
    EXPECT_EQ(moved.output.csv, std::nullopt);
    EXPECT_EQ(config.to_json(), before);
    o.csv = "elsewhere.csv";  // both given: fine
    apply_overrides(config, o);
    EXPECT_EQ(config.output.csv, "elsewhere.csv");
    CliOverrides both;
    both.json = both.csv = "r.out";
    try {
        apply_overrides(config, both);
        ADD_FAILURE() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.json_path(), "--csv");
        EXPECT_NE(e.message().find("--json and --csv are the same path"), std::string::npos) << e.what();
    }
}

TEST(ApplyOverrides, EachSetValueReplacesTheConfigsAndOthersStay) {
    SweepConfig c = load_sweep_config(kData / "good_configs" / "every_key.json");
    CliOverrides o;
    o.kernels = std::vector<std::string>{"cpu_blocked"};
    o.shapes = std::vector<Shape>{{2, 2, 2}, {1, 1, 1}, {2, 2, 2}};
    o.dtypes = std::vector<DType>{DType::fp16};
    o.warmup = 3;
    o.repeats = 1;
    o.time_budget_s = 9.0;
    o.timeout_s = 1.5;
    o.tolerance = 0.25;
    o.verify = true;
    o.warm_cache = false;
    o.seed = 7;
    o.device = 2;
    o.baseline = Baseline::same_for_all("cpu_blocked");
    o.json = "a.json";
    o.csv = "a.csv";
    apply_overrides(c, o);
    EXPECT_EQ(c.kernels, std::vector<std::string>{"cpu_blocked"});
    EXPECT_EQ(c.shapes, (std::vector<Shape>{{2, 2, 2}, {1, 1, 1}}));
    EXPECT_EQ(c.dtypes, std::vector<DType>{DType::fp16});
    EXPECT_EQ(c.settings.warmup, 3);
    EXPECT_EQ(c.settings.repeats, 1);
    EXPECT_EQ(c.settings.time_budget_s, 9.0);
    EXPECT_EQ(c.settings.timeout_s, 1.5);
    EXPECT_EQ(c.settings.tolerance, 0.25);
    EXPECT_TRUE(c.settings.verify);
    EXPECT_FALSE(c.settings.warm_cache);
    EXPECT_EQ(c.seed, 7u);
    EXPECT_EQ(c.settings.device, 2);
    EXPECT_EQ(c.baseline, Baseline::same_for_all("cpu_blocked"));
    EXPECT_EQ(c.output.json, "a.json");
    EXPECT_EQ(c.output.csv, "a.csv");
    EXPECT_EQ(c.name, "everything");

    SweepConfig untouched = load_sweep_config(kData / "good_configs" / "every_key.json");
    const json before = untouched.to_json();
    apply_overrides(untouched, CliOverrides{});
    EXPECT_EQ(untouched.to_json(), before);
}

TEST(ApplyOverrides, BadValuesNameTheOptionAndLeaveTheConfigAlone) {
    struct Case {
        CliOverrides overrides;
        std::string option, message;
    };
    std::vector<Case> cases(8);
    cases[0].overrides.repeats = 0, cases[0].option = "--repeat", cases[0].message = "repeats must be >= 1, got 0";
    cases[1].overrides.warmup = -1, cases[1].option = "--warmup", cases[1].message = "warmup must be >= 0";
    cases[2].overrides.shapes = std::vector<Shape>{{4, 0, 4}}, cases[2].option = "--shapes",
    cases[2].message = "got 0 in 4x0x4";
    cases[3].overrides.kernels = std::vector<std::string>{}, cases[3].option = "--kernels",
    cases[3].message = "at least one";
    cases[4].overrides.timeout_s = 0.0, cases[4].option = "--timeout", cases[4].message = "timeout_s must be > 0";
    cases[5].overrides.device = -2, cases[5].option = "--device", cases[5].message = "device must be >= 0";
    cases[6].overrides.dtypes = std::vector<DType>{}, cases[6].option = "--dtypes", cases[6].message = "at least one";
    cases[7].overrides.time_budget_s = -1.0, cases[7].option = "--time-budget",
    cases[7].message = "time_budget_s must be > 0";
    for (const auto& c : cases) {
        SCOPED_TRACE(c.option);
        SweepConfig config = load_sweep_config(kData / "good_configs" / "minimal.json");
        config.settings.warmup = 5;  // a valid override alongside must not be applied either
        CliOverrides o = c.overrides;
        if (!o.warmup) o.warmup = 1;
        const json before = config.to_json();
        try {
            apply_overrides(config, o);
            ADD_FAILURE() << "no error";
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.file(), kCommandLineSource);
            EXPECT_EQ(e.json_path(), c.option);
            EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
        }
        EXPECT_EQ(config.to_json(), before);
    }
}

// --sizes, --shape and --block are read in the sweep operation's keys (common/operations.def): a size gives every
// size key, --shape lists them joined by 'x', the tile edge goes into its own member, never into k.
TEST(ApplyOverrides, ShapesAreReadInTheOperationsKeys) {
    const auto shapes_of = [](Operation op, const CliOverrides& given) {
        SweepConfig config;
        config.source = std::string(kCommandLineSource);
        CliOverrides o = given;
        o.operation = op;
        apply_overrides(config, o);
        return config.shapes;
    };
    CliOverrides sizes;
    sizes.sizes = std::vector<int64_t>{8};
    EXPECT_EQ(shapes_of(Operation::gemm, sizes), (std::vector<Shape>{{8, 8, 8, 0}}));
    EXPECT_EQ(shapes_of(Operation::transpose, sizes), (std::vector<Shape>{{8, 8, 0, 0}}));
    CliOverrides typed;
    typed.shape_texts = std::vector<std::string>{"8x4"};
    typed.blocks = std::vector<int64_t>{2, 4};
    EXPECT_EQ(shapes_of(Operation::block_transpose, typed), (std::vector<Shape>{{8, 4, 0, 2}, {8, 4, 0, 4}}));
    typed.blocks.reset();
    typed.shape_texts = std::vector<std::string>{"2x3x4"};
    EXPECT_EQ(shapes_of(Operation::gemm, typed), (std::vector<Shape>{{2, 3, 4, 0}}));
    typed.shape_texts = std::vector<std::string>{"64"};
    try {
        shapes_of(Operation::gemm, typed);
        ADD_FAILURE() << "a single size accepted as a gemm shape";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.json_path(), "--shape");
        // One size is a reduction's shape: the message says which operation would take it.
        EXPECT_EQ(
            e.message(),
            "'64' has 1 size, but a gemm shape is MxNxK (e.g. 17x33x9); for a shape of reduction give --operation");
    }
    EXPECT_THROW(parse_dims_option("1x2x3x4x5"), std::invalid_argument);
}

TEST(ParseSizesOption, CommaSeparatedSizesGiveSquares) {
    EXPECT_EQ(parse_sizes_option("512,1024"), squares({512, 1024}));
    EXPECT_EQ(parse_sizes_option(" 64 , 128 "), squares({64, 128}));
    EXPECT_EQ(parse_sizes_option("1"), squares({1}));
}

TEST(ParseSizesOption, BadInputSaysWhatIsWrong) {
    const std::vector<std::pair<std::string, std::string>> cases{{"", "empty size"},
                                                                 {"512,", "empty size"},
                                                                 {"512,,1024", "empty size"},
                                                                 {"abc", "'abc'"},
                                                                 {"0", ">= 1"},
                                                                 {"-5", ">= 1"},
                                                                 {"1.5", "positive integer"},
                                                                 {"512x512", "positive integer"},
                                                                 {"99999999999999999999", "too large"},
                                                                 {"4294967296", "<= 2147483647"}};
    for (const auto& [text, fragment] : cases) {
        SCOPED_TRACE(text);
        try {
            parse_sizes_option(text);
            ADD_FAILURE() << "no error";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    }
}

TEST(ParseShapeOption, ReadsMxNxK) {
    EXPECT_EQ(parse_shape_option("1000x3000x257"), (Shape{1000, 3000, 257}));
    EXPECT_EQ(parse_shape_option("4X5x6"), (Shape{4, 5, 6}));
    EXPECT_EQ(parse_shape_option(" 1x4096x4096 "), (Shape{1, 4096, 4096}));
}

TEST(ParseShapeOption, BadInputSaysWhatIsWrong) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"1x2", "expected MxNxK"}, {"1x2x3x4", "expected MxNxK"},
        {"512", "expected MxNxK"}, {"", "expected MxNxK"},
        {"ax2x3", "'a'"},          {"0x1x1", ">= 1"},
        {"1xx2", "empty size"},    {"1x2x", "empty size"}};
    for (const auto& [text, fragment] : cases) {
        SCOPED_TRACE(text);
        try {
            parse_shape_option(text);
            ADD_FAILURE() << "no error";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    }
}

// ---- Config paths ----

class ResolveConfigPath : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("kreg_config_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_ / "cwd" / "sweeps");
        fs::create_directories(root_ / "configs" / "sweeps");
        saved_cwd_ = fs::current_path();
        fs::current_path(root_ / "cwd");
    }
    void TearDown() override {
        fs::current_path(saved_cwd_);
        fs::remove_all(root_);
    }
    static void touch(const fs::path& p) { std::ofstream(p) << "{}"; }
    fs::path root_, saved_cwd_;
};

TEST_F(ResolveConfigPath, TheWorkingDirectoryComesFirst) {
    touch(root_ / "cwd" / "sweeps" / "a.json");
    touch(root_ / "configs" / "sweeps" / "a.json");
    EXPECT_EQ(resolve_config_path("sweeps/a.json", root_ / "configs"), fs::path("sweeps/a.json"));
}

TEST_F(ResolveConfigPath, ThenTheConfigsDirectory) {
    touch(root_ / "configs" / "sweeps" / "b.json");
    EXPECT_EQ(resolve_config_path("sweeps/b.json", root_ / "configs"), root_ / "configs" / "sweeps" / "b.json");
}

TEST_F(ResolveConfigPath, AbsolutePathsAreTakenAsGiven) {
    touch(root_ / "configs" / "c.json");
    const fs::path absolute = root_ / "configs" / "c.json";
    EXPECT_EQ(resolve_config_path(absolute.string(), root_ / "elsewhere"), absolute);
}

TEST_F(ResolveConfigPath, NotFoundListsEveryPlaceTried) {
    try {
        resolve_config_path("sweeps/missing.json", root_ / "configs");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.file(), "sweeps/missing.json");
        const std::string m = e.message();
        EXPECT_NE(m.find("no such config file"), std::string::npos) << m;
        const auto cwd_at = m.find((root_ / "cwd" / "sweeps" / "missing.json").string());
        const auto configs_at = m.find((root_ / "configs" / "sweeps" / "missing.json").string());
        EXPECT_NE(cwd_at, std::string::npos) << m;
        EXPECT_NE(configs_at, std::string::npos) << m;
        EXPECT_LT(cwd_at, configs_at) << "places are listed in the order they are tried";
    }
}

TEST_F(ResolveConfigPath, AMisspeltPathGetsASuggestionFromTheFoldersSearched) {
    fs::create_directories(root_ / "configs" / "grading");
    touch(root_ / "configs" / "grading" / "lab3.json");
    touch(root_ / "configs" / "grading" / "lab5.json");
    try {
        resolve_config_path("grading/lab33.json", root_ / "configs", "rubric");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.message().find("no such rubric file (did you mean 'grading/lab3.json'?)"), std::string::npos)
            << e.what();
    }
    // A file next to the path as given (the working directory) is suggested too.
    touch(root_ / "cwd" / "sweeps" / "nightly.json");
    try {
        resolve_config_path("sweeps/nightyl.json", root_ / "configs");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.message().find("(did you mean 'sweeps/nightly.json'?)"), std::string::npos) << e.what();
    }
}

TEST_F(ResolveConfigPath, ADirectoryIsNotAConfig) {
    EXPECT_THROW(resolve_config_path("sweeps", root_ / "configs"), ConfigError);
}

// ---- Kernel names and globs ----

TEST(GlobMatch, ShellStyle) {
    EXPECT_TRUE(glob_match("cpu_naive", "cpu_naive"));
    EXPECT_FALSE(glob_match("cpu_naive", "cpu_naive2"));
    EXPECT_FALSE(glob_match("cpu_naive", "cpu_naiv"));
    EXPECT_TRUE(glob_match("cpu_*", "cpu_"));
    EXPECT_TRUE(glob_match("cpu_*", "cpu_blocked"));
    EXPECT_FALSE(glob_match("cpu_*", "cuda_01_naive"));
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_TRUE(glob_match("*_naive", "cuda_01_naive"));
    EXPECT_TRUE(glob_match("c*_*_*d", "cuda_03_padded"));
    EXPECT_FALSE(glob_match("c*_*_*d", "cuda_03_padded_dynamic"));
    EXPECT_TRUE(glob_match("cuda_0?_*", "cuda_07_double_buffered"));
    EXPECT_FALSE(glob_match("cuda_0?_*", "cuda_10_x"));
    EXPECT_FALSE(glob_match("?", ""));
    EXPECT_TRUE(glob_match("cuda_0[1-3]_*", "cuda_02_tiled16"));
    EXPECT_FALSE(glob_match("cuda_0[1-3]_*", "cuda_04_coarsened"));
    EXPECT_TRUE(glob_match("cuda_0[!1-3]_*", "cuda_04_coarsened"));
    EXPECT_TRUE(glob_match("cuda_0[^1-3]_*", "cuda_04_coarsened"));
    EXPECT_TRUE(glob_match("cublas_[bt]*", "cublas_tf32"));
    EXPECT_FALSE(glob_match("cublas_[bt]*", "cublas_sgemm"));
    EXPECT_TRUE(glob_match("[]]", "]"));      // ']' first in a class is literal
    EXPECT_TRUE(glob_match("a[bc", "a[bc"));  // unterminated '[' is literal
    EXPECT_FALSE(glob_match("a[bc", "ab"));
    EXPECT_TRUE(glob_match("**a**", "xxaxx"));
}

const std::vector<std::string> kRegistry{"cpu_naive", "cpu_blocked", "cuda_01_naive", "cuda_02_tiled16",
                                         "cublas_sgemm"};

TEST(ResolveKernelPatterns, KeepsRegistryOrderAndDropsDuplicates) {
    EXPECT_EQ(resolve_kernel_patterns({"cublas_sgemm", "cpu_*", "cpu_naive"}, kRegistry, "a.json"),
              (std::vector<std::string>{"cpu_naive", "cpu_blocked", "cublas_sgemm"}));
    EXPECT_EQ(resolve_kernel_patterns({"*naive"}, kRegistry, "a.json"),
              (std::vector<std::string>{"cpu_naive", "cuda_01_naive"}));
    EXPECT_EQ(resolve_kernel_patterns({"*"}, kRegistry, "a.json"), kRegistry);
}

TEST(ResolveKernelPatterns, AnUnknownNameGetsASuggestionAtItsIndex) {
    try {
        resolve_kernel_patterns({"cpu_blocked", "cpu_naiv"}, kRegistry, "a.json");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.file(), "a.json");
        EXPECT_EQ(e.json_path(), "/kernels/1");
        EXPECT_EQ(e.message(), "unknown kernel 'cpu_naiv' (did you mean 'cpu_naive'?)");
    }
}

TEST(ResolveKernelPatterns, FromTheCommandLineThePathIsTheOption) {
    try {
        resolve_kernel_patterns({"gpu_*"}, kRegistry, std::string(kCommandLineSource));
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.json_path(), "--kernels");
        EXPECT_NE(e.message().find("no kernel matches 'gpu_*'"), std::string::npos) << e.what();
    }
}

TEST(ResolveKernelPatterns, WithNothingCloseTheAvailableKernelsAreListed) {
    try {
        resolve_kernel_patterns({"frobnicate"}, kRegistry, "a.json");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.message(),
                  "unknown kernel 'frobnicate' (available: cpu_naive, cpu_blocked, cuda_01_naive, "
                  "cuda_02_tiled16, cublas_sgemm)");
    }
    try {
        resolve_kernel_patterns({"cpu_naive"}, {}, "a.json");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(e.message().find("no kernels are loaded"), std::string::npos) << e.what();
    }
}

// ---- Shipped configs, schema and README ----

// Kernel names the shipped configs may use. A config naming a kernel that is not here fails below: add the
// kernel here when its plugin lands.
const std::vector<std::string> kKnownKernels{
    "cpu_naive", "cpu_blocked", "cuda_01_naive", "cuda_02_tiled16", "cuda_02_tiled32", "cuda_03_conflicts",
    "cuda_03_padded", "cuda_03_padded_dynamic", "cuda_04_coarsened", "cuda_05_register_blocked", "cuda_06_vectorized",
    "cuda_07_double_buffered", "cuda_08_cp_async", "cuda_09_warptiled", "cuda_10_mma", "cuda_11_wgmma",
    "cuda_12_wgmma_ws", "cuda_12_wgmma_ws_c2", "cublas_sgemm", "cublas_tf32", "cublas_bf16", "cuda_13_wgmma_persistent",
    "cublaslt_fp32", "cublaslt_tf32", "cublaslt_bf16",  // issue 25
    // transposes (issue 11)
    "cuda_t1_naive", "cuda_t2_smem", "cuda_t3_padded", "cuda_t3_padded_dynamic", "cuda_t4_vectorized",
    "cuda_block_transpose", "cuda_block_transpose_padded",
    // the split kernels (issue 24)
    "cuda_splitk", "cuda_small_tile", "cuda_gemv", "cuda_dispatch_fp32",
    // the reduction lab (issue 21)
    "cuda_r1_atomic", "cuda_r2_tree", "cuda_r3_sequential", "cuda_r4_first_add", "cuda_r5_warp_shuffle",
    "cuda_r6_grid_stride", "cuda_r7_one_pass", "cub_reduce_sum", "cpu_reduce_sum"};

TEST(ShippedConfigs, EveryOneLoadsAndNamesKnownKernels) {
    std::set<std::string> names, outputs;
    for (const auto& entry : fs::directory_iterator(kSource / "configs" / "sweeps")) {
        if (entry.path().extension() != ".json") continue;
        SCOPED_TRACE(entry.path().string());
        SweepConfig c;
        ASSERT_NO_THROW(c = load_sweep_config(entry.path()));
        names.insert(entry.path().stem().string());
        EXPECT_EQ(c.name, entry.path().stem().string()) << "the name should match the file";
        const auto kernels = resolve_kernel_patterns(c.kernels, kKnownKernels, c.source);
        EXPECT_FALSE(kernels.empty());
        for (const auto& b : c.baseline.kernels())
            EXPECT_NE(std::find(kernels.begin(), kernels.end(), b), kernels.end())
                << "baseline " << b << " is not among the sweep's kernels";
        for (const auto& out : {c.output.json, c.output.csv})
            if (out) EXPECT_TRUE(outputs.insert(*out).second) << *out << " is written by two configs";
    }
    for (const char* expected : {"smoke", "cpu", "a100", "h100", "h200"})
        EXPECT_EQ(names.count(expected), 1u) << expected;
}

TEST(ShippedConfigs, TensorSweepComparesEachDtypeWithItsCublasKernel) {
    const SweepConfig c = load_sweep_config(kSource / "configs" / "sweeps" / "h200-tensor.json");
    EXPECT_EQ(c.dtypes, (std::vector<DType>{DType::bf16, DType::tf32}));
    EXPECT_EQ(c.baseline, Baseline::per_dtype({{DType::bf16, "cublas_bf16"}, {DType::tf32, "cublas_tf32"}}));
    // Both baselines in one run (issue 25): cuBLAS's default algorithm and cuBLASLt's best of its heuristic's top 8.
    for (const char* reference : {"cublas_bf16", "cublas_tf32", "cublaslt_bf16", "cublaslt_tf32"})
        EXPECT_NE(std::find(c.kernels.begin(), c.kernels.end(), reference), c.kernels.end()) << reference;
}

TEST(ShippedConfigs, GpuSweepsCoverTheProgressionAndOddShapes) {
    for (const char* gpu : {"a100", "h100", "h200"}) {
        SCOPED_TRACE(gpu);
        const SweepConfig c = load_sweep_config(kSource / "configs" / "sweeps" / (std::string(gpu) + ".json"));
        const auto kernels = resolve_kernel_patterns(c.kernels, kKnownKernels, c.source);
        EXPECT_EQ(kernels.size(), 13u);  // the 12 cuda_01..cuda_09 variants and cublas_sgemm, no tf32/bf16
        EXPECT_EQ(c.baseline, Baseline::same_for_all("cublas_sgemm"));
        EXPECT_EQ(c.dtypes, std::vector<DType>{DType::fp32});
        for (Shape s : std::vector<Shape>{{512, 512, 512},
                                          {8192, 8192, 8192},
                                          {517, 517, 517},
                                          {1000, 3000, 257},
                                          {1, 4096, 4096},
                                          {4096, 1, 4096}})
            EXPECT_NE(std::find(c.shapes.begin(), c.shapes.end(), s), c.shapes.end()) << to_string(s);
    }
}

// Issue 24: the dispatch kernels are judged on shapes the table was not built from, so the check sweep shares no
// shape with the tuning sweep, and both cover every class (vector-like, a few rows, narrow N, deep K, M = 128).
TEST(ShippedConfigs, CheckSweepSharesNoShapeWithTheTuningSweep) {
    const SweepConfig tune = load_sweep_config(kSource / "configs" / "sweeps" / "tune-h200.json");
    const SweepConfig check = load_sweep_config(kSource / "configs" / "sweeps" / "check-h200.json");
    for (const Shape& s : check.shapes)
        EXPECT_EQ(std::find(tune.shapes.begin(), tune.shapes.end(), s), tune.shapes.end())
            << to_string(s) << " is in both the tuning and the check sweep";
    for (const SweepConfig* c : {&tune, &check}) {
        SCOPED_TRACE(c->name);
        auto has = [&](auto predicate) { return std::any_of(c->shapes.begin(), c->shapes.end(), predicate); };
        EXPECT_TRUE(has([](const Shape& s) { return s.m == 1 && s.n >= 1024; })) << "m = 1";
        EXPECT_TRUE(has([](const Shape& s) { return s.n == 1 && s.m >= 1024; })) << "n = 1";
        EXPECT_TRUE(has([](const Shape& s) { return s.m > 1 && s.m <= 8; })) << "a few rows";
        EXPECT_TRUE(has([](const Shape& s) { return s.n <= 128 && s.m > s.n && s.k >= 8192; })) << "deep K, narrow N";
        EXPECT_TRUE(has([](const Shape& s) { return s.m == 128 && s.n >= 4096; })) << "M = 128 decode";
        EXPECT_TRUE(has([](const Shape& s) { return s.k >= 3 * s.m && s.m >= 512; })) << "K >= 3M";
        EXPECT_EQ(c->baseline,
                  Baseline::per_dtype(
                      {{DType::fp32, "cublas_sgemm"}, {DType::bf16, "cublas_bf16"}, {DType::tf32, "cublas_tf32"}}));
    }
}

TEST(ShippedConfigs, SchemaListsExactlyTheKeysTheParserAccepts) {
    const json schema = json::parse(read_text(kSource / "configs" / "schema" / "sweep.schema.json"));
    std::set<std::string> in_schema;
    for (const auto& [key, value] : schema.at("properties").items()) in_schema.insert(key);
    const std::set<std::string> in_parser(sweep_config_keys().begin(), sweep_config_keys().end());
    EXPECT_EQ(in_schema, in_parser);
    EXPECT_EQ(schema.at("additionalProperties"), false);
    EXPECT_EQ(schema.at("required"), json({"kernels", "shapes"}));
}

TEST(ShippedConfigs, ReadmeDocumentsEveryKey) {
    const std::string readme = read_text(kSource / "configs" / "README.md");
    ASSERT_FALSE(readme.empty());
    for (const auto& key : sweep_config_keys())
        EXPECT_NE(readme.find("`" + key + "`"), std::string::npos) << key << " is not documented";
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

// A glob that matches nothing is a note, not an error, when the caller collects them (a config naming
// "cuda_*" still runs where no CUDA plugin was built); a plain name never is; nothing selected is.
TEST(KernelPatternsUnmatchedGlobs, AreCollectedWhenAsked) {
    const std::vector<std::string> available{"cpu_naive", "cpu_blocked"};
    std::vector<std::string> unmatched;
    const auto names = resolve_kernel_patterns({"cpu_*", "cuda_*"}, available, "smoke.json", &unmatched);
    EXPECT_EQ(names, available);
    EXPECT_EQ(unmatched, std::vector<std::string>{"cuda_*"});
    EXPECT_THROW(resolve_kernel_patterns({"cpu_*", "cuda_*"}, available, "smoke.json"), ConfigError);
    unmatched.clear();
    try {
        resolve_kernel_patterns({"cpu_naive", "cuda_01_naive"}, available, "smoke.json", &unmatched);
        ADD_FAILURE() << "an unknown plain name must stay an error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.json_path(), "/kernels/1");
    }
    unmatched.clear();
    try {
        resolve_kernel_patterns({"cuda_*", "cublas_*"}, available, "smoke.json", &unmatched);
        ADD_FAILURE() << "a selection of nothing must be an error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.json_path(), "/kernels");
        EXPECT_NE(e.message().find("no kernel matches any"), std::string::npos) << e.message();
    }
}

// ---- Block edges and repeated shapes (issue 22) ----

// A block outside 1..32 is refused where it is written, not carried in 'k' nor skipped on every row.
TEST(BlockTransposeShapes, BlockEdgesAreCheckedAtTheirOwnPath) {
    const json base{{"operation", "block_transpose"}, {"kernels", {"k"}}};
    const auto error_at = [&](const json& shapes) {
        json doc = base;
        doc["shapes"] = shapes;
        const ConfigError e = parse_error_of(doc);
        return e.json_path() + ": " + e.message();
    };
    EXPECT_EQ(error_at({{{"square", 64}, {"block", 0}}}), "/shapes/0/block: block must be >= 1, got 0");
    EXPECT_EQ(error_at({{{"square", 64}, {"block", 2}}, {{"m", 8}, {"n", 8}, {"block", 100000}}}),
              "/shapes/1/block: block must be <= 32, got 100000");
    EXPECT_EQ(error_at({{{"m", 64}, {"n", 64}, {"block", {1, 33}}}}), "/shapes/0/block/1: block must be <= 32, got 33");
    EXPECT_EQ(error_at({{{"square", 64}, {"block", {{"from", 1}, {"to", 40}, {"step", 1}}}}}),
              "/shapes/0/block/to: block must be <= 32, got 40");
    EXPECT_EQ(error_at({{{"square", 0}, {"block", 2}}}), "/shapes/0/square: size must be >= 1, got 0");
    EXPECT_EQ(error_at({{{"m", 8}, {"n", 0}, {"block", 2}}}), "/shapes/0/n: size must be >= 1, got 0");
    // The edges themselves are accepted, and land in block, never in k.
    json doc = base;
    doc["shapes"] = {{{"square", 64}, {"block", {1, 32}}}};
    const SweepConfig c = parse_sweep_config(doc, "t.json");
    EXPECT_EQ(c.shapes, (std::vector<Shape>{{64, 64, 0, 1}, {64, 64, 0, 32}}));
}

TEST(BlockTransposeShapes, TheCommandLineRefusesBlocksOutsideTheRangeToo) {
    EXPECT_EQ(parse_blocks_option("1,32"), (std::vector<int64_t>{1, 32}));
    EXPECT_THROW(parse_blocks_option("2,33"), std::invalid_argument);
    EXPECT_THROW(parse_blocks_option("0"), std::invalid_argument);
    SweepConfig c;
    c.source = std::string(kCommandLineSource);
    const auto option_of = [&](const CliOverrides& o) {
        SweepConfig copy = c;
        try {
            apply_overrides(copy, o);
        } catch (const ConfigError& e) {
            return e.json_path() + ": " + e.message();
        }
        return std::string("accepted");
    };
    CliOverrides blocks;
    blocks.operation = Operation::block_transpose;
    blocks.sizes = std::vector<int64_t>{64};
    blocks.blocks = std::vector<int64_t>{4, 100000};  // built in code, past parse_blocks_option
    EXPECT_EQ(option_of(blocks), "--block: block must be between 1 and 32, got 100000");
    blocks.blocks = std::vector<int64_t>{1, 32};
    EXPECT_EQ(option_of(blocks), "accepted");
    // Shapes built in code are crossed with the blocks: the blocks are the only way in, and they are checked.
    CliOverrides shapes;
    shapes.operation = Operation::block_transpose;
    shapes.shapes = std::vector<Shape>{{64, 64, 0, 0}};
    shapes.blocks = std::vector<int64_t>{0};
    EXPECT_EQ(option_of(shapes), "--block: block must be between 1 and 32, got 0");
}

// A shape given twice is measured once, and the parser says where both were given.
TEST(RepeatedShapes, AreMeasuredOnceWithANoteNamingBothPaths) {
    const SweepConfig c = parse_sweep_config(
        json{{"kernels", {"k"}},
             {"shapes", {{{"square", 512}}, {{"m", 64}, {"n", 64}, {"k", 64}}, {{"square", {64, 512}}}}}},
        "a.json");
    EXPECT_EQ(c.shapes, squares({512, 64}));
    EXPECT_EQ(c.notes, (std::vector<std::string>{
                           "a.json: /shapes/2: 64x64x64 is already given at /shapes/1; it is measured once",
                           "a.json: /shapes/2: 512x512x512 is already given at /shapes/0; it is measured once"}));
    const SweepConfig within =
        parse_sweep_config(json{{"kernels", {"k"}}, {"shapes", {{{"square", {8, 8}}}}}}, "a.json");
    EXPECT_EQ(within.notes,
              std::vector<std::string>{"a.json: /shapes/0: gives 8x8x8 more than once; it is measured once"});
    EXPECT_TRUE(shapes_of({{{"square", {8, 16}}}}).size() == 2);
    EXPECT_TRUE(
        parse_sweep_config(json{{"kernels", {"k"}}, {"shapes", {{{"square", {8, 16}}}}}}, "a.json").notes.empty());
    EXPECT_FALSE(c.to_json().contains("notes")) << "notes are messages, not part of the config";
}

TEST(RepeatedShapes, ManyRepeatsAreCountedNotListed) {
    json specs = json::array();
    for (int i = 0; i < 50; ++i) specs.push_back({{"square", 8}});
    const SweepConfig c = parse_sweep_config(json{{"kernels", {"k"}}, {"shapes", specs}}, "a.json");
    EXPECT_EQ(c.shapes.size(), 1u);
    ASSERT_EQ(c.notes.size(), 6u);
    EXPECT_EQ(c.notes[0], "a.json: /shapes/1: 8x8x8 is already given at /shapes/0; it is measured once");
    EXPECT_EQ(c.notes[5], "a.json: 44 more repeated shape(s) not listed; each is measured once");
}

TEST(RepeatedShapes, OnTheCommandLineTheNoteNamesTheOption) {
    SweepConfig c = parse_sweep_config(json{{"kernels", {"k"}}, {"shapes", {{{"square", {8, 8}}}}}}, "a.json");
    CliOverrides o;
    o.sizes = std::vector<int64_t>{16, 32, 16};
    apply_overrides(c, o);
    EXPECT_EQ(c.shapes, squares({16, 32}));
    // The config's shapes, and their note, are gone; the command line's repeat is said.
    EXPECT_EQ(c.notes,
              std::vector<std::string>{"<command line>: --sizes: gives 16x16x16 more than once; it is measured once"});
    // --block alone replaces a block_transpose config's blocks: its (M, N) are not repeats.
    SweepConfig b = parse_sweep_config(json{{"operation", "block_transpose"},
                                            {"kernels", {"k"}},
                                            {"shapes", {{{"m", 8}, {"n", 12}, {"block", {2, 4}}}}}},
                                       "b.json");
    CliOverrides blocks;
    blocks.blocks = std::vector<int64_t>{1, 4};
    apply_overrides(b, blocks);
    EXPECT_EQ(b.shapes, (std::vector<Shape>{{8, 12, 0, 1}, {8, 12, 0, 4}}));
    EXPECT_TRUE(b.notes.empty()) << b.notes.front();
}

}  // namespace
}  // namespace kreg
