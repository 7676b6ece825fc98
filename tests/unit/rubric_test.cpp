// Grading rubrics: the bad-rubric corpus (each file with its expected JSON path and message), defaults and
// the canonical form, merging the published rubric with hidden files, the secret seed, and the shipped
// rubrics, schema and README.
#include "grade/rubric.hpp"
#include "bad_corpus.hpp"
#include "grade/provenance.hpp"
#include "common/operation_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_set>

namespace kreg {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kData = KREG_TEST_DATA_DIR;
const fs::path kSource = KREG_SOURCE_DIR;
const fs::path kGrading = kSource / "configs" / "grading";

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

json a_case(const std::string& name, double points = 10) {
    return {{"name", name}, {"points", points}, {"shapes", {{{"square", 17}}}}, {"seeds", {1}}};
}
json a_tier(const std::string& name, double points = 5) {
    return {{"name", name},
            {"points", points},
            {"shape", {{"square", 256}}},
            {"reference", "cpu_naive"},
            {"min_ratio", 1.0}};
}

ConfigError error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError";
    return ConfigError("", "", "");
}

// ---- The bad-rubric corpus ----

// Every tests/data/bad_rubrics/X.json has X.expect: {"json_path": ..., "message_contains": ...}, and
// every .expect file its .json.
TEST(BadRubrics, EachFailsWithItsExpectedPathAndMessage) {
    EXPECT_GE(test::check_bad_corpus(kData / "bad_rubrics", [](const fs::path& f) { load_rubric(f); }), 48);
}

TEST(LoadRubric, MissingFileAndDirectoryAreConfigErrorsNamingThem) {
    const fs::path missing = kData / "bad_rubrics" / "no_such_rubric.json";
    const ConfigError e = error_of([&] { load_rubric(missing); });
    EXPECT_EQ(e.file(), missing.string());
    EXPECT_NE(e.message().find("cannot open"), std::string::npos) << e.what();
    const ConfigError d = error_of([&] { load_rubric(kData / "bad_rubrics"); });
    EXPECT_NE(d.message().find("is a directory"), std::string::npos) << d.what();
}

// ---- Parsing good rubrics ----

TEST(ParseRubric, MinimalRubricGetsTheDefaults) {
    const Rubric r = parse_rubric(json{{"correctness", {a_case("c")}}}, "dir/lab9.json");
    EXPECT_EQ(r.name, "lab9");
    EXPECT_EQ(r.description, "");
    EXPECT_EQ(r.kernel, std::nullopt);
    EXPECT_EQ(r.backend, std::nullopt);
    const GradeLimits defaults;
    EXPECT_EQ(r.limits.load_s, defaults.load_s);
    EXPECT_EQ(r.limits.call_s, 60);
    EXPECT_EQ(r.limits.total_s, 900);
    EXPECT_EQ(r.limits.build_s, 300);
    EXPECT_EQ(r.warmup, 2);
    EXPECT_EQ(r.repeats, 10);
    EXPECT_EQ(r.time_budget_s, std::nullopt);
    EXPECT_TRUE(r.requires_correctness);
    EXPECT_EQ(r.sources, std::vector<std::string>{"dir/lab9.json"});
    EXPECT_TRUE(r.explicitly_set.empty());
    ASSERT_EQ(r.correctness.size(), 1u);
    const CorrectnessCase& c = r.correctness[0];
    EXPECT_EQ(c.name, "c");
    EXPECT_EQ(c.points, 10);
    EXPECT_EQ(c.shapes, (std::vector<Shape>{{17, 17, 17}}));
    EXPECT_EQ(c.seeds, std::vector<uint64_t>{1});
    EXPECT_TRUE(c.all_or_nothing);
    EXPECT_EQ(c.tolerance, std::nullopt);
    EXPECT_EQ(c.source, "dir/lab9.json");
    EXPECT_TRUE(r.performance.empty());
    EXPECT_EQ(r.max_points(), 10);
}

json every_key_rubric() {
    json c = a_case("odd", 20);
    c["shapes"] = {{{"m", {1, 33}}, {"n", 65}, {"k", 17}}, {{"square", 17}}, {{"m", 1}, {"n", 65}, {"k", 17}}};
    c["seeds"] = {3, 1, 3, 18446744073709551615ULL};
    c["all_or_nothing"] = false;
    c["tolerance"] = 1e-5;
    return {{"$schema", "../schema/rubric.schema.json"},
            {"name", "every"},
            {"description", "all keys"},
            {"kernel", "student_gemm"},
            {"backend", "cuda"},
            {"limits", {{"load_s", 5}, {"call_s", 6.5}, {"total_s", 70}, {"build_s", 80}}},
            {"correctness", {c}},
            {"performance",
             {a_tier("fast", 7.5),
              {{"name", "faster"},
               {"points", 2.5},
               {"shape", {{"m", 64}, {"n", 128}, {"k", 32}}},
               {"reference", "cublas_sgemm"},
               {"min_ratio", 0.5}}}},
            {"measure", {{"warmup", 0}, {"repeats", 3}, {"time_budget_s", 1.5}}},
            {"requires_correctness", false}};
}

TEST(ParseRubric, EveryKeyIsRead) {
    const Rubric r = parse_rubric(every_key_rubric(), "every.json");
    EXPECT_EQ(r.name, "every");
    EXPECT_EQ(r.description, "all keys");
    EXPECT_EQ(r.kernel, "student_gemm");
    EXPECT_EQ(r.backend, Backend::cuda);
    EXPECT_EQ(r.limits.load_s, 5);
    EXPECT_EQ(r.limits.call_s, 6.5);
    EXPECT_EQ(r.limits.total_s, 70);
    EXPECT_EQ(r.limits.build_s, 80);
    ASSERT_EQ(r.correctness.size(), 1u);
    // Shapes expanded and de-duplicated in first-occurrence order; seed repeats dropped.
    EXPECT_EQ(r.correctness[0].shapes, (std::vector<Shape>{{1, 65, 17}, {33, 65, 17}, {17, 17, 17}}));
    EXPECT_EQ(r.correctness[0].seeds, (std::vector<uint64_t>{3, 1, 18446744073709551615ULL}));
    EXPECT_FALSE(r.correctness[0].all_or_nothing);
    EXPECT_EQ(r.correctness[0].tolerance, 1e-5);
    ASSERT_EQ(r.performance.size(), 2u);
    EXPECT_EQ(r.performance[0].name, "fast");
    EXPECT_EQ(r.performance[0].shape, (Shape{256, 256, 256}));
    EXPECT_EQ(r.performance[0].reference, "cpu_naive");
    EXPECT_EQ(r.performance[1].shape, (Shape{64, 128, 32}));
    EXPECT_EQ(r.performance[1].min_ratio, 0.5);
    EXPECT_EQ(r.performance[1].source, "every.json");
    EXPECT_EQ(r.warmup, 0);
    EXPECT_EQ(r.repeats, 3);
    EXPECT_EQ(r.time_budget_s, 1.5);
    EXPECT_FALSE(r.requires_correctness);
    EXPECT_EQ(r.max_points(), 30);
    const std::set<std::string> set(r.explicitly_set.begin(), r.explicitly_set.end());
    EXPECT_EQ(set, (std::set<std::string>{"/name", "/description", "/kernel", "/backend", "/limits/load_s",
                                          "/limits/call_s", "/limits/total_s", "/limits/build_s", "/measure/warmup",
                                          "/measure/repeats", "/measure/time_budget_s", "/requires_correctness"}));
}

// Strips what to_json adds beyond the file format.
json without_sources(json j) {
    j.erase("sources");
    for (const char* list : {"correctness", "performance"})
        if (j.contains(list))
            for (auto& entry : j[list]) entry.erase("source");
    return j;
}

TEST(ParseRubric, ToJsonParsesBackToTheSameRubric) {
    for (const json& doc :
         {every_key_rubric(), json{{"correctness", {a_case("c")}}}, json{{"performance", {a_tier("t")}}}}) {
        SCOPED_TRACE(doc.dump());
        const Rubric original = parse_rubric(doc, "a.json");
        const json canonical = original.to_json();
        EXPECT_EQ(canonical.at("sources"), json({"a.json"}));
        const Rubric again = parse_rubric(without_sources(canonical), "a.json");
        EXPECT_EQ(again.to_json(), canonical);
    }
}

TEST(ParseRubric, PerformanceOnlyRubricsNeedNoCorrectnessCases) {
    const Rubric absent = parse_rubric(json{{"performance", {a_tier("t")}}}, "p.json");
    EXPECT_TRUE(absent.correctness.empty());
    EXPECT_EQ(absent.performance.size(), 1u);
    const Rubric empty = parse_rubric(json{{"correctness", json::array()}, {"performance", {a_tier("t")}}}, "p.json");
    EXPECT_TRUE(empty.correctness.empty());
    EXPECT_EQ(empty.max_points(), 5);
    // ...but a correctness that is not a list is still wrong.
    const ConfigError e = error_of([] {
        parse_rubric(json{{"correctness", 3}, {"performance", {a_tier("t")}}}, "p.json");
    });
    EXPECT_EQ(e.json_path(), "/correctness");
}

// ---- Operations: transposes and block transposes ----

json transpose_rubric() {
    return {{"operation", "transpose"},
            {"kernel", "student_transpose"},
            {"correctness",
             {{{"name", "odd"},
               {"points", 30},
               {"shapes", {{{"m", {1, 17}}, {"n", 33}}, {{"square", 5}}, {{"m", 1}, {"n", 33}}}},
               {"seeds", {1, 2}}}}},
            {"performance",
             {{{"name", "naive"},
               {"points", 10},
               {"shape", {{"m", 4096}, {"n", 2048}}},
               {"reference", "cuda_t1_naive"},
               {"min_ratio", 1.0}},
              {{"name", "copy"}, {"points", 10}, {"shape", {{"square", 8192}}}, {"min_fraction_of_copy", 0.8}}}}};
}

TEST(ParseRubric, ATransposeRubricTakesTheSweepParsersTransposeShapesAndACopyCeilingTier) {
    const Rubric r = parse_rubric(transpose_rubric(), "t.json");
    EXPECT_EQ(r.operation, Operation::transpose);
    ASSERT_EQ(r.correctness.size(), 1u);
    // k = 0 and block = 0: the transpose shapes of config/shape_spec.hpp, de-duplicated (1x33 twice).
    EXPECT_EQ(r.correctness[0].shapes, (std::vector<Shape>{{1, 33, 0, 0}, {17, 33, 0, 0}, {5, 5, 0, 0}}));
    ASSERT_EQ(r.performance.size(), 2u);
    EXPECT_FALSE(r.performance[0].against_copy_ceiling());
    EXPECT_EQ(r.performance[0].reference, "cuda_t1_naive");
    EXPECT_EQ(r.performance[0].shape, (Shape{4096, 2048, 0, 0}));
    EXPECT_TRUE(r.performance[1].against_copy_ceiling());
    EXPECT_EQ(r.performance[1].min_fraction_of_copy, 0.8);
    EXPECT_EQ(r.performance[1].reference, "");
    EXPECT_EQ(r.performance[1].shape, (Shape{8192, 8192, 0, 0}));
    EXPECT_EQ(r.max_points(), 50);
    // The canonical form names the operation, writes shapes in its keys and parses back to itself.
    const json canonical = r.to_json();
    EXPECT_EQ(canonical.at("operation"), "transpose");
    EXPECT_EQ(canonical.at("correctness").at(0).at("shapes").at(0), json({{"m", 1}, {"n", 33}}));
    EXPECT_EQ(canonical.at("performance").at(1).contains("reference"), false) << canonical.dump();
    EXPECT_EQ(parse_rubric(without_sources(canonical), "t.json").to_json(), canonical);
}

TEST(ParseRubric, ABlockTransposeRubricAddsTheBlock) {
    const json doc = {{"operation", "block_transpose"},
                      {"correctness",
                       {{{"name", "blocks"},
                         {"points", 10},
                         {"shapes", {{{"m", 48}, {"n", 96}, {"block", {1, 16}}}, {{"square", 60}, {"block", 15}}}},
                         {"seeds", {1}}}}},
                      {"performance",
                       {{{"name", "copy"},
                         {"points", 5},
                         {"shape", {{"square", 4096}, {"block", 16}}},
                         {"min_fraction_of_copy", 0.5}}}}};
    const Rubric r = parse_rubric(doc, "b.json");
    EXPECT_EQ(r.operation, Operation::block_transpose);
    EXPECT_EQ(r.correctness[0].shapes, (std::vector<Shape>{{48, 96, 0, 1}, {48, 96, 0, 16}, {60, 60, 0, 15}}));
    EXPECT_EQ(r.performance[0].shape, (Shape{4096, 4096, 0, 16}));
    const json canonical = r.to_json();
    EXPECT_EQ(canonical.at("correctness").at(0).at("shapes").at(1), json({{"m", 48}, {"n", 96}, {"block", 16}}));
    EXPECT_EQ(parse_rubric(without_sources(canonical), "b.json").to_json(), canonical);
}

TEST(ParseRubric, AGemmRubricsCanonicalFormIsUnchangedByOperations) {
    // Its sha256 is a result's provenance (grade/provenance.hpp): a key added to every GEMM rubric's
    // canonical form would make every stored result look out of date.
    const json canonical = parse_rubric(every_key_rubric(), "every.json").to_json();
    EXPECT_FALSE(canonical.contains("operation")) << canonical.dump();
    EXPECT_EQ(canonical.at("correctness").at(0).at("shapes").at(0), json({{"m", 1}, {"n", 65}, {"k", 17}}));
    const json explicit_gemm = [] {
        json doc = every_key_rubric();
        doc["operation"] = "gemm";
        return doc;
    }();
    EXPECT_EQ(parse_rubric(explicit_gemm, "every.json").to_json(), canonical);
}

TEST(MergeRubrics, FilesOfDifferentOperationsAreAnErrorAtTheLaterFile) {
    const Rubric pub = parse_rubric(transpose_rubric(), "grading/transpose.json");
    // A hidden file without "operation" is a GEMM rubric: its shapes would not even be transposes'.
    const Rubric gemm = parse_rubric(json{{"correctness", {a_case("hidden")}}}, "staff/hidden.json");
    const ConfigError e = error_of([&] { merge_rubrics({pub, gemm}); });
    EXPECT_EQ(e.file(), "staff/hidden.json");
    EXPECT_EQ(e.json_path(), "");
    EXPECT_NE(
        e.message().find("this file grades gemm (the default: it has no \"operation\" key), but grading/transpose.json "
                         "grades transpose"),
        std::string::npos)
        << e.what();
    json block = {
        {"operation", "block_transpose"},
        {"correctness", {{{"name", "b"}, {"points", 1}, {"shapes", {{{"square", 8}, {"block", 2}}}}, {"seeds", {1}}}}}};
    const ConfigError b = error_of([&] { merge_rubrics({pub, parse_rubric(block, "staff/b.json")}); });
    EXPECT_EQ(b.json_path(), "/operation");
    EXPECT_NE(b.message().find("this file grades block_transpose, but"), std::string::npos) << b.what();
    // The same operation merges.
    json hidden = {
        {"operation", "transpose"},
        {"correctness", {{{"name", "hidden"}, {"points", 5}, {"shapes", {{{"m", 4097}, {"n", 3}}}}, {"seeds", {9}}}}}};
    const Rubric m = merge_rubrics({pub, parse_rubric(hidden, "staff/t.json")});
    EXPECT_EQ(m.operation, Operation::transpose);
    EXPECT_EQ(m.correctness.back().shapes, (std::vector<Shape>{{4097, 3, 0, 0}}));
}

TEST(CheckTierReferences, AReferenceOfAnotherOperationIsAnErrorNamingBoth) {
    const Rubric r = parse_rubric(transpose_rubric(), "grading/transpose.json");
    const std::map<std::string, Operation> known{{"cuda_t1_naive", Operation::transpose},
                                                 {"cpu_naive", Operation::gemm}};
    EXPECT_NO_THROW(check_tier_references(r, known));  // the copy-ceiling tier has no reference to check
    json doc = transpose_rubric();
    doc["performance"][0]["reference"] = "cpu_naive";
    const ConfigError e = error_of([&] { check_tier_references(parse_rubric(doc, "grading/transpose.json"), known); });
    EXPECT_EQ(e.file(), "grading/transpose.json");
    EXPECT_EQ(e.json_path(), "/performance/0/reference");
    EXPECT_NE(e.message().find("the reference kernel 'cpu_naive' is a gemm kernel, but the rubric grades transpose"),
              std::string::npos)
        << e.what();
    // And a GEMM rubric's reference that is a transpose.
    const ConfigError g = error_of([&] {
        json tier = a_tier("t");
        tier["reference"] = "cuda_t1_naive";
        check_tier_references(parse_rubric(json{{"performance", {tier}}}, "lab.json"), known);
    });
    EXPECT_NE(g.message().find("'cuda_t1_naive' is a transpose kernel, but the rubric grades gemm"), std::string::npos)
        << g.what();
}

// ---- Merging the published rubric with hidden files ----

TEST(MergeRubrics, ConcatenatesCasesAndTiersAndRecordsEverySource) {
    const Rubric pub = parse_rubric(
        json{{"name", "lab"}, {"correctness", {a_case("a"), a_case("b")}}, {"performance", {a_tier("t1")}}},
        "pub.json");
    const Rubric hid =
        parse_rubric(json{{"correctness", {a_case("h", 4)}}, {"performance", {a_tier("t2", 3)}}}, "hid.json");
    const Rubric m = merge_rubrics({pub, hid});
    ASSERT_EQ(m.correctness.size(), 3u);
    EXPECT_EQ(m.correctness[2].name, "h");
    EXPECT_EQ(m.correctness[2].source, "hid.json");
    EXPECT_EQ(m.correctness[0].source, "pub.json");
    ASSERT_EQ(m.performance.size(), 2u);
    EXPECT_EQ(m.performance[1].name, "t2");
    EXPECT_EQ(m.sources, (std::vector<std::string>{"pub.json", "hid.json"}));
    EXPECT_EQ(m.name, "lab");  // the hidden file does not set it: its stem does not win
    EXPECT_EQ(m.max_points(), 10 + 10 + 4 + 5 + 3);
    EXPECT_EQ(m.to_json().at("sources"), json({"pub.json", "hid.json"}));
}

TEST(MergeRubrics, ADuplicateNameAcrossFilesNamesBothFiles) {
    const Rubric pub = parse_rubric(json{{"correctness", {a_case("odd"), a_case("even")}}}, "public/lab3.json");
    const Rubric hid = parse_rubric(json{{"correctness", {a_case("new"), a_case("even")}}}, "staff/hidden.json");
    const ConfigError e = error_of([&] { merge_rubrics({pub, hid}); });
    EXPECT_EQ(e.file(), "staff/hidden.json");
    EXPECT_EQ(e.json_path(), "/correctness/1/name");
    EXPECT_NE(e.message().find("'even'"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("public/lab3.json at /correctness/1/name"), std::string::npos) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("staff/hidden.json"), std::string::npos);
    EXPECT_NE(what.find("public/lab3.json"), std::string::npos);

    // A tier named like an earlier file's case is the same mistake.
    const Rubric tiers = parse_rubric(json{{"performance", {a_tier("x"), a_tier("odd")}}}, "staff/tiers.json");
    const ConfigError t = error_of([&] { merge_rubrics({pub, tiers}); });
    EXPECT_EQ(t.file(), "staff/tiers.json");
    EXPECT_EQ(t.json_path(), "/performance/1/name");
    EXPECT_NE(t.message().find("public/lab3.json at /correctness/0/name"), std::string::npos) << t.what();

    // The third file's entry is found against a merge of the first two: pointers stay per file.
    const Rubric third = parse_rubric(json{{"correctness", {a_case("new")}}}, "staff/third.json");
    const ConfigError h = error_of([&] {
        merge_rubrics({pub, parse_rubric(json{{"correctness", {a_case("new")}}}, "staff/hidden.json"), third});
    });
    EXPECT_EQ(h.file(), "staff/third.json");
    EXPECT_EQ(h.json_path(), "/correctness/0/name");
    EXPECT_NE(h.message().find("staff/hidden.json at /correctness/0/name"), std::string::npos) << h.what();
}

TEST(MergeRubrics, PointsThatOverflowOnlyTogetherNameTheLaterFile) {
    const Rubric pub = parse_rubric(json{{"correctness", {a_case("a", 1.5e308)}}}, "public/lab3.json");
    const Rubric hid = parse_rubric(json{{"correctness", {a_case("b", 1), a_case("c", 1e308)}}}, "staff/hidden.json");
    const ConfigError e = error_of([&] { merge_rubrics({pub, hid}); });
    EXPECT_EQ(e.file(), "staff/hidden.json");
    EXPECT_EQ(e.json_path(), "/correctness/1/points");
    EXPECT_NE(e.message().find("add up to more than the largest number"), std::string::npos) << e.what();
}

TEST(ParseRubric, NonFinitePointsInABuiltDocumentAreOutOfRange) {
    const ConfigError e = error_of([] {
        parse_rubric(json{{"correctness", {a_case("a", std::numeric_limits<double>::infinity())}}}, "t.json");
    });
    EXPECT_EQ(e.json_path(), "/correctness/0/points");
    EXPECT_NE(e.message().find("number out of range"), std::string::npos) << e.what();
}

TEST(CheckTierReferences, AnUnknownReferenceNamesItsFileAndPathWithASuggestion) {
    const Rubric pub = parse_rubric(json{{"performance", {a_tier("t1")}}}, "public/lab3.json");
    json hidden_tier = a_tier("t2");
    hidden_tier["reference"] = "cublas_sgem";
    const Rubric hid = parse_rubric(json{{"performance", {a_tier("t0"), hidden_tier}}}, "staff/hidden.json");
    const Rubric merged = merge_rubrics({pub, hid});
    const std::map<std::string, Operation> known{
        {"cpu_naive", Operation::gemm}, {"cublas_sgemm", Operation::gemm}, {"cuda_tiled", Operation::gemm}};
    EXPECT_NO_THROW(check_tier_references(pub, known));
    const ConfigError e = error_of([&] { check_tier_references(merged, known); });
    EXPECT_EQ(e.file(), "staff/hidden.json");
    EXPECT_EQ(e.json_path(), "/performance/1/reference");
    EXPECT_NE(e.message().find("'cublas_sgem' (did you mean 'cublas_sgemm'?)"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("known reference kernels: cpu_naive, cublas_sgemm, cuda_tiled"), std::string::npos)
        << e.what();
    const ConfigError none = error_of([&] { check_tier_references(pub, {}); });
    EXPECT_EQ(none.json_path(), "/performance/0/reference");
    EXPECT_NE(none.message().find("no trusted plugin was found"), std::string::npos) << none.what();
}

TEST(MergeRubrics, EachScalarComesFromTheLastFileThatSetsIt) {
    const Rubric first = parse_rubric(json{{"name", "lab"},
                                           {"description", "public"},
                                           {"kernel", "student_gemm"},
                                           {"backend", "cuda"},
                                           {"limits", {{"call_s", 10}, {"total_s", 100}}},
                                           {"measure", {{"warmup", 5}, {"time_budget_s", 2.0}}},
                                           {"correctness", {a_case("a")}}},
                                      "first.json");
    // Sets warmup to the default value: explicitly set, so it still overrides the first file's 5.
    const Rubric second = parse_rubric(json{{"limits", {{"call_s", 20}}},
                                            {"measure", {{"warmup", 2}}},
                                            {"requires_correctness", false},
                                            {"correctness", {a_case("b")}}},
                                       "second.json");
    const Rubric third = parse_rubric(
        json{{"limits", {{"call_s", 30}}}, {"backend", "cpu"}, {"correctness", {a_case("c")}}}, "third.json");
    const Rubric m = merge_rubrics({first, second, third});
    EXPECT_EQ(m.name, "lab");
    EXPECT_EQ(m.description, "public");
    EXPECT_EQ(m.kernel, "student_gemm");
    EXPECT_EQ(m.backend, Backend::cpu);
    EXPECT_EQ(m.limits.call_s, 30);    // last setter
    EXPECT_EQ(m.limits.total_s, 100);  // only the first sets it
    EXPECT_EQ(m.limits.load_s, 30);    // nobody sets it: the default
    EXPECT_EQ(m.warmup, 2);
    EXPECT_EQ(m.time_budget_s, 2.0);
    EXPECT_EQ(m.repeats, 10);
    EXPECT_FALSE(m.requires_correctness);
    EXPECT_EQ(std::count(m.explicitly_set.begin(), m.explicitly_set.end(), "/limits/call_s"), 1);

    // Order matters: the public file given last wins back what it sets.
    const Rubric reversed = merge_rubrics({second, first});
    EXPECT_EQ(reversed.warmup, 5);
    EXPECT_EQ(reversed.limits.call_s, 10);
    EXPECT_FALSE(reversed.requires_correctness);  // first.json does not set it
}

TEST(ParseRubric, TheLeaderboardIsShownByDefaultAndCanBeHiddenOrLeaveStudentsOff) {
    const json base{{"correctness", {a_case("c")}}};
    EXPECT_EQ(parse_rubric(base, "r.json").leaderboard, LeaderboardSettings{});
    json hidden = base;
    hidden["leaderboard"] = false;
    EXPECT_FALSE(parse_rubric(hidden, "r.json").leaderboard.show);
    json opt_out = base;
    opt_out["leaderboard"] = {{"opt_out", {"alice", "bob.2"}}};
    const Rubric r = parse_rubric(opt_out, "r.json");
    EXPECT_TRUE(r.leaderboard.show);
    EXPECT_EQ(r.leaderboard.opt_out, (std::vector<std::string>{"alice", "bob.2"}));
    EXPECT_EQ(r.to_json().at("leaderboard"), json({{"show", true}, {"opt_out", {"alice", "bob.2"}}}));
    json canonical = base;
    canonical["leaderboard"] = r.to_json().at("leaderboard");
    EXPECT_EQ(parse_rubric(canonical, "r.json").leaderboard, r.leaderboard) << "the canonical form parses back";
    EXPECT_FALSE(parse_rubric(base, "r.json").to_json().contains("leaderboard"))
        << "a default changes no canonical form";
}

TEST(MergeRubrics, AnyFileHidesTheBoardAndOptOutsAddUpWithoutChangingTheRubricsHash) {
    json published{{"correctness", {a_case("c")}}, {"leaderboard", {{"opt_out", {"alice"}}}}};
    json staff{{"correctness", {a_case("h")}}, {"leaderboard", {{"opt_out", {"bob", "alice"}}}}};
    Rubric merged = merge_rubrics({parse_rubric(published, "p.json"), parse_rubric(staff, "s.json")});
    EXPECT_TRUE(merged.leaderboard.show);
    EXPECT_EQ(merged.leaderboard.opt_out, (std::vector<std::string>{"alice", "bob"}));
    staff["leaderboard"] = false;
    published["leaderboard"] = true;
    merged = merge_rubrics({parse_rubric(published, "p.json"), parse_rubric(staff, "s.json")});
    EXPECT_FALSE(merged.leaderboard.show) << "a later file's true cannot show what another hides, nor the reverse";
    merged = merge_rubrics({parse_rubric(staff, "s.json"), parse_rubric(published, "p.json")});
    EXPECT_FALSE(merged.leaderboard.show);
    // Who is on the class page's board is no input of a grade: results stay current when it changes.
    json without = published;
    without.erase("leaderboard");
    EXPECT_EQ(rubric_sha256(parse_rubric(published, "p.json")), rubric_sha256(parse_rubric(without, "p.json")));
}

TEST(MergeRubrics, OneRubricComesBackUnchangedAndNoneIsAnError) {
    const Rubric only = parse_rubric(every_key_rubric(), "every.json");
    EXPECT_EQ(merge_rubrics({only}).to_json(), only.to_json());
    EXPECT_THROW(merge_rubrics({}), std::invalid_argument);
}

// ---- The secret seed ----

TEST(SecretSeed, ZeroMeansNoSecret) {
    for (uint64_t seed : {0ULL, 1ULL, 2ULL, 18446744073709551615ULL}) EXPECT_EQ(mix_secret_seed(seed, 0), seed);
}

TEST(SecretSeed, MixIsPinnedDeterministicAndDependsOnBoth) {
    // Pinned (computed by an independent splitmix64): changing the mix would change every graded input.
    EXPECT_EQ(mix_secret_seed(1, 42), 0xf34fe9248c9342e5ULL);
    EXPECT_EQ(mix_secret_seed(7, 0xdeadbeef), 0x0da630514a705aabULL);
    EXPECT_EQ(mix_secret_seed(1, 42), mix_secret_seed(1, 42));
    EXPECT_NE(mix_secret_seed(1, 42), mix_secret_seed(1, 43));
    EXPECT_NE(mix_secret_seed(1, 42), mix_secret_seed(2, 42));
    EXPECT_NE(mix_secret_seed(1, 42), 1u);
}

TEST(SecretSeed, DistinctCaseSeedsStayDistinct) {
    std::unordered_set<uint64_t> mixed;
    for (uint64_t seed = 0; seed < 20000; ++seed) mixed.insert(mix_secret_seed(seed, 0x1234567890abcdefULL));
    EXPECT_EQ(mixed.size(), 20000u);
}

TEST(SecretSeed, OneBitOfTheSecretChangesAboutHalfTheBits) {
    double total = 0;
    int samples = 0;
    for (uint64_t secret : {1ULL, 0x5555ULL, 0x0123456789abcdefULL})
        for (int bit = 0; bit < 64; ++bit) {
            const uint64_t flipped = secret ^ (1ULL << bit);
            if (flipped == 0) continue;
            total += double(std::bitset<64>(mix_secret_seed(1, secret) ^ mix_secret_seed(1, flipped)).count());
            ++samples;
        }
    const double mean = total / samples;
    EXPECT_GT(mean, 28.0);
    EXPECT_LT(mean, 36.0);
}

TEST(SecretSeed, ParsesDecimalAndHexAndRejectsTheRestWithoutEchoingIt) {
    EXPECT_EQ(parse_secret_seed("12345"), 12345u);
    EXPECT_EQ(parse_secret_seed("0xfF"), 255u);
    EXPECT_EQ(parse_secret_seed("18446744073709551615"), 18446744073709551615ULL);
    EXPECT_EQ(parse_secret_seed("0xffffffffffffffff"), 18446744073709551615ULL);
    for (const char* bad :
         {"", "0", "0x0", "0x", "hunter2", "-5", "12 ", "18446744073709551616", "0x1ffffffffffffffff"}) {
        SCOPED_TRACE(bad);
        const ConfigError e = error_of([&] { parse_secret_seed(bad); });
        EXPECT_EQ(e.json_path(), "KREG_SECRET_SEED");
        if (std::string(bad).size() > 2) EXPECT_EQ(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
}

TEST(SecretSeed, ReadFromTheEnvironment) {
    ::unsetenv(kSecretSeedVariable);
    EXPECT_EQ(secret_seed_from_environment(), std::nullopt);
    ::setenv(kSecretSeedVariable, "", 1);
    EXPECT_EQ(secret_seed_from_environment(), std::nullopt);
    ::setenv(kSecretSeedVariable, "0x10", 1);
    EXPECT_EQ(secret_seed_from_environment(), 16u);
    ::setenv(kSecretSeedVariable, "banana", 1);
    EXPECT_THROW(secret_seed_from_environment(), ConfigError);
    ::unsetenv(kSecretSeedVariable);
}

// ---- Shipped rubrics, schema and README ----

const std::set<std::string> kKnownReferences{
    "cpu_naive", "cpu_blocked", "cuda_01_naive", "cuda_02_tiled16", "cuda_02_tiled32", "cuda_04_coarsened",
    "cuda_09_warptiled", "cublas_sgemm",
    // transposes (issue 11)
    "cpu_transpose", "cuda_t1_naive", "cuda_t2_smem", "cuda_t3_padded", "cuda_t3_padded_dynamic", "cuda_t4_vectorized"};

bool has_shape(const std::vector<CorrectnessCase>& cases, Shape s) {
    for (const auto& c : cases)
        if (std::find(c.shapes.begin(), c.shapes.end(), s) != c.shapes.end()) return true;
    return false;
}

TEST(ShippedRubrics, EveryOneLoadsWithKnownReferences) {
    std::set<std::string> files;
    for (const auto& entry : fs::directory_iterator(kGrading)) {
        if (entry.path().extension() != ".json") continue;
        SCOPED_TRACE(entry.path().string());
        Rubric r;
        ASSERT_NO_THROW(r = load_rubric(entry.path()));
        files.insert(entry.path().filename().string());
        const bool names_itself = std::count(r.explicitly_set.begin(), r.explicitly_set.end(), "/name") > 0;
        if (names_itself) EXPECT_EQ(r.name, entry.path().stem().string()) << "the name should match the file";
        EXPECT_GT(r.max_points(), 0);
        for (const auto& t : r.performance)
            if (!t.against_copy_ceiling()) EXPECT_EQ(kKnownReferences.count(t.reference), 1u) << t.reference;
        for (const auto& c : r.correctness) EXPECT_FALSE(c.seeds.empty());
    }
    for (const char* expected : {"lab3.json", "lab3-hidden.example.json", "cpu-lab.json", "transpose.json"})
        EXPECT_EQ(files.count(expected), 1u) << expected;
}

TEST(ShippedRubrics, Lab3IsTheCudaTiledLab) {
    const Rubric r = load_rubric(kGrading / "lab3.json");
    EXPECT_EQ(r.name, "lab3");
    EXPECT_EQ(r.backend, Backend::cuda);
    EXPECT_EQ(r.kernel, "student_gemm");
    EXPECT_TRUE(r.requires_correctness);
    std::vector<Shape> shapes;
    for (const auto& c : r.correctness) {
        EXPECT_EQ(c.seeds, (std::vector<uint64_t>{1, 2})) << c.name;
        shapes.insert(shapes.end(), c.shapes.begin(), c.shapes.end());
    }
    EXPECT_EQ(
        shapes,
        (std::vector<Shape>{
            {1, 1, 1}, {17, 17, 17}, {33, 65, 17}, {1, 300, 1}, {64, 80, 1}, {517, 517, 517}, {1000, 3000, 257}}));
    ASSERT_EQ(r.performance.size(), 3u);
    EXPECT_EQ(r.performance[0].reference, "cuda_02_tiled16");
    EXPECT_EQ(r.performance[0].shape, (Shape{2048, 2048, 2048}));
    EXPECT_EQ(r.performance[0].min_ratio, 1.0);
    EXPECT_EQ(r.performance[1].reference, "cuda_04_coarsened");
    EXPECT_EQ(r.performance[1].shape, (Shape{2048, 2048, 2048}));
    EXPECT_EQ(r.performance[1].min_ratio, 1.0);
    EXPECT_EQ(r.performance[2].reference, "cublas_sgemm");
    EXPECT_EQ(r.performance[2].shape, (Shape{4096, 4096, 4096}));
    EXPECT_EQ(r.performance[2].min_ratio, 0.5);
    EXPECT_EQ(r.max_points(), 100);
}

TEST(ShippedRubrics, TheHiddenExampleMergesWithLab3) {
    const fs::path pub = kGrading / "lab3.json", hid = kGrading / "lab3-hidden.example.json";
    const Rubric m = merge_rubrics({load_rubric(pub), load_rubric(hid)});
    EXPECT_EQ(m.name, "lab3");
    EXPECT_EQ(m.sources, (std::vector<std::string>{pub.string(), hid.string()}));
    EXPECT_GT(m.correctness.size(), load_rubric(pub).correctness.size());
    EXPECT_TRUE(has_shape(m.correctness, {4097, 1025, 2049}));
    EXPECT_TRUE(has_shape(m.correctness, {2, 2, 4096}));
    EXPECT_EQ(m.correctness.back().source, hid.string());
    EXPECT_LT(m.limits.call_s, load_rubric(pub).limits.call_s) << "the example tightens call_s";
    EXPECT_EQ(m.limits.total_s, load_rubric(pub).limits.total_s);
    EXPECT_EQ(m.backend, Backend::cuda);
}

TEST(ShippedRubrics, TheTransposeLabIsBitExactThenJudgedAgainstTheCopyCeiling) {
    const Rubric r = load_rubric(kGrading / "transpose.json");
    EXPECT_EQ(r.name, "transpose");
    EXPECT_EQ(r.operation, Operation::transpose);
    EXPECT_EQ(r.kernel, "student_transpose");
    EXPECT_EQ(r.backend, Backend::cuda);
    std::vector<Shape> shapes;
    for (const auto& c : r.correctness) {
        EXPECT_EQ(c.seeds, (std::vector<uint64_t>{1, 2})) << c.name;
        shapes.insert(shapes.end(), c.shapes.begin(), c.shapes.end());
    }
    EXPECT_EQ(shapes, (std::vector<Shape>{{1, 1, 0, 0},
                                          {1, 300, 0, 0},
                                          {300, 1, 0, 0},
                                          {17, 33, 0, 0},
                                          {33, 65, 0, 0},
                                          {517, 517, 0, 0},
                                          {4097, 1025, 0, 0},
                                          {1000, 3000, 0, 0}}));
    ASSERT_EQ(r.performance.size(), 3u);
    EXPECT_EQ(r.performance[0].reference, "cuda_t1_naive");
    EXPECT_EQ(r.performance[0].shape, (Shape{4096, 4096, 0, 0}));
    EXPECT_EQ(r.performance[1].reference, "cuda_t3_padded");
    EXPECT_EQ(r.performance[1].min_ratio, 0.8);
    // cuda_copy is no transpose (a verified run calls it wrong_result): the last tier is judged against the
    // copy bandwidth the grader measures itself.
    EXPECT_TRUE(r.performance[2].against_copy_ceiling());
    EXPECT_EQ(r.performance[2].min_fraction_of_copy, 0.85);
    EXPECT_EQ(r.performance[2].shape, (Shape{8192, 8192, 0, 0}));
    for (const auto& t : r.performance) EXPECT_NE(t.reference, "cuda_copy");
    EXPECT_EQ(r.max_points(), 100);
}

TEST(ShippedRubrics, TheCpuLabNeedsNoGpu) {
    const Rubric r = load_rubric(kGrading / "cpu-lab.json");
    EXPECT_EQ(r.backend, Backend::cpu);
    ASSERT_EQ(r.performance.size(), 2u);
    std::vector<double> ratios;
    for (const auto& t : r.performance) {
        EXPECT_EQ(t.reference, "cpu_naive");
        EXPECT_EQ(t.shape, (Shape{256, 256, 256}));
        ratios.push_back(t.min_ratio);
    }
    EXPECT_EQ(ratios, (std::vector<double>{2.0, 5.0}));
    for (const auto& c : r.correctness)
        for (const auto& s : c.shapes) EXPECT_LE(work_flops(Operation::gemm, s), 2.0 * 512 * 512 * 512) << to_string(s);
}

std::set<std::string> keys_of(const json& object) {
    std::set<std::string> keys;
    for (const auto& [key, value] : object.items()) keys.insert(key);
    return keys;
}

TEST(ShippedRubrics, SchemaListsExactlyTheKeysTheParserAccepts) {
    const json schema = json::parse(read_text(kSource / "configs" / "schema" / "rubric.schema.json"));
    EXPECT_EQ(keys_of(schema.at("properties")), std::set<std::string>(rubric_keys().begin(), rubric_keys().end()));
    EXPECT_EQ(schema.at("additionalProperties"), false);

    // Cases, tiers, limits and measure: the canonical form has every key (tolerance when set).
    const json canonical = parse_rubric(every_key_rubric(), "every.json").to_json();
    std::set<std::string> case_keys = keys_of(canonical.at("correctness").at(0));
    std::set<std::string> tier_keys = keys_of(canonical.at("performance").at(0));
    // A tier against the copy ceiling has its own key instead of reference and min_ratio.
    const json copy_tier = parse_rubric(transpose_rubric(), "t.json").to_json().at("performance").at(1);
    for (const auto& [key, value] : copy_tier.items()) tier_keys.insert(key);
    case_keys.erase("source");
    tier_keys.erase("source");
    const json& defs = schema.at("definitions");
    EXPECT_EQ(keys_of(defs.at("correctnessCase").at("properties")), case_keys);
    EXPECT_EQ(keys_of(defs.at("performanceTier").at("properties")), tier_keys);
    EXPECT_EQ(keys_of(schema.at("properties").at("limits").at("properties")), keys_of(canonical.at("limits")));
    EXPECT_EQ(keys_of(schema.at("properties").at("measure").at("properties")), keys_of(canonical.at("measure")));

    // Shape specs are the sweep configs': the schema carries the same definitions.
    const json sweep = json::parse(read_text(kSource / "configs" / "schema" / "sweep.schema.json"));
    for (const char* def : {"size", "range", "dim", "shapeSpec", "operationShapeSpec"})
        EXPECT_EQ(defs.at(def), sweep.at("definitions").at(def)) << def << " differs from sweep.schema.json";
}

TEST(ShippedRubrics, ReadmeDocumentsEveryKeyAndTheHiddenFilePractice) {
    const std::string readme = read_text(kGrading / "README.md");
    ASSERT_FALSE(readme.empty());
    for (const auto& key : rubric_keys()) EXPECT_NE(readme.find("`" + key + "`"), std::string::npos) << key;
    for (const char* key : {"all_or_nothing", "tolerance", "min_ratio", "reference", "min_fraction_of_copy", "load_s",
                            "call_s", "total_s", "build_s", "transpose", "block_transpose"})
        EXPECT_NE(readme.find(std::string("`") + key + "`"), std::string::npos) << key;
    EXPECT_NE(readme.find(kSecretSeedVariable), std::string::npos);
    EXPECT_NE(readme.find("--rubric grading/lab3.json --rubric"), std::string::npos);
}

}  // namespace
}  // namespace kreg
