// Sweeps and grading runs on a real single-node Slurm (tests/slurm/local_slurm.sh, started by the ctest
// fixture `slurm`): submitted as job arrays of shards, merged by the merge job, compared row for row with
// the same run made locally.
#include "../e2e/run_command.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const fs::path kSlurmDir = KREG_SLURM_DIR;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Skips the test, with the fixture's reason, where the cluster could not start.
#define REQUIRE_SLURM()                                                                                    \
    do {                                                                                                   \
        if (fs::exists(kSlurmDir / "skip_reason")) GTEST_SKIP() << test::slurp(kSlurmDir / "skip_reason"); \
        ASSERT_TRUE(fs::exists(kSlurmDir / "slurm.conf")) << "the slurm fixture did not start a cluster";  \
    } while (0)

// The value after "LABEL: " on a line of out.
std::string value_after(const std::string& out, const std::string& label) {
    const size_t at = out.find(label + ": ");
    if (at == std::string::npos) return "";
    const size_t start = at + label.size() + 2;
    return out.substr(start, out.find_first_of(" \n", start) - start);
}

TEST(SlurmSweep, FourShardsOnAnArrayEachWriteTheirSliceOfThePlan) {
    REQUIRE_SLURM();
    const auto dir = test::fresh_dir("slurm-shards");
    const std::string sweep = "--kernels cpu_naive,cpu_blocked --sizes 32,48,64,80 --repeat 2";
    const auto r = test::run_command(kRunner + " submit --slurm --shards 4 --slurm-dir jobs " + sweep, dir, dir / "submit");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string array_id = value_after(r.out, "array job");
    ASSERT_FALSE(array_id.empty()) << r.out;
    // Without accounting, scontrol knows the tasks until MinJobAge (an hour on the test cluster).
    for (int i = 0; i < 600; ++i) {
        const auto q = test::run_command("squeue -h -j " + array_id + " -o %i", dir, dir / "squeue");
        if (q.exit_code == 0 && q.out.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    const auto local = test::run_command(kRunner + " " + sweep + " --json local.json --csv local.csv", dir, dir / "local");
    ASSERT_EQ(local.exit_code, 0) << local.err;
    std::map<uint64_t, Record> sharded;
    for (int i = 1; i <= 4; ++i) {
        const fs::path report = dir / "jobs" / ("shard-" + std::to_string(i) + "-of-4.json");
        ASSERT_TRUE(fs::exists(report)) << test::slurp(dir / "jobs" / "logs" / ("shard-" + std::to_string(i) + "-of-4.log"));
        for (const auto& row : read_records_json(report)) {
            EXPECT_EQ(row.job_id % 4, uint64_t(i - 1)) << row.kernel;
            EXPECT_TRUE(sharded.emplace(row.job_id, row).second) << "job " << row.job_id << " in two shards";
        }
    }
    const auto rows = read_records_json(dir / "local.json");
    ASSERT_EQ(sharded.size(), rows.size());
    for (const auto& row : rows) {
        ASSERT_TRUE(sharded.count(row.job_id)) << row.job_id;
        const Record& s = sharded.at(row.job_id);
        EXPECT_EQ(s.kernel, row.kernel);
        EXPECT_EQ(to_string(s.shape), to_string(row.shape));
        EXPECT_EQ(s.status, row.status);
    }
}

}  // namespace
}  // namespace kreg
