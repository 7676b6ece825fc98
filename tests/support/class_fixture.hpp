// A class of graded results made by hand, for the feedback and class-page tests: a published rubric
// with two cases and a tier, a staff file with a hidden case and a hidden tier, and students whose
// results carry what an attacker would put in them (markup in kernel names, messages, compiler output)
// next to ordinary ones. Nothing here runs a kernel.
#pragma once

#include "grade/gradebook.hpp"
#include "grade/rubric.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kreg::test {

// What a hostile submission writes wherever its text is shown: an element, a script, an attribute
// break-out, a textarea/title/style close, a link, Markdown syntax and a shell injection.
inline const std::string kHostileText =
    "<script>document.documentElement.setAttribute('data-pwned','script')</script></textarea></title></style>"
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">\"' onmouseover=x "
    "[click](javascript:alert(1)) **bold** `code` | cell | $(touch /tmp/kreg-pwned)";

// Strings of the hidden case and tier that must never reach a student: names, shapes, seeds, the file.
inline const std::vector<std::string> kHiddenStrings{"secret ragged", "300x7x129", "987654321",
                                                     "secret speed",  "777x5x3",   "staff-hidden.json"};

inline Rubric class_rubric(const nlohmann::json& leaderboard = nullptr) {
    nlohmann::json published = {
        {"name", "lab9"},
        {"correctness",
         {{{"name", "odd shapes"}, {"points", 40}, {"shapes", {{{"m", 17}, {"n", 33}, {"k", 9}}}}, {"seeds", {2}}},
          {{"name", "mid"}, {"points", 20}, {"shapes", {{{"square", 64}}}}, {"seeds", {3}}}}},
        {"performance",
         {{{"name", "fast"},
           {"points", 20},
           {"shape", {{"square", 64}}},
           {"reference", "cpu_naive"},
           {"min_ratio", 2}}}}};
    if (!leaderboard.is_null()) published["leaderboard"] = leaderboard;
    const nlohmann::json hidden = {{"correctness",
                                    {{{"name", "secret ragged"},
                                      {"points", 10},
                                      {"shapes", {{{"m", 300}, {"n", 7}, {"k", 129}}}},
                                      {"seeds", {987654321}}}}},
                                   {"performance",
                                    {{{"name", "secret speed"},
                                      {"points", 10},
                                      {"shape", {{"m", 777}, {"n", 5}, {"k", 3}}},
                                      {"reference", "cpu_naive"},
                                      {"min_ratio", 3}}}}};
    return merge_rubrics({parse_rubric(published, "grading/lab9.json"), parse_rubric(hidden, "staff-hidden.json")});
}

inline nlohmann::json row(const std::string& kernel, int m, int n, int k, uint64_t seed, const std::string& status,
                          const std::string& reason) {
    return {{"kernel", kernel},  {"m", m},          {"n", n}, {"k", k}, {"seed", seed}, {"status", status},
            {"outcome", status}, {"reason", reason}};
}

inline CheckResult tier_check(const std::string& name, double ratio, bool met, double points,
                              const std::string& kernel) {
    CheckResult c{
        "performance",
        name,
        met ? points : 0,
        points,
        met,
        "ratio " + std::to_string(ratio) + " to cpu_naive" + (name == "fast" ? "" : " at 777x5x3 with seed 987654321"),
        nlohmann::json::object()};
    c.evidence["submission"] =
        row(kernel, name == "fast" ? 64 : 777, name == "fast" ? 64 : 5, name == "fast" ? 64 : 3, 7, "ok", "");
    c.evidence["reference"] = row("cpu_naive", 64, 64, 64, 1, "ok", "");
    c.evidence["ratio"] = ratio;
    c.evidence["ratio_interval"] = {{"low", ratio * 0.98}, {"high", ratio * 1.02}, {"confidence", 0.95}};
    return c;
}

// A graded student: every public case passed but the first (when fail_first), the hidden case failed,
// both tiers measured at ratio.
inline StudentResult graded_student(const std::string& id, double ratio, bool fail_first,
                                    const std::string& kernel = "student_gemm",
                                    const std::string& reason = "element (3, 4) differs") {
    StudentResult r;
    r.student = id;
    r.submission = "subs/" + id + ".so";
    r.status = fail_first ? "wrong_result" : "graded";
    r.max_score = 100;
    r.meta = {
        {"timestamp", "2026-12-02T01:00:00Z"},
        {"rubric", {{"sources", {"grading/lab9.json", "staff-hidden.json"}}}},
        {"provenance",
         {{"submission_sha256", "ab"}, {"rubric_sha256", "cd"}, {"secret_sha256", "5ecre7"}, {"kreg_version", "1"}}}};
    r.checks.push_back(
        {"audit", "static audit of the shared object", 0, 0, true, "no forbidden imports", nlohmann::json::object()});
    r.checks.push_back({"load", "load in a hardened worker", 0, 0, true,
                        "kernel '" + kernel + "' from " + kernel + " 1.0", nlohmann::json::object()});
    r.checks.push_back(
        {"correctness",
         "odd shapes",
         fail_first ? 0.0 : 40.0,
         40,
         !fail_first,
         fail_first ? "0/1 runs ok; first failure: wrong_result at 17x33x9 seed 2: " + reason : "1/1 runs ok",
         {row(kernel, 17, 33, 9, 2, fail_first ? "wrong_result" : "ok", fail_first ? reason : "")}});
    r.checks.push_back({"correctness", "mid", 20, 20, true, "1/1 runs ok", {row(kernel, 64, 64, 64, 3, "ok", "")}});
    r.checks.push_back({"correctness",
                        "secret ragged",
                        0,
                        10,
                        false,
                        "0/1 runs ok; first failure: wrong_result at 300x7x129 seed 987654321",
                        {row(kernel, 300, 7, 129, 987654321, "wrong_result", "at 300x7x129")}});
    r.checks.push_back(tier_check("fast", ratio, ratio >= 2, 20, kernel));
    r.checks.push_back(tier_check("secret speed", ratio, ratio >= 3, 10, kernel));
    for (const auto& c : r.checks) r.score += c.points;
    r.summary = std::to_string(int(r.score)) + "/100; hidden: 0/2 cases passed";
    return r;
}

inline StudentResult build_failed_student(const std::string& id, const std::string& first_error) {
    StudentResult r;
    r.student = id;
    r.submission = "subs/" + id;
    r.status = "build_failed";
    r.max_score = 100;
    r.summary =
        "build failed: cmake --build exited with code 1; first error: " + first_error.substr(0, first_error.find('\n'));
    r.checks.push_back({"build",
                        "build against the kreg SDK",
                        0,
                        0,
                        false,
                        "cmake --build exited with code 1",
                        {{"seconds", 1.5},
                         {"log_tail", "...\n" + first_error + "\nninja: build stopped"},
                         {"first_error", first_error}}});
    return r;
}

}  // namespace kreg::test
