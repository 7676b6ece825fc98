// plugins/dispatch_common/dispatch_table.hpp: the reader every dispatch plugin uses. Matching (first rule wins,
// inclusive ranges, a missing key means any value, the fallback), the entry for (device, dtype), and a clear
// error naming the origin and the JSON path for each way a table can be malformed.
#include "../../plugins/dispatch_common/dispatch_table.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

using kreg::dispatch::choose;
using kreg::dispatch::parse_table;
using kreg::dispatch::TableError;

const char* kTable = R"({
  "kind": "kreg-dispatch-table", "version": 1,
  "made_by": {"kreg_version": "1.2.3", "command": "runner tune r.json --out t.json", "reports": []},
  "tables": [
    {"device": "cpu", "dtype": "fp32", "fallback": "cpu_blocked",
     "rules": [
       {"m": [1, 1], "kernel": "cpu_gemv", "ratio": 2.5, "reference": "cpu_naive", "class": "m 1",
        "source": {"report": "r.json", "m": 1, "n": 512, "k": 512}},
       {"m": [2, 64], "n": [2, 64], "k": [1, null], "kernel": "cpu_naive", "ratio": null},
       {"m": [2, 64], "kernel": "cpu_small"}
     ]},
    {"device": "NVIDIA H200", "dtype": "bf16", "fallback": "cuda_12_wgmma_ws_bf16", "rules": []}
  ]})";

std::string expect_error(const std::string& json) {
    try {
        parse_table(json, "t.json");
    } catch (const TableError& e) {
        return e.what();
    }
    ADD_FAILURE() << "parsed without an error: " << json;
    return "";
}

std::string with_rule(const std::string& rule) {
    return R"({"kind": "kreg-dispatch-table", "version": 1, "tables": [
      {"device": "cpu", "dtype": "fp32", "fallback": "cpu_naive", "rules": [)" +
           rule + "]}]}";
}

TEST(DispatchTable, FirstMatchingRuleWinsAndRangesAreInclusive) {
    const auto table = parse_table(kTable, "t.json");
    EXPECT_EQ(table.kreg_version, "1.2.3");
    const auto* cpu = table.find("cpu", "fp32");
    ASSERT_NE(cpu, nullptr);
    EXPECT_EQ(choose(*cpu, 1, 4096, 4096).kernel, "cpu_gemv");
    EXPECT_EQ(choose(*cpu, 1, 4096, 4096).rule_index, 0);
    EXPECT_NE(choose(*cpu, 1, 4096, 4096).reason.find("m 1"), std::string::npos);
    // m = 2..64 and n = 2..64 (both ends included) go to rule 1 before rule 2 is looked at.
    EXPECT_EQ(choose(*cpu, 2, 2, 1).kernel, "cpu_naive");
    EXPECT_EQ(choose(*cpu, 64, 64, 1 << 30).kernel, "cpu_naive");
    // n = 65 leaves rule 1; rule 2 has no n key, so any n matches.
    EXPECT_EQ(choose(*cpu, 64, 65, 8).kernel, "cpu_small");
    EXPECT_EQ(choose(*cpu, 64, 100000, 8).rule_index, 2);
}

TEST(DispatchTable, NoMatchingRuleTakesTheFallbackAndSaysSo) {
    const auto table = parse_table(kTable, "t.json");
    const auto choice = choose(*table.find("cpu", "fp32"), 65, 3, 3);
    EXPECT_EQ(choice.kernel, "cpu_blocked");
    EXPECT_EQ(choice.rule_index, -1);
    EXPECT_NE(choice.reason.find("fallback"), std::string::npos);
    EXPECT_NE(choice.reason.find("65x3x3"), std::string::npos);
    EXPECT_EQ(choose(*table.find("NVIDIA H200", "bf16"), 4096, 4096, 4096).kernel, "cuda_12_wgmma_ws_bf16");
}

TEST(DispatchTable, EntryIsFoundByExactDeviceAndDtype) {
    const auto table = parse_table(kTable, "t.json");
    EXPECT_EQ(table.find("cpu", "bf16"), nullptr);
    EXPECT_EQ(table.find("NVIDIA H200", "fp32"), nullptr);
    EXPECT_EQ(table.find("NVIDIA H100", "bf16"), nullptr);
    EXPECT_EQ(table.find("nvidia h200", "bf16"), nullptr);
    EXPECT_NE(table.find("NVIDIA H200", "bf16"), nullptr);
}

TEST(DispatchTable, MalformedTablesNameTheOriginAndThePath) {
    struct Case {
        std::string json, expected;
    };
    const Case cases[] = {
        {"{not json", "t.json: not valid JSON"},
        {"[]", "t.json: /: expected an object"},
        {R"({"kind": "kreg-report", "version": 1, "tables": []})", "/kind: expected \"kreg-dispatch-table\""},
        {R"({"kind": "kreg-dispatch-table", "version": 2, "tables": []})", "/version: this reader knows version 1"},
        {R"({"kind": "kreg-dispatch-table", "version": 1})", "/tables: missing"},
        {R"({"kind": "kreg-dispatch-table", "version": 1, "tables": [], "extra": 1})", "/extra: unknown key"},
        {R"({"kind": "kreg-dispatch-table", "version": 1, "tables": [{"device": "cpu", "dtype": "fp64",
            "fallback": "x", "rules": []}]})",
         "/tables/0/dtype: unknown dtype \"fp64\""},
        {R"({"kind": "kreg-dispatch-table", "version": 1, "tables": [{"device": "cpu", "dtype": "fp32",
            "rules": []}]})",
         "/tables/0/fallback: missing"},
        {R"({"kind": "kreg-dispatch-table", "version": 1, "tables": [
            {"device": "cpu", "dtype": "fp32", "fallback": "a", "rules": []},
            {"device": "cpu", "dtype": "fp32", "fallback": "b", "rules": []}]})",
         "/tables/1: a second entry for cpu/fp32"},
        // A misspelt dimension would otherwise make the rule match every shape.
        {with_rule(R"({"M": [1, 1], "kernel": "x"})"), "/tables/0/rules/0/M: unknown key"},
        {with_rule(R"({"m": [4, 2], "kernel": "x"})"), "/tables/0/rules/0/m: hi is below lo"},
        {with_rule(R"({"m": [0, 2], "kernel": "x"})"), "/tables/0/rules/0/m/0: lo must be >= 1"},
        {with_rule(R"({"m": [1], "kernel": "x"})"), "/tables/0/rules/0/m: expected [lo, hi]"},
        {with_rule(R"({"m": [1.5, 2], "kernel": "x"})"), "/tables/0/rules/0/m/0: expected an integer"},
        {with_rule(R"({"m": [1, 2]})"), "/tables/0/rules/0/kernel: missing"},
        {with_rule(R"({"kernel": ""})"), "/tables/0/rules/0/kernel: expected a non-empty string"},
        {with_rule(R"({"kernel": "x", "ratio": -1})"), "/tables/0/rules/0/ratio: expected a positive number"},
        {with_rule(R"({"kernel": "x", "source": {"report": "r", "m": 1, "n": 1}})"),
         "/tables/0/rules/0/source/k: missing"},
    };
    for (const Case& c : cases) {
        const std::string what = expect_error(c.json);
        EXPECT_NE(what.find(c.expected), std::string::npos) << "got: " << what << "\nfor: " << c.json;
        EXPECT_EQ(what.rfind("t.json: ", 0), 0u) << what;
    }
}

TEST(DispatchTable, TheOverrideVariableReplacesTheEmbeddedTable) {
    const std::string embedded = with_rule(R"({"kernel": "embedded_choice"})");
    ::unsetenv(kreg::dispatch::kTableOverrideVariable);
    auto table = kreg::dispatch::load_active_table(embedded, "embedded table of test");
    EXPECT_EQ(table.origin, "embedded table of test");
    EXPECT_EQ(choose(table.entries.at(0), 5, 5, 5).kernel, "embedded_choice");

    const auto path = std::filesystem::temp_directory_path() / ("dispatch_table_test_" + std::to_string(::getpid()));
    std::ofstream(path) << with_rule(R"({"kernel": "file_choice"})");
    ::setenv(kreg::dispatch::kTableOverrideVariable, path.c_str(), 1);
    table = kreg::dispatch::load_active_table(embedded, "embedded table of test");
    EXPECT_EQ(table.origin, std::string("KREG_DISPATCH_TABLE=") + path.string());
    EXPECT_EQ(choose(table.entries.at(0), 5, 5, 5).kernel, "file_choice");

    std::filesystem::remove(path);
    try {
        kreg::dispatch::load_active_table(embedded, "embedded table of test");
        ADD_FAILURE() << "a missing override file was not reported";
    } catch (const TableError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot be opened"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
    ::unsetenv(kreg::dispatch::kTableOverrideVariable);
}

}  // namespace
