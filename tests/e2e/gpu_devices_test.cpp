// On a GPU machine, through the runner: --devices runs the CUDA jobs on every GPU at once, one worker per
// GPU, and every row says which GPU it ran on. With two or more GPUs the rows must come from more than one
// GPU; with one, --devices all must behave as a plain sweep on it. Without a GPU every test is skipped.
#include "common/job.hpp"
#include "cuda/device_facts.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>

namespace kreg {
namespace {

const std::string kRunner = KREG_RUNNER;

TEST(GpuDevices, EveryGpuRunsItsShareAndEveryRowNamesItsGpu) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const int gpus = cuda_device_count();
    const auto dir = test::fresh_dir("gpu-devices");
    const std::string sweep = kRunner +
                              " --kernels 'cuda_0[1-4]*,cpu_naive' --sizes 64,96 --shape 65x33x17 --repeat 5"
                              " --warmup 1 --no-calibrate --timeout 120";
    const auto r = test::run_command(sweep + " --devices all --json all.json --csv all.csv", dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto report = nlohmann::json::parse(std::ifstream(dir / "all.json"));
    const auto& devices = report["meta"]["devices"];
    ASSERT_EQ(int(devices.size()), gpus) << report["meta"].dump();
    std::map<std::string, int> ordinal_of;
    for (const auto& d : devices) ordinal_of[d["uuid"].get<std::string>()] = d["ordinal"].get<int>();
    ASSERT_EQ(int(ordinal_of.size()), gpus) << "two lanes on one GPU: " << devices.dump();

    std::set<uint64_t> ids;
    std::set<std::string> used;
    std::map<std::string, std::set<std::string>> gpus_of_kernel;
    size_t cuda_rows = 0;
    for (const auto& row : report["records"]) {
        EXPECT_TRUE(ids.insert(row["job_id"].get<uint64_t>()).second) << "job twice: " << row.dump();
        EXPECT_EQ(row["status"], "ok") << row.dump();
        if (row["backend"] != "cuda") {
            EXPECT_FALSE(row["extra"].contains("device_uuid")) << row.dump();
            continue;
        }
        ++cuda_rows;
        ASSERT_TRUE(row["extra"].contains("device_uuid")) << row.dump();
        const std::string uuid = row["extra"]["device_uuid"];
        ASSERT_TRUE(ordinal_of.count(uuid)) << uuid;
        EXPECT_EQ(row["extra"]["device"].get<int>(), ordinal_of[uuid]);
        used.insert(uuid);
        gpus_of_kernel[row["kernel"].get<std::string>()].insert(uuid);
    }
    EXPECT_GE(cuda_rows, 24u);
    // A kernel's rows come from one GPU (a lane takes a kernel's jobs together); with several GPUs and
    // eight CUDA kernels, more than one GPU did work.
    for (const auto& [kernel, on] : gpus_of_kernel) EXPECT_EQ(on.size(), 1u) << kernel;
    if (gpus >= 2) EXPECT_GE(used.size(), 2u) << "every row ran on one GPU";

    // A GPU out of range is refused before anything runs.
    const auto bad =
        test::run_command(sweep + " --devices " + std::to_string(gpus) + " --json bad.json --csv bad.csv", dir, dir);
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_NE(bad.err.find("requested but only"), std::string::npos) << bad.err;
}

TEST(GpuDevices, ALaneSeesOnlyItsGpu) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const int last = cuda_device_count() - 1;
    const auto dir = test::fresh_dir("gpu-devices-one");
    // --devices LAST: the worker sees that GPU as device 0; the row's facts and UUID are that GPU's.
    const auto r = test::run_command(
        kRunner + " --kernels cuda_02_tiled16 --sizes 64 --repeat 3 --warmup 1 --no-calibrate --devices " +
            std::to_string(last) + " --json one.json --csv one.csv",
        dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto report = nlohmann::json::parse(std::ifstream(dir / "one.json"));
    ASSERT_EQ(report["meta"]["devices"].size(), 1u);
    EXPECT_EQ(report["meta"]["devices"][0]["ordinal"], last);
    EXPECT_EQ(report["meta"]["gpu"]["facts"]["uuid"], report["meta"]["devices"][0]["uuid"]);
    ASSERT_EQ(report["records"].size(), 1u);
    EXPECT_EQ(report["records"][0]["extra"]["device_uuid"], report["meta"]["devices"][0]["uuid"]);
}

}  // namespace
}  // namespace kreg
