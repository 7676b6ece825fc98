// On a GPU: one `runner grade` run over the GPU corpus (faults, a hung kernel, a write past C and the
// CUDA cheats) plus honest CUDA plugins. Every bad one gets its status, every honest one is scored. The
// CPU corpus and resuming are grade_test's.
#include "as_nobody.hpp"
#include "cuda/device_facts.hpp"
#include "grade/gradebook.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <vector>

namespace kreg {
namespace {
namespace fs = std::filesystem;

// student -> {fixture file ('@': from the plugin folder), expected status, expected score (-1: >= 80),
// whether a lower score is acceptable too}
struct Expected {
    std::string file, status;
    double score;
    bool or_less = false;
};
const std::map<std::string, Expected> kGpuCorpus = {
    {"warptiled", {"@cuda_09_warptiled.so", "graded", -1}},
    {"honest", {"honest_cuda.so", "graded", -1}},
    {"faults", {"fixture_illegal_address.so", "cuda_error", 0}},
    {"phrases", {"fixture_cuda_kreg_phrases.so", "failed", 0}},  // kreg's phrases as its message: what was seen
    {"hangs", {"fixture_infinite_kernel.so", "timeout", 0}},
    // One row past C meets the unmapped pages after C's mapping (cuda/fenced_device_buffer.hpp).
    {"overruns", {"fixture_cuda_writes_past_c.so", "cuda_error", 0}},
    // Harness-state dependence (tests/fixtures/harness_state).
    {"nan_as_zero", {"state_cuda_nan_as_zero.so", "wrong_result", 0}},
    {"clobbers_b", {"state_cuda_clobbers_b.so", "failed", 0}},
    {"far_4mib", {"state_cuda_write_4mib_past_c.so", "cuda_error", 0}},
    {"far_64mib", {"state_cuda_write_64mib_past_c.so", "cuda_error", 0}},
    {"caches", {"cheat_cuda_caches.so", "wrong_result", 0}},
    {"scribbles", {"cheat_cuda_modifies_input.so", "failed", 0}},
    // Correct once the device is idle, so the tiny shapes usually pass (their hidden work is shorter than
    // the cross-check's slack). Its hidden work is caught at 517^3, in the correctness case or (when fewer
    // than two of that case's two timed calls show it) in the performance tier: it never keeps those points.
    {"hides", {"cheat_cuda_other_stream.so", "failed", 80, true}},
    // Honest below 2^30 multiply-adds: all correctness points, then the tier's outputs fail the grader's check.
    {"shortcuts", {"cheat_cuda_big_shapes.so", "wrong_result", 80}},
    {"cublas", {"cheat_calls_cublas.so", "rejected_audit", 0}},
    {"pins", {"cheat_pins_l2.so", "rejected_audit", 0}},
    // Attacks on the grader itself (tests/fixtures/attacks; the CPU ones are grade_attack_test's).
    {"attack_forge", {"attack_cuda_forge.so", "protocol_violation", 0}},
    // The worker's results rewritten from inside to claim the runner's own observations.
    {"attack_forge_memory_cap", {"attack_cuda_forge_memory_cap.so", "protocol_violation", 0}},
    {"attack_forge_sandbox", {"attack_cuda_forge_sandbox_refusal.so", "protocol_violation", 0}},
    // More device memory than the GPU has: the device refused it, no cap of the grader's was reached.
    {"attack_device_memory", {"attack_cuda_device_memory.so", "failed", 0}},
    {"attack_rewrite", {"attack_cuda_rewrite_after_return.so", "wrong_result", 0}},
    {"attack_predict", {"attack_cuda_predict_inputs.so", "wrong_result", 0}},
    {"attack_holds_gpu", {"attack_cuda_fork_holds_gpu.so", "graded", -1}},
};

// The pids nvidia-smi lists as compute processes.
std::set<std::string> gpu_compute_pids() {
    std::set<std::string> pids;
    if (FILE* p = ::popen("nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null", "r")) {
        char line[64];
        while (std::fgets(line, sizeof line, p)) {
            std::string pid = line;
            while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
            if (!pid.empty()) pids.insert(pid);
        }
        ::pclose(p);
    }
    return pids;
}

// Pids whose /proc/<pid>/comm is name.
std::vector<pid_t> processes_named(const std::string& name) {
    std::vector<pid_t> pids;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string pid = entry.path().filename().string();
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string comm = test::slurp(entry.path() / "comm");
        while (!comm.empty() && comm.back() == '\n') comm.pop_back();
        if (comm == name) pids.push_back(pid_t(std::stol(pid)));
    }
    return pids;
}

TEST(GradeGpu, GpuCorpusAndHonestKernelsInOneRun) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto dir = test::fresh_dir("grade-gpu");
    fs::create_directories(dir / "subs");
    for (const auto& [student, e] : kGpuCorpus) {
        const fs::path from =
            e.file[0] == '@' ? fs::path(KREG_PLUGIN_DIR) / e.file.substr(1) : fs::path(KREG_FIXTURE_DIR) / e.file;
        fs::copy_file(from, dir / "subs" / (student + ".so"));
    }
    // Toolchains that link libstdc++ statically into every plugin (the GPU image's) need the tolerance;
    // elsewhere it changes nothing (docs/GRADING.md).
    const std::string cmd = std::string(KREG_RUNNER) + " grade --rubric " + KREG_TEST_DATA_DIR +
                            "/grading/gpu-corpus-rubric.json --submissions subs --out out --allow-static-libstdcxx";
    const std::set<std::string> gpu_pids_before = gpu_compute_pids();
    const auto run = test::run_command(cmd, dir, dir);
    // Nothing the corpus started may outlive grading: no kreg-leftover process, no new compute process.
    const std::vector<pid_t> leftovers = processes_named("kreg-leftover");
    std::vector<std::string> new_gpu_pids;
    for (const std::string& pid : gpu_compute_pids())
        if (!gpu_pids_before.count(pid)) new_gpu_pids.push_back(pid);
    for (pid_t pid : leftovers) ::kill(pid, SIGKILL);  // a run without the defences leaves them for 2 minutes
    EXPECT_TRUE(leftovers.empty()) << leftovers.size() << " kreg-leftover processes outlived grading";
    EXPECT_TRUE(new_gpu_pids.empty()) << "compute processes left on the GPU: " << new_gpu_pids.size() << ", first pid "
                                      << (new_gpu_pids.empty() ? "" : new_gpu_pids.front());
    ASSERT_EQ(run.exit_code, 0) << run.err;

    std::map<std::string, StudentResult> graded;
    for (const auto& r : Gradebook(dir / "out").all()) graded[r.student] = r;
    ASSERT_EQ(graded.size(), kGpuCorpus.size()) << run.err;
    for (const auto& [student, e] : kGpuCorpus) {
        const StudentResult& r = graded[student];
        EXPECT_EQ(r.status, e.status) << student << ": " << r.summary;
        if (e.score < 0)
            EXPECT_GE(r.score, 80) << student << ": " << r.summary;
        else if (e.or_less)
            EXPECT_LE(r.score, e.score) << student << ": " << r.summary;
        else
            EXPECT_EQ(r.score, e.score) << student << ": " << r.summary;
    }
    // The evidence names what was caught.
    EXPECT_NE(graded["faults"].summary.find("cudaErrorIllegalAddress"), std::string::npos) << graded["faults"].summary;
    EXPECT_NE(graded["hangs"].summary.find("per-call time limit of 5 s"), std::string::npos) << graded["hangs"].summary;
    EXPECT_NE(graded["overruns"].summary.find("kernel wrote outside C"), std::string::npos)
        << graded["overruns"].summary;
    EXPECT_NE(graded["hides"].summary.find("work escaped the harness stream"), std::string::npos)
        << graded["hides"].summary;
    EXPECT_NE(graded["pins"].summary.find("cudaDeviceSetLimit"), std::string::npos) << graded["pins"].summary;
    // Honest rows carry the roofline check and the grader's own check of every performance call.
    for (const auto& check : graded["warptiled"].checks)
        if (check.kind == "performance") {
            const auto& mine = check.evidence["submission"];
            EXPECT_EQ(mine["roofline"]["faster_than_floor"], false) << mine.dump();
            EXPECT_EQ(mine["trusted_check"]["calls_checked"], 1 + 1 + 3) << mine.dump();
        }
}

// The harness-state and outcome fixtures graded as an ordinary user (uid 65534 through setpriv), as the
// CPU corpus is (grade_attack_test.cpp): the defences do not depend on the grader being root.
TEST(GradeGpu, HarnessStateAndOutcomeFixturesAsAnUnprivilegedUser) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    if (auto why = test::why_cannot_run_as_nobody(KREG_RUNNER)) GTEST_SKIP() << *why;
    const std::vector<std::string> students = {"honest",
                                               "phrases",
                                               "nan_as_zero",
                                               "clobbers_b",
                                               "far_4mib",
                                               "far_64mib",
                                               "attack_forge_memory_cap",
                                               "attack_device_memory"};
    const auto dir = test::fresh_dir("grade-gpu-nobody");
    fs::create_directories(dir / "subs");
    for (const auto& student : students)
        fs::copy_file(fs::path(KREG_FIXTURE_DIR) / kGpuCorpus.at(student).file, dir / "subs" / (student + ".so"));
    test::give_to_nobody(dir);
    const std::string cmd = test::as_nobody() + KREG_RUNNER + " grade --rubric " + KREG_TEST_DATA_DIR +
                            "/grading/gpu-corpus-rubric.json --submissions subs --out out --allow-static-libstdcxx";
    const auto run = test::run_command(cmd, dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::map<std::string, StudentResult> graded;
    for (const auto& r : Gradebook(dir / "out").all()) graded[r.student] = r;
    ASSERT_EQ(graded.size(), students.size()) << run.err;
    for (const auto& student : students) {
        const Expected& e = kGpuCorpus.at(student);
        EXPECT_EQ(graded[student].status, e.status) << student << ": " << graded[student].summary;
        if (e.score < 0)
            EXPECT_GE(graded[student].score, 80) << student;
        else
            EXPECT_EQ(graded[student].score, e.score) << student;
    }
}

TEST(GradeGpu, OnEveryGpuAtOnceTheLanesGradeIntoOneGradebook) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const int gpus = cuda_device_count();
    const auto dir = test::fresh_dir("grade-gpu-devices");
    fs::create_directories(dir / "subs");
    const std::vector<std::string> students = {"caches", "faults", "honest", "warptiled"};
    for (const auto& student : students) {
        const Expected& e = kGpuCorpus.at(student);
        const fs::path from =
            e.file[0] == '@' ? fs::path(KREG_PLUGIN_DIR) / e.file.substr(1) : fs::path(KREG_FIXTURE_DIR) / e.file;
        fs::copy_file(from, dir / "subs" / (student + ".so"));
    }
    const std::string cmd =
        std::string(KREG_RUNNER) + " grade --rubric " + KREG_TEST_DATA_DIR +
        "/grading/gpu-corpus-rubric.json --submissions subs --out out --allow-static-libstdcxx --devices all";
    const auto run = test::run_command(cmd, dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("grading on " + std::to_string(gpus) + " GPU(s)"), std::string::npos) << run.err;
    // One lane per GPU (its lines marked with it), no shard, and one gradebook written as each student finished.
    for (int i = 0; i < gpus; ++i)
        EXPECT_NE(run.err.find("[device " + std::to_string(i) + "] "), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(dir / "out" / ("shard-1-of-" + std::to_string(gpus))));
    EXPECT_NE(run.out.find("gradebook: out/gradebook.csv"), std::string::npos) << run.out;
    std::map<std::string, StudentResult> graded;
    for (const auto& r : Gradebook(dir / "out").all()) graded[r.student] = r;
    ASSERT_EQ(graded.size(), students.size()) << run.err;
    for (const auto& student : students) {
        const Expected& e = kGpuCorpus.at(student);
        EXPECT_EQ(graded[student].status, e.status) << student << ": " << graded[student].summary;
        if (e.score < 0)
            EXPECT_GE(graded[student].score, 80) << student;
        else
            EXPECT_EQ(graded[student].score, e.score) << student;
    }
}

// The published transpose rubric (configs/grading/transpose.json) with the lab's starting point
// (plugins/template_cuda/transpose, kernel student_transpose): through the same hardened path as GEMM
// grading, every correctness run bit-exact, and the last tier judged against the copy bandwidth the
// grader measured itself before loading the submission.
TEST(GradeGpu, ThePublishedTransposeRubricGradesTheLabsStartingPoint) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto dir = test::fresh_dir("grade-gpu-transpose");
    fs::create_directories(dir / "subs");
    fs::copy_file(fs::path(KREG_FIXTURE_DIR) / "fixture_student_transpose.so", dir / "subs" / "starter.so");
    const std::string cmd = std::string(KREG_RUNNER) + " grade --rubric " + KREG_SOURCE_DIR +
                            "/configs/grading/transpose.json --submissions subs --out out --allow-static-libstdcxx";
    const auto run = test::run_command(cmd, dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::map<std::string, StudentResult> graded;
    for (const auto& r : Gradebook(dir / "out").all()) graded[r.student] = r;
    ASSERT_EQ(graded.count("starter"), 1u) << run.err;
    const StudentResult& r = graded["starter"];
    EXPECT_EQ(r.status, "graded") << r.summary;
    EXPECT_GE(r.score, 60) << r.summary;  // every correctness point; the naive start earns few tiers
    // The ceiling came from the grader's own measurement, made before the submission was loaded.
    ASSERT_TRUE(r.meta.contains("copy_ceiling")) << r.meta.dump();
    EXPECT_GT(r.meta["copy_ceiling"].value("dram_copy_gbps", 0.0), 0.0) << r.meta.dump();
    int correctness = 0;
    for (const auto& check : r.checks) {
        if (check.kind == "correctness") {
            ++correctness;
            EXPECT_TRUE(check.passed) << check.name << ": " << check.summary;
            for (const auto& row : check.evidence) EXPECT_EQ(row["trusted_check"]["passed"], true) << row.dump();
        }
        if (check.kind != "performance") continue;
        const auto& mine = check.evidence["submission"];
        EXPECT_EQ(mine["operation"], "transpose") << mine.dump();
        EXPECT_EQ(mine["roofline"]["faster_than_floor"], false) << mine.dump();
        EXPECT_GT(mine["roofline"]["fraction_of_copy_bandwidth"].get<double>(), 0.0) << mine.dump();
        if (check.name == "85% of the device-to-device copy bandwidth") {
            EXPECT_FALSE(check.evidence.contains("ceiling_unavailable")) << check.evidence.dump();
            EXPECT_GT(check.evidence["fraction_of_copy"].get<double>(), 0.0) << check.evidence.dump();
            EXPECT_EQ(check.evidence["ceiling_gbps"], r.meta["copy_ceiling"]["dram_copy_gbps"])
                << check.evidence.dump();
            EXPECT_GE(check.evidence["rounds"].size(), 3u) << check.evidence.dump();
        } else {
            EXPECT_GE(check.evidence["rounds"].size(), 3u) << check.name << ": " << check.summary;
        }
    }
    EXPECT_EQ(correctness, 2);
}

// The published reduction rubric (configs/grading/reduction.json) with the lab's starting point
// (plugins/template_cuda/reduction, kernel student_reduction: one atomicAdd per element): every correctness
// run within the reduction's bound as the grader checks it, the performance tiers measured against
// cuda_r3_sequential and cub_reduce_sum, and the last against the copy bandwidth the grader measured itself.
TEST(GradeGpu, ThePublishedReductionRubricGradesTheLabsStartingPoint) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto dir = test::fresh_dir("grade-gpu-reduction");
    fs::create_directories(dir / "subs");
    fs::copy_file(fs::path(KREG_FIXTURE_DIR) / "fixture_student_reduction.so", dir / "subs" / "starter.so");
    fs::copy_file(fs::path(KREG_PLUGIN_DIR) / "cuda_r7_one_pass.so", dir / "subs" / "one_pass.so");
    // The lab's last step handed in under the rubric's kernel name would need a rebuild; grade it by its own.
    std::ifstream published(std::string(KREG_SOURCE_DIR) + "/configs/grading/reduction.json");
    std::string rubric((std::istreambuf_iterator<char>(published)), std::istreambuf_iterator<char>());
    rubric.replace(rubric.find("\"student_reduction\""), std::string("\"student_reduction\"").size(),
                   "\"cuda_r7_one_pass\"");
    std::ofstream(dir / "one_pass.json") << rubric;
    for (const auto& [sub, rubric_file] :
         {std::pair<std::string, std::string>{"starter",
                                              std::string(KREG_SOURCE_DIR) + "/configs/grading/reduction.json"},
          {"one_pass", (dir / "one_pass.json").string()}}) {
        const fs::path out = dir / ("out-" + sub);
        const std::string cmd = std::string(KREG_RUNNER) + " grade --rubric " + rubric_file + " --submission subs/" +
                                sub + ".so --out " + out.string() + " --allow-static-libstdcxx";
        const auto run = test::run_command(cmd, dir, dir);
        ASSERT_EQ(run.exit_code, 0) << sub << ": " << run.err;
        const auto all = Gradebook(out).all();
        ASSERT_EQ(all.size(), 1u) << run.err;
        const StudentResult& r = all.front();
        EXPECT_EQ(r.status, "graded") << sub << ": " << r.summary;
        EXPECT_GE(r.score, 60) << sub << ": " << r.summary;  // every correctness point
        ASSERT_TRUE(r.meta.contains("copy_ceiling")) << r.meta.dump();
        for (const auto& check : r.checks) {
            if (check.kind == "correctness")
                EXPECT_TRUE(check.passed) << sub << " " << check.name << ": " << check.summary;
            if (check.kind != "performance") continue;
            const auto& mine = check.evidence["submission"];
            EXPECT_EQ(mine["operation"], "reduction") << mine.dump();
            EXPECT_EQ(mine["roofline"]["faster_than_floor"], false) << mine.dump();
            EXPECT_GE(check.evidence["rounds"].size(), 3u) << sub << " " << check.name << ": " << check.summary;
        }
        // Whether the one-pass step earns the tier at 0.9 of the copy is a speed verdict, measured by the sweep
        // (docs/REDUCTION.md), not asserted here: the score is recorded for the log.
        ::testing::Test::RecordProperty(sub + "_score", r.score);
    }
}

// The in-place operation on the GPU through the same hardened path: the lecture's BlockTranspose (the
// trusted plugin, handed in as a submission), every call's C checked bit for bit by the grader, with
// blocks the kernel takes at odd tile counts, and a tier against the copy ceiling.
TEST(GradeGpu, ABlockTransposeRubricGradesTheLecturesKernel) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto dir = test::fresh_dir("grade-gpu-block-transpose");
    fs::create_directories(dir / "subs");
    fs::copy_file(fs::path(KREG_PLUGIN_DIR) / "cuda_block_transpose.so", dir / "subs" / "lecture.so");
    std::ofstream(dir / "blocks.json") << R"({
      "operation": "block_transpose", "kernel": "cuda_block_transpose", "backend": "cuda",
      "limits": {"load_s": 30, "call_s": 20, "total_s": 300},
      "correctness": [
        {"name": "blocks", "points": 80, "shapes": [{"m": 60, "n": 45, "block": 15}, {"square": 64, "block": [1, 16]},
                                                     {"m": 20, "n": 400, "block": 20}], "seeds": [1, 2]}
      ],
      "performance": [{"name": "a tenth of the copy bandwidth", "points": 20, "shape": {"square": 4096, "block": 16},
                       "min_fraction_of_copy": 0.1}],
      "measure": {"warmup": 1, "repeats": 5}
    })";
    const auto run = test::run_command(
        std::string(KREG_RUNNER) + " grade --rubric blocks.json --submissions subs --out out --allow-static-libstdcxx",
        dir, dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::map<std::string, StudentResult> graded;
    for (const auto& r : Gradebook(dir / "out").all()) graded[r.student] = r;
    ASSERT_EQ(graded.count("lecture"), 1u) << run.err;
    const StudentResult& r = graded["lecture"];
    EXPECT_EQ(r.status, "graded") << r.summary;
    EXPECT_EQ(r.score, 100) << r.summary;  // at 4096^2 the lecture's kernel is far above a tenth of a copy
    for (const auto& check : r.checks)
        if (check.kind == "correctness")
            for (const auto& row : check.evidence) {
                EXPECT_EQ(row["operation"], "block_transpose") << row.dump();
                EXPECT_EQ(row["trusted_check"]["passed"], true) << row.dump();
                EXPECT_EQ(row["anticheat"]["calls_verified"], 0) << row.dump();
            }
}

}  // namespace
}  // namespace kreg
