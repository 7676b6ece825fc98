// StudentResult <-> JSON: the per-student file of the gradebook. Read back strictly, since a file that
// does not say what it should is reported rather than trusted.
#include "grade/gradebook.hpp"

#include <algorithm>
#include <stdexcept>

namespace kreg {
namespace {
constexpr const char* kSchema = "kreg-student-result";
constexpr int kSchemaVersion = 1;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    throw std::invalid_argument(where.empty() ? what : where + ": " + what);
}

const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& where) {
    const auto it = object.find(key);
    if (it == object.end()) bad(where, std::string("missing '") + key + "'");
    return *it;
}

std::string string_at(const nlohmann::json& object, const char* key, const std::string& where, bool required) {
    const auto it = object.find(key);
    if (it == object.end()) {
        if (required) bad(where, std::string("missing '") + key + "'");
        return {};
    }
    if (!it->is_string()) bad(where + "/" + key, "expected a string, found " + std::string(it->type_name()));
    return it->get<std::string>();
}

double number_at(const nlohmann::json& object, const char* key, const std::string& where, bool required) {
    const auto it = object.find(key);
    if (it == object.end()) {
        if (required) bad(where, std::string("missing '") + key + "'");
        return 0;
    }
    if (!it->is_number()) bad(where + "/" + key, "expected a number, found " + std::string(it->type_name()));
    return it->get<double>();
}

nlohmann::json any_at(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    return it == object.end() ? nlohmann::json() : *it;
}

std::vector<std::string> strings_at(const nlohmann::json& object, const char* key, const std::string& where) {
    const auto it = object.find(key);
    if (it == object.end()) bad(where, std::string("missing '") + key + "'");
    if (!it->is_array()) bad(where + "/" + key, "expected an array, found " + std::string(it->type_name()));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < it->size(); ++i) {
        if (!(*it)[i].is_string())
            bad(where + "/" + key + "/" + std::to_string(i),
                "expected a string, found " + std::string((*it)[i].type_name()));
        out.push_back((*it)[i].get<std::string>());
    }
    return out;
}

nlohmann::json check_json(const CheckResult& c) {
    return {{"kind", c.kind},     {"name", c.name},       {"points", c.points},    {"max_points", c.max_points},
            {"passed", c.passed}, {"summary", c.summary}, {"evidence", c.evidence}};
}

CheckResult check_from_json(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object()) bad(where, "expected an object, found " + std::string(j.type_name()));
    CheckResult c;
    c.kind = string_at(j, "kind", where, true);
    c.name = string_at(j, "name", where, true);
    c.points = number_at(j, "points", where, true);
    c.max_points = number_at(j, "max_points", where, true);
    const nlohmann::json& passed = member(j, "passed", where);
    if (!passed.is_boolean()) bad(where + "/passed", "expected a boolean, found " + std::string(passed.type_name()));
    c.passed = passed.get<bool>();
    c.summary = string_at(j, "summary", where, false);
    c.evidence = any_at(j, "evidence");
    return c;
}
}  // namespace

nlohmann::json UnconfinedSelfCheck::to_json() const {
    return {{"summary", summary}, {"applied", applied}, {"not_applied", not_applied}};
}

UnconfinedSelfCheck UnconfinedSelfCheck::from_json(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object()) bad(where, "expected an object, found " + std::string(j.type_name()));
    UnconfinedSelfCheck u;
    u.summary = string_at(j, "summary", where, true);
    u.applied = strings_at(j, "applied", where);
    u.not_applied = strings_at(j, "not_applied", where);
    return u;
}

const std::vector<std::string>& student_statuses() {
    // "graded": every correctness run passed. Otherwise the most serious way a run ended (see
    // grade/outcome.hpp), or the stage that stopped grading before any run.
    static const std::vector<std::string> statuses{
        "graded",       "wrong_result",   "failed",       "timeout",           "crashed",
        "aborted",      "exited",         "cuda_error",   "sandbox_violation", "protocol_violation",
        "memory_limit", "rejected_audit", "build_failed", "load_failed",       "error"};
    return statuses;
}

nlohmann::json StudentResult::to_json() const {
    nlohmann::json checks_json = nlohmann::json::array();
    for (const auto& c : checks) checks_json.push_back(check_json(c));
    nlohmann::json j = {{"schema", kSchema},
                        {"schema_version", kSchemaVersion},
                        {"student", student},
                        {"submission", submission},
                        {"status", status},
                        {"score", score},
                        {"max_score", max_score},
                        {"summary", summary},
                        {"checks", checks_json},
                        {"sandbox", sandbox},
                        {"meta", meta},
                        {"graded_at", graded_at},
                        {"wall_s", wall_s},
                        {"peak_mb", peak_mb ? nlohmann::json(*peak_mb) : nlohmann::json()},
                        {"submission_removed", submission_removed}};
    if (unconfined_self_check) j["unconfined_self_check"] = unconfined_self_check->to_json();
    return j;
}

StudentResult StudentResult::from_json(const nlohmann::json& j) {
    const std::string root = "";
    if (!j.is_object()) bad("", "expected an object, found " + std::string(j.type_name()));
    if (string_at(j, "schema", root, true) != kSchema) bad("/schema", std::string("is not '") + kSchema + "'");
    const nlohmann::json& version = member(j, "schema_version", root);
    if (!version.is_number_integer() || version.get<int64_t>() != kSchemaVersion)
        bad("/schema_version", "expected " + std::to_string(kSchemaVersion) + ", found " + version.dump());

    StudentResult r;
    r.student = string_at(j, "student", root, true);
    if (!is_valid_student_id(r.student)) bad("/student", "'" + r.student + "' is not a valid student id");
    r.submission = string_at(j, "submission", root, false);
    r.status = string_at(j, "status", root, true);
    const auto& statuses = student_statuses();
    if (std::find(statuses.begin(), statuses.end(), r.status) == statuses.end())
        bad("/status", "unknown status '" + r.status + "'");
    r.score = number_at(j, "score", root, true);
    r.max_score = number_at(j, "max_score", root, true);
    r.summary = string_at(j, "summary", root, false);
    if (const auto it = j.find("checks"); it != j.end()) {
        if (!it->is_array()) bad("/checks", "expected an array, found " + std::string(it->type_name()));
        for (std::size_t i = 0; i < it->size(); ++i)
            r.checks.push_back(check_from_json((*it)[i], "/checks/" + std::to_string(i)));
    }
    r.sandbox = any_at(j, "sandbox");
    r.meta = any_at(j, "meta");
    // Added later: optional, so that an older gradebook still reads back.
    r.graded_at = string_at(j, "graded_at", root, false);
    r.wall_s = number_at(j, "wall_s", root, false);
    if (const nlohmann::json peak = any_at(j, "peak_mb"); !peak.is_null())
        r.peak_mb = number_at(j, "peak_mb", root, true);
    if (const nlohmann::json removed = any_at(j, "submission_removed"); !removed.is_null()) {
        if (!removed.is_boolean())
            bad("/submission_removed", "expected a boolean, found " + std::string(removed.type_name()));
        r.submission_removed = removed.get<bool>();
    }
    if (const auto it = j.find("unconfined_self_check"); it != j.end())
        r.unconfined_self_check = UnconfinedSelfCheck::from_json(*it, "/unconfined_self_check");
    return r;
}

}  // namespace kreg
