// `runner grade` with a transpose rubric (tests/data/grading/transpose-cpu-rubric.json), on the CPU: every
// submission goes through the same hardened path as a GEMM one (sandboxed worker, inputs drawn by the
// grader per call, every call's output handed over sealed and checked here, bit for bit, every element),
// and each way of being wrong gets its status with a reason that says what was wrong. The tier against
// the copy ceiling cannot be judged for a CPU kernel, and says so rather than passing or failing quietly.
#include "grade/gradebook.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const fs::path kFixtures = KREG_FIXTURE_DIR;
const std::string kRubric = std::string(KREG_TEST_DATA_DIR) + "/grading/transpose-cpu-rubric.json";

std::map<std::string, StudentResult> results(const fs::path& out) {
    std::map<std::string, StudentResult> by_student;
    for (const auto& r : Gradebook(out).all()) by_student[r.student] = r;
    return by_student;
}

const CheckResult* check_named(const StudentResult& r, const std::string& name) {
    for (const auto& c : r.checks)
        if (c.name == name) return &c;
    return nullptr;
}

TEST(GradeTranspose, EachSubmissionIsCheckedBitForBitOutsideItsWorker) {
    const auto dir = test::fresh_dir("grade-transpose");
    fs::create_directories(dir / "subs");
    const std::map<std::string, std::string> students{
        {"good", "fixture_transpose_good.so"},
        {"one_wrong", "fixture_transpose_one_wrong.so"},
        {"unwritten", "fixture_transpose_unwritten.so"},
        {"writes_nan", "fixture_transpose_writes_nan.so"},
        {"nan_payload", "fixture_transpose_nan_payload.so"},
        {"gemm", "fixture_good.so"},  // a GEMM kernel handed in for the transpose lab
    };
    for (const auto& [student, file] : students) fs::copy_file(kFixtures / file, dir / "subs" / (student + ".so"));
    const auto run =
        test::run_command(kRunner + " grade --rubric " + kRubric + " --submissions subs --out out", dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto graded = results(dir / "out");
    ASSERT_EQ(graded.size(), students.size()) << run.err;

    // The honest one: every correctness point, the reference tier, and the copy tier not judged.
    const StudentResult& good = graded["good"];
    EXPECT_EQ(good.status, "graded") << good.summary;
    EXPECT_EQ(good.score, 90) << good.summary;
    EXPECT_EQ(good.max_score, 100);
    int runs = 0;
    for (const auto& c : good.checks)
        if (c.kind == "correctness") {
            EXPECT_TRUE(c.passed) << c.name << ": " << c.summary;
            for (const auto& row : c.evidence) {
                ++runs;
                EXPECT_EQ(row["operation"], "transpose") << row.dump();
                // Checked by the grader, every call, and by nothing in the worker.
                EXPECT_EQ(row["trusted_check"]["passed"], true) << row.dump();
                EXPECT_EQ(row["trusted_check"]["calls_checked"], 3) << row.dump();
                EXPECT_EQ(row["anticheat"]["calls_verified"], 0) << row.dump();
                EXPECT_EQ(row["anticheat"]["calls_exported"], 3) << row.dump();
                EXPECT_EQ(row["tolerance"], 0.0) << "bit for bit: " << row.dump();
            }
        }
    EXPECT_EQ(runs, 4 * 2 + 1);
    const CheckResult* reference_tier = check_named(good, "within 5x of the reference transpose");
    ASSERT_NE(reference_tier, nullptr);
    EXPECT_TRUE(reference_tier->passed) << reference_tier->summary;
    EXPECT_EQ(reference_tier->evidence["reference"]["kernel"], "cpu_transpose") << reference_tier->evidence.dump();
    EXPECT_EQ(reference_tier->evidence["submission"]["trusted_check"]["calls_checked"], 1 + 1 + 3)
        << reference_tier->evidence.dump();
    const CheckResult* copy_tier = check_named(good, "half of the copy bandwidth");
    ASSERT_NE(copy_tier, nullptr);
    EXPECT_FALSE(copy_tier->passed);
    EXPECT_EQ(copy_tier->points, 0);
    EXPECT_NE(copy_tier->summary.find(
                  "not judged, no points: the copy ceiling is unavailable: the graded kernel ran on the CPU"),
              std::string::npos)
        << copy_tier->summary;
    EXPECT_TRUE(copy_tier->evidence.contains("ceiling_unavailable")) << copy_tier->evidence.dump();
    EXPECT_FALSE(copy_tier->evidence.contains("fraction_of_copy")) << copy_tier->evidence.dump();
    // ...and the summary every staff view shows says it too.
    EXPECT_NE(good.summary.find("half of the copy bandwidth: not judged"), std::string::npos) << good.summary;

    // One way of being wrong each, all caught by the grader's exact check, each reason saying what.
    const std::map<std::string, std::string> wrong{
        {"one_wrong", "but the exact result is"},
        // C starts as a NaN or finite (verify/output_fill.hpp): "unwritten element at (63, 63): still holds
        // the NaN ...", or "element (63, 63) is 24.5 (bits ...) but the exact result is ...".
        {"unwritten", "at 64x64 seed 3: first call: "},
        {"writes_nan", "is nan (bits 0x7fc00000) but the exact result is"},
        // x * 1.0f keeps every finite value; only the planted signalling NaN shows it (quieted).
        {"nan_payload", "is nan (bits 0x7fc12345) but the exact result is nan (bits 0x7f812345)"},
    };
    for (const auto& [student, says] : wrong) {
        const StudentResult& r = graded[student];
        EXPECT_EQ(r.status, "wrong_result") << student << ": " << r.summary;
        EXPECT_EQ(r.score, 0) << student << ": " << r.summary;
        EXPECT_NE(r.summary.find(says), std::string::npos) << student << ": " << r.summary;
        EXPECT_NE(r.summary.find("not measured: correctness cases failed"), std::string::npos)
            << student << ": " << r.summary;
    }
    EXPECT_NE(graded["unwritten"].summary.find("(63, 63)"), std::string::npos) << graded["unwritten"].summary;
    const StudentResult& gemm = graded["gemm"];
    EXPECT_EQ(gemm.status, "load_failed") << gemm.summary;
    EXPECT_NE(gemm.summary.find("kernel 'fixture_good' is a gemm kernel; the rubric (" + kRubric +
                                ": /operation) grades transpose kernels"),
              std::string::npos)
        << gemm.summary;
}

TEST(GradeTranspose, ABlockTransposeRubricGradesInPlaceKernelsBitForBit) {
    const auto dir = test::fresh_dir("grade-block-transpose");
    fs::create_directories(dir / "subs");
    fs::copy_file(kFixtures / "fixture_block_transpose_good.so", dir / "subs" / "good.so");
    fs::copy_file(kFixtures / "fixture_block_transpose_off_by_one.so", dir / "subs" / "stops_early.so");
    // The fixtures take blocks up to 8. Block 1 is the identity: stopping a tile early is invisible there.
    std::ofstream(dir / "blocks.json") << R"({
      "operation": "block_transpose",
      "limits": {"load_s": 10, "call_s": 3, "total_s": 60},
      "correctness": [
        {"name": "identity blocks", "points": 20, "shapes": [{"m": 4, "n": 6, "block": 1}], "seeds": [1]},
        {"name": "odd tiles", "points": 80, "shapes": [{"m": 12, "n": 18, "block": 3}, {"square": 16, "block": [4, 8]}],
         "seeds": [1, 2], "all_or_nothing": false}
      ]
    })";
    const auto run = test::run_command(kRunner + " grade --rubric blocks.json --submissions subs --out out", dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto graded = results(dir / "out");
    ASSERT_EQ(graded.size(), 2u) << run.err;
    EXPECT_EQ(graded["good"].status, "graded") << graded["good"].summary;
    EXPECT_EQ(graded["good"].score, 100) << graded["good"].summary;
    const CheckResult* odd = check_named(graded["good"], "odd tiles");
    ASSERT_NE(odd, nullptr);
    for (const auto& row : odd->evidence) {
        EXPECT_EQ(row["operation"], "block_transpose") << row.dump();
        EXPECT_TRUE(row["block"] == 3 || row["block"] == 4 || row["block"] == 8) << row.dump();
        EXPECT_EQ(row["trusted_check"]["passed"], true) << row.dump();
    }
    const StudentResult& early = graded["stops_early"];
    EXPECT_EQ(early.status, "wrong_result") << early.summary;
    EXPECT_EQ(early.score, 20) << early.summary;  // the identity case only
    EXPECT_NE(early.summary.find("but the exact result is"), std::string::npos) << early.summary;
}

// The copy ceiling a tier is judged by is taken before a submission is built or audited: a build runs
// student code too, and a kernel still busy on the GPU while the ceiling is measured would lower it and
// so raise every fraction of it. So even a submission that never gets past its build or the audit carries
// the ceiling in its result (on a machine without a GPU: why there is none).
TEST(GradeTranspose, TheCopyCeilingIsTakenBeforeASubmissionIsBuiltOrAudited) {
    const auto dir = test::fresh_dir("grade-transpose-ceiling-first");
    fs::create_directories(dir / "subs");
    fs::copy_file(kFixtures / "cheat_socket.so", dir / "subs" / "socket.so");
    fs::copy(fs::path(KREG_SOURCE_DIR) / "plugins" / "template", dir / "subs" / "broken", fs::copy_options::recursive);
    std::ofstream(dir / "subs" / "broken" / "my_gemm.cpp", std::ios::app) << "\nthis is not C++;\n";
    const auto run =
        test::run_command(kRunner + " grade --rubric " + kRubric + " --submissions subs --out out", dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto graded = results(dir / "out");
    ASSERT_EQ(graded.size(), 2u) << run.err;
    EXPECT_EQ(graded["socket"].status, "rejected_audit") << graded["socket"].summary;
    EXPECT_EQ(graded["broken"].status, "build_failed") << graded["broken"].summary;
    for (const auto& [student, r] : graded) {
        ASSERT_TRUE(r.meta.contains("copy_ceiling")) << student << ": " << r.meta.dump();
        const auto& ceiling = r.meta["copy_ceiling"];
        EXPECT_TRUE(ceiling.contains("dram_copy_gbps") || ceiling.contains("unavailable"))
            << student << ": " << ceiling.dump();
    }
}

TEST(GradeTranspose, RubricMistakesOfOperationsStopTheGraderNamingFileAndPath) {
    const auto dir = test::fresh_dir("grade-transpose-rubrics");
    fs::copy_file(kFixtures / "fixture_transpose_good.so", dir / "good.so");
    const std::string rubric = test::slurp(kRubric);
    // A reference of another operation is found when the trusted plugins are described, before grading.
    std::string gemm_reference = rubric;
    gemm_reference.replace(gemm_reference.find("\"cpu_transpose\""), std::string("\"cpu_transpose\"").size(),
                           "\"cpu_naive\"");
    std::ofstream(dir / "gemm_reference.json") << gemm_reference;
    const auto ref =
        test::run_command(kRunner + " grade --rubric gemm_reference.json --submission good.so --out out", dir, dir);
    EXPECT_EQ(ref.exit_code, 2) << ref.err;
    EXPECT_NE(ref.err.find(
                  "gemm_reference.json: /performance/0/reference: the reference kernel 'cpu_naive' is a gemm kernel, "
                  "but the rubric grades transpose"),
              std::string::npos)
        << ref.err;
    EXPECT_FALSE(fs::exists(dir / "out" / "students" / "good.json"));
    // A GEMM key in a transpose shape, with the sweep parser's message.
    std::string with_k = rubric;
    with_k.replace(with_k.find("{\"m\": 17, \"n\": 33}"), std::string("{\"m\": 17, \"n\": 33}").size(),
                   "{\"m\": 17, \"n\": 33, \"k\": 4}");
    std::ofstream(dir / "with_k.json") << with_k;
    const auto k = test::run_command(kRunner + " grade --rubric with_k.json --submission good.so --out out", dir, dir);
    EXPECT_EQ(k.exit_code, 2) << k.err;
    EXPECT_NE(k.err.find("with_k.json: /correctness/0/shapes/3/k: a transpose shape has no 'k'"), std::string::npos)
        << k.err;
}

}  // namespace
}  // namespace kreg
