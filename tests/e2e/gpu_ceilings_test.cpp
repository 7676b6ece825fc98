// On a GPU, through the runner: the ceilings are measured with the cuBLAS plugin of the runner's own
// plugin folder, over the plugin ABI, and never with a plugin named like it that a user (or an attacker)
// put on KREG_PLUGIN_PATH or in a --plugin-dir folder. Without that plugin the report says why its
// ceilings are null and the rows are measured all the same. Without a GPU every test is skipped with
// the reason (tests/unit/ceiling_plugin_test.cpp checks the choice of file on any machine).
#include "common/sha256.hpp"
#include "cuda/device_facts.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace kreg {
namespace {

namespace fs = std::filesystem;
using test::fixture;

const fs::path kOwnCeilingPlugin = fs::path(KREG_PLUGIN_DIR) / "cublas_reference.so";

// One CUDA fixture row with calibration on, plugins found in planted/ through KREG_PLUGIN_PATH and --plugin-dir.
nlohmann::json run_with_planted(const std::string& runner, const fs::path& dir, const fs::path& planted) {
    const std::string cmd =
        "KREG_PLUGIN_PATH='" + planted.string() + "' " + runner + " --plugin-dir '" + planted.string() + "' --plugin " +
        fixture("fixture_good_cuda") +
        " --kernels fixture_good_cuda --shape 64x48x40 --repeat 3 --timeout 300 --json out.json --csv out.csv";
    const auto r = test::run_command(cmd, dir, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(test::slurp(dir / "out.json"));
}

TEST(GpuCeilings, APlantedCublasPluginIsNotTheCeilingSource) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto dir = test::fresh_dir("gpu-ceilings-planted");
    // The fake: a CUDA fixture under the cuBLAS plugin's file name. Used for ceilings, it would give none
    // (it has no cublas_* kernel), so a null ceiling would show it was taken.
    const fs::path planted = dir / "planted";
    fs::create_directories(planted);
    fs::copy_file(fixture("fixture_good_cuda"), planted / "cublas_reference.so");
    const nlohmann::json report = run_with_planted(KREG_RUNNER, dir, planted);
    const nlohmann::json& ceilings = report["meta"]["gpu"]["ceilings"];
    ASSERT_TRUE(ceilings.is_object()) << report["meta"]["gpu"].dump();
    EXPECT_EQ(ceilings["plugin"]["path"], kOwnCeilingPlugin.string());
    EXPECT_EQ(ceilings["plugin"]["sha256"], sha256_file_hex(kOwnCeilingPlugin));
    EXPECT_EQ(ceilings["plugin"]["name"], "cublas_reference");
    EXPECT_EQ(ceilings["plugin"]["version"].get<std::string>().rfind("1.0.0+cublas.", 0), 0u) << ceilings.dump();
    for (const char* key : {"dram_copy_gbps", "sgemm_tflops", "tf32_tflops", "bf16_tflops"}) {
        ASSERT_TRUE(ceilings[key].is_number()) << key << ": " << ceilings.dump();
        EXPECT_GT(ceilings[key].get<double>(), 0.0) << key;
    }
    EXPECT_FALSE(report["meta"]["gpu"].contains("ceilings_unavailable")) << report["meta"]["gpu"].dump();
    EXPECT_FALSE(report["meta"]["gpu"]["facts"].contains("cublas_version"));  // the runner does not link cuBLAS
}

// A runner installed without its cuBLAS plugin (a copy of the binary beside an empty plugin folder) does
// not take the genuine plugin from an untrusted folder either: ceilings null, with the reason.
TEST(GpuCeilings, WithoutItsOwnCublasPluginTheRunnerSaysWhyAndMeasuresTheRows) {
    if (auto why = why_cannot_run(0, 0)) GTEST_SKIP() << *why;
    const auto dir = test::fresh_dir("gpu-ceilings-absent");
    const fs::path runner = dir / "prefix" / "bin" / "runner";
    fs::create_directories(runner.parent_path());
    fs::create_directories(dir / "prefix" / "lib" / "kreg" / "plugins");
    fs::copy_file(KREG_RUNNER, runner);
    const fs::path planted = dir / "planted";
    fs::create_directories(planted);
    fs::copy_file(kOwnCeilingPlugin, planted / "cublas_reference.so");
    const nlohmann::json report = run_with_planted(runner.string(), dir, planted);
    const nlohmann::json& gpu = report["meta"]["gpu"];
    ASSERT_TRUE(gpu.is_object()) << report["meta"].dump();
    EXPECT_TRUE(gpu["facts"].is_object());
    EXPECT_TRUE(gpu["ceilings"].is_null()) << gpu.dump();
    const std::string why = gpu.value("ceilings_unavailable", "");
    EXPECT_NE(why.find((dir / "prefix" / "lib" / "kreg" / "plugins" / "cublas_reference.so").string()),
              std::string::npos)
        << why;
    ASSERT_EQ(report["records"].size(), 1u);
    EXPECT_EQ(report["records"][0]["status"], "ok") << report["records"][0].dump();
}

}  // namespace
}  // namespace kreg
