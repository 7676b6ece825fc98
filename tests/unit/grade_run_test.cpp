// GradeRun's phases that run nothing (no worker, no build, no confinement): the plan from the rubric files,
// the submissions found, a shard's slice and manifest, and which RunError kind (exit status) each refusal is.
#include "run/grade_run.hpp"

#include "merge/gradebook_shard.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const test::ScratchRoot kScratch("kreg_grade_run_test");
const fs::path kCorpusRubric = fs::path(KREG_TEST_DATA_DIR) / "grading" / "corpus-rubric.json";

GradeEnvironment environment() {
    GradeEnvironment env;
    env.runner_exe = KREG_RUNNER;
    env.configs_dir = fs::path(KREG_SOURCE_DIR) / "configs";
    return env;
}

// Three students, one .so each (the file is never loaded by these phases).
GradeRequest three_students(const fs::path& dir) {
    fs::create_directories(dir / "subs");
    for (const char* student : {"carol", "alice", "bob"}) std::ofstream(dir / "subs" / (std::string(student) + ".so"));
    GradeRequest request;
    request.rubrics = {kCorpusRubric.string()};
    request.submissions_dir = (dir / "subs").string();
    request.out = (dir / "out").string();
    request.secret_seed = "12345";
    request.argv = {"grade", "--rubric", kCorpusRubric.string()};
    return request;
}

RunError::Kind kind_of(const std::function<void()>& phase, std::string& message) {
    try {
        phase();
    } catch (const RunError& e) {
        message = e.what();
        return e.kind();
    }
    ADD_FAILURE() << "the phase did not throw a RunError";
    return RunError::Kind::cannot_run;
}

TEST(GradeRun, ThePlanIsTheRubricAndTheSettingsOfTheRequest) {
    GradeRequest request = three_students(kScratch.fresh_dir("plan"));
    request.device = 3;
    request.jobs = 4;  // the lanes' settings come with the lanes, not with the plan
    std::ostringstream log, out;
    const GradePlan plan = GradeRun(request, environment(), log, out).plan();
    EXPECT_EQ(plan.options.rubric.name, "corpus");
    EXPECT_EQ(plan.options.secret, 12345u);
    EXPECT_EQ(plan.options.device, 3);
    EXPECT_EQ(plan.options.out_dir, fs::path(request.out));
    EXPECT_TRUE(plan.options.timed_tier_lock.empty());
    EXPECT_EQ(plan.rubric_files, (std::vector<std::string>{kCorpusRubric.string()}));
    EXPECT_FALSE(plan.options.reference_plugins.empty());  // the runner's own plugin folder
}

TEST(GradeRun, ABadRubricOrSeedIsBadInputAndNoSubmissionsIsNothingToRun) {
    const fs::path dir = kScratch.fresh_dir("refusals");
    GradeRequest request = three_students(dir);
    std::ofstream(dir / "broken.json") << "{\"name\": \"x\", \"cases\": 3}";
    request.rubrics = {(dir / "broken.json").string()};
    std::ostringstream log, out;
    std::string message;
    EXPECT_EQ(kind_of([&] { GradeRun(request, environment(), log, out).plan(); }, message), RunError::Kind::bad_input);
    EXPECT_EQ(message.rfind("rubric error: ", 0), 0u) << message;
    EXPECT_NE(message.find("broken.json"), std::string::npos) << message;

    request = three_students(dir);
    request.secret_seed = "not a number";
    EXPECT_EQ(kind_of([&] { GradeRun(request, environment(), log, out).plan(); }, message), RunError::Kind::bad_input);

    request = three_students(dir);
    fs::create_directories(dir / "empty");
    request.submissions_dir = (dir / "empty").string();
    EXPECT_EQ(kind_of([&] { GradeRun(request, environment(), log, out).submissions(); }, message),
              RunError::Kind::nothing_to_run);
    EXPECT_EQ(message, "no submissions found");
}

TEST(GradeRun, AShardGradesEveryKthSortedStudentIntoItsFolderWithAManifest) {
    const fs::path dir = kScratch.fresh_dir("shard");
    GradeRequest request = three_students(dir);
    request.shard = Shard{2, 2};
    std::ostringstream log, out;
    GradeRun run(request, environment(), log, out);
    GradePlan plan = run.plan();
    const std::vector<Submission> all = run.submissions();
    ASSERT_EQ(all.size(), 3u);
    const std::vector<Submission> slice = run.take_shard(all, plan);
    ASSERT_EQ(slice.size(), 1u);
    EXPECT_EQ(slice.front().student, "bob");  // alice, bob, carol: the second of every two
    EXPECT_EQ(plan.options.out_dir, dir / "out" / "shard-2-of-2");
    std::ifstream in(dir / "out" / "shard-2-of-2" / kGradebookShardManifest);
    const GradebookShard manifest = gradebook_shard_from_json(nlohmann::json::parse(in));
    EXPECT_EQ(manifest.all_students, (std::vector<std::string>{"alice", "bob", "carol"}));
    EXPECT_EQ(manifest.students, (std::vector<std::string>{"bob"}));
    ASSERT_GE(manifest.argv.size(), 2u);
    EXPECT_EQ(manifest.argv[0], fs::path(KREG_RUNNER).string());
    EXPECT_EQ(manifest.argv[1], "grade");
    EXPECT_FALSE(manifest.secret_sha256.is_null());
    EXPECT_NE(log.str().find("shard 2/2: 1 of 3 submission(s)"), std::string::npos) << log.str();
}

// --devices and --jobs grade in lanes (run/lanes.hpp), each lane a Grader of its own: here the lanes and
// their options, with fake GPUs (no worker, no GPU).
TEST(GradeRun, DevicesGiveOneLanePerGpuEachSeeingItsGpuAloneAsDeviceZero) {
    GradeRequest request = three_students(kScratch.fresh_dir("devices"));
    request.devices = DevicesSpec{false, {1, 3}};
    const std::vector<DeviceLane> gpus = {{1, "GPU-aaa", std::nullopt}, {3, "GPU-bbb", std::nullopt}};
    const std::vector<GradeLane> lanes = grade_lanes(request, gpus);
    ASSERT_EQ(lanes.size(), 2u);
    EXPECT_EQ(lanes[0].uuid, "GPU-aaa");
    EXPECT_EQ(lanes[0].mark, "[device 1] ");
    EXPECT_EQ(lanes[1].uuid, "GPU-bbb");
    EXPECT_EQ(lanes[1].mark, "[device 3] ");
    GradeOptions base;
    base.out_dir = "grades";
    base.device = 5;
    base.timing_cpu = 7;
    const GradeOptions second = lane_grade_options(base, lanes[1], lanes.size());
    EXPECT_EQ(second.cuda_visible_devices, "GPU-bbb");
    EXPECT_EQ(second.device, 0);
    EXPECT_EQ(second.out_dir, fs::path("grades"));  // one gradebook for every lane
    EXPECT_TRUE(second.timed_tier_lock.empty()) << "GPU lanes time on their own GPUs";
    EXPECT_EQ(second.timing_cpu, 7);
}

TEST(GradeRun, JobsGiveNCpuLanesThatShareTheTimedTiersLock) {
    GradeRequest request = three_students(kScratch.fresh_dir("jobs"));
    request.jobs = 3;
    const std::vector<GradeLane> lanes = grade_lanes(request, {});
    ASSERT_EQ(lanes.size(), 3u);
    GradeOptions base;
    base.out_dir = "grades";
    base.device = 2;
    for (size_t i = 0; i < lanes.size(); ++i) {
        EXPECT_EQ(lanes[i].mark, "[job " + std::to_string(i + 1) + "] ");
        EXPECT_TRUE(lanes[i].uuid.empty());
        const GradeOptions go = lane_grade_options(base, lanes[i], lanes.size());
        EXPECT_EQ(go.timed_tier_lock, fs::path("grades") / ".timed-tiers.lock");
        EXPECT_EQ(go.device, 2);
        EXPECT_TRUE(go.cuda_visible_devices.empty());
        ASSERT_TRUE(lanes[i].timing_cpu.has_value());
        EXPECT_EQ(go.timing_cpu, *lanes[i].timing_cpu);
    }
    // Without either: one lane, the plan's options as they are.
    request.jobs = 1;
    const std::vector<GradeLane> one = grade_lanes(request, {});
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].mark, "");
    base.timing_cpu = 4;
    const GradeOptions go = lane_grade_options(base, one[0], 1);
    EXPECT_TRUE(go.timed_tier_lock.empty());
    EXPECT_EQ(go.timing_cpu, 4);
    EXPECT_EQ(go.device, 2);
}

TEST(GradeRun, TheSeedGuardsRefusalNamesEveryStudentAndTheWayOut) {
    const std::string s = seed_change_refusal("grades", {"alice", "bob"}, 0);
    EXPECT_EQ(s,
              "grades holds 2 result(s) graded with a secret seed, and this run has none (KREG_SECRET_SEED or "
              "--secret-seed); grading would overwrite: alice, bob\n  Set the seed they were graded with, or pass "
              "--reseed to grade them again with this run's.");
}

}  // namespace
}  // namespace kreg
