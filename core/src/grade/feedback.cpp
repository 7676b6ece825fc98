// make_feedback: the student's view read into the few things a student needs, and the files written.
#include "grade/feedback.hpp"

#include "common/operation_table.hpp"
#include "common/text.hpp"
#include "grade/self_check.hpp"
#include "grade/student_view.hpp"
#include "report/atomic_file.hpp"
#include "report/markup_text.hpp"
#include "report/printable_text.hpp"

#include <algorithm>

namespace kreg {
namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxLine = 2000, kMaxBlock = 8000;

std::string line(const std::string& text) { return printable_utf8(text, kMaxLine); }

std::string text_of(const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? line(j[key].get<std::string>()) : "";
}

uint64_t number_of(const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return 0;
    return j[key].is_number_unsigned() ? j[key].get<uint64_t>() : uint64_t(std::max<int64_t>(0, j[key].get<int64_t>()));
}

// The shape of a row's evidence as the runner's --shape takes it: the operation's size keys joined by 'x'
// (operations.def); its per-call parameter, if it has one, as that option (" --block 4").
std::string shape_of(const nlohmann::json& row, Operation op, std::string* param_option = nullptr) {
    std::string shape;
    for (const ShapeKeyDef& k : operation_row(op).shape_keys()) {
        const std::string value = std::to_string(number_of(row, k.name));
        if (k.role == KeyRole::size)
            shape += (shape.empty() ? "" : "x") + value;
        else if (param_option)
            *param_option += " --" + std::string(k.name) + " " + value;
    }
    return shape;
}

// The plugin file the student runs locally: the .so they submitted, or the one their folder builds.
std::string plugin_of(const StudentResult& view) {
    const fs::path submitted(view.submission);
    if (submitted.extension() == ".so") return line(submitted.filename().string());
    for (const auto& c : view.checks)
        if (c.kind == "build" && c.passed && c.summary.rfind("built ", 0) == 0)
            return "build/" + line(fs::path(c.summary.substr(6)).filename().string());
    return "build/<your plugin>.so";
}

std::string runner_command(const std::string& plugin, const std::string& kernels, Operation op,
                           const std::string& shape, const std::string& param_option, const std::string& rest) {
    std::string command = "runner --plugin " + shell_word(plugin) + " --kernels " + shell_word(kernels);
    if (op != Operation::gemm) command += " --operation " + std::string(to_string(op));
    return command + " --shape " + shape + param_option + rest;
}

// The first run of a correctness case that did not end ok, with the command that runs its shape and
// published seed under grading's checks (--strict).
std::optional<FeedbackFailure> correctness_failure(const CheckResult& c, Operation op, const std::string& plugin) {
    if (!c.evidence.is_array()) return std::nullopt;
    for (const auto& row : c.evidence) {
        if (text_of(row, "status") == "ok") continue;
        std::string block;
        const std::string shape = shape_of(row, op, &block);
        const std::string seed = std::to_string(number_of(row, "seed"));
        FeedbackFailure f{line(c.name), shape + ", seed " + seed,
                          text_of(row, "outcome") + ": " + text_of(row, "reason"), ""};
        if (!text_of(row, "kernel").empty())
            f.reproduce =
                runner_command(plugin, text_of(row, "kernel"), op, shape, block, " --seed " + seed + " --strict");
        return f;
    }
    return std::nullopt;
}

// A tier not met: the command that times the submission beside the tier's reference at the tier's shape.
FeedbackFailure performance_failure(const CheckResult& c, Operation op, const std::string& plugin) {
    const nlohmann::json mine =
        c.evidence.is_object() && c.evidence.contains("submission") ? c.evidence["submission"] : nlohmann::json();
    const nlohmann::json reference =
        c.evidence.is_object() && c.evidence.contains("reference") ? c.evidence["reference"] : nlohmann::json();
    FeedbackFailure f{line(c.name), "", line(c.summary), ""};
    if (!mine.is_object()) return f;
    std::string block;
    const std::string shape = shape_of(mine, op, &block);
    f.where = "at " + shape;
    const std::string kernel = text_of(mine, "kernel"), reference_kernel = text_of(reference, "kernel");
    if (kernel.empty()) return f;
    if (text_of(mine, "status") != "ok")
        f.reproduce = runner_command(plugin, kernel, op, shape, block,
                                     " --seed " + std::to_string(number_of(mine, "seed")) + " --strict");
    else if (!reference_kernel.empty())
        f.reproduce = runner_command(plugin, kernel + "," + reference_kernel, op, shape, block,
                                     " --baseline " + shell_word(reference_kernel));
    return f;
}
// A build failure's summary and reason end in "; first error: " and the error's line (grader.cpp); the
// feedback shows the error once, verbatim and with its excerpt, under its own heading.
std::string without_first_error(const std::string& text) {
    const std::size_t at = text.find("; first error: ");
    return at == std::string::npos ? text : text.substr(0, at) + " (the first compiler error is below)";
}
}  // namespace

Feedback make_feedback(const StudentResult& staff, const Rubric& rubric) {
    const StudentResult view = student_view(staff, rubric);  // from here on, nothing hidden is in reach
    Feedback f;
    f.student = line(view.student);
    f.rubric = line(rubric.name);
    f.status = line(view.status);
    f.summary = printable_lines(view.summary, kMaxBlock);
    f.graded_at = text_of(view.meta, "timestamp");
    f.score = view.score;
    f.max_score = view.max_score;
    if (view.unconfined_self_check)
        f.unconfined = Feedback::Unconfined{line(view.unconfined_self_check->summary),
                                            line(entry_names(view.unconfined_self_check->not_applied))};
    const std::string plugin = plugin_of(view);
    for (const auto& c : view.checks) {
        if (c.kind == "hidden") {
            f.hidden = Feedback::Hidden{c.points, c.max_points, line(c.summary)};
            continue;
        }
        f.checks.push_back(
            {line(c.kind), line(c.name), c.points, c.max_points, c.passed, printable_lines(c.summary, kMaxBlock)});
        if (c.kind == "build" && !c.passed && c.evidence.is_object() && c.evidence.contains("first_error") &&
            c.evidence["first_error"].is_string())
            f.compiler_error = printable_lines(c.evidence["first_error"].get<std::string>(), kMaxBlock);
        if (!f.compiler_error.empty()) f.checks.back().reason = without_first_error(f.checks.back().reason);
        if (c.passed) continue;
        if (c.kind == "correctness") {
            if (auto failure = correctness_failure(c, rubric.operation, plugin)) f.failures.push_back(*failure);
        } else if (c.kind == "performance") {
            f.failures.push_back(performance_failure(c, rubric.operation, plugin));
        }
    }
    if (!f.compiler_error.empty()) f.summary = without_first_error(f.summary);
    return f;
}

void write_student_feedback(const fs::path& out_dir, const StudentResult& staff, const Rubric& rubric) {
    const Feedback feedback = make_feedback(staff, rubric);
    const fs::path base = out_dir / "student-view" / staff.student;
    write_file_atomically(fs::path(base.string() + ".md"), feedback_markdown(feedback));
    write_file_atomically(fs::path(base.string() + ".html"), feedback_html(feedback));
}

}  // namespace kreg
