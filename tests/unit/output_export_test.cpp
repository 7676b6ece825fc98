// The grader's trusted re-check of exported outputs: right outputs pass, a changed, missing or
// truncated one fails naming the call.
#include "measure/anticheat.hpp"
#include "measure/output_export.hpp"
#include "verify/random_fill.hpp"
#include "verify/reference_gemm.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace kreg {
namespace {
namespace fs = std::filesystem;

Job export_job() {
    Job job;
    job.id = 3;
    job.seed = 99;
    job.shape = {9, 7, 5};
    job.settings.strict = true;
    job.settings.warmup = 0;
    return job;
}

// What an honest strict worker would export for call `call`.
std::vector<float> honest_output(const Job& job, uint64_t call) {
    const int64_t m = job.shape.m, n = job.shape.n, k = job.shape.k;
    std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
    std::vector<double> ref(size_t(m * n));
    fill_uniform(a.data(), a.size(), job.seed, strict_input_stream(job.id, call, 0));
    fill_uniform(b.data(), b.size(), job.seed, strict_input_stream(job.id, call, 1));
    reference_gemm_fp64(m, n, k, a.data(), k, b.data(), n, ref.data(), n);
    for (size_t i = 0; i < c.size(); ++i) c[i] = float(ref[i]);
    return c;
}

fs::path fresh(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("kreg-export-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

TEST(TrustedCheck, HonestOutputsPassAndEveryCallIsChecked) {
    const Job job = export_job();
    const fs::path dir = fresh("honest");
    for (uint64_t call = 0; call < 3; ++call) {
        const auto c = honest_output(job, call);
        export_call_output(dir.string(), call, c.data(), c.size());
    }
    const TrustedCheck check = check_exported_outputs(job, dir.string(), 3);
    EXPECT_TRUE(check.passed) << check.reason;
    EXPECT_EQ(check.calls_checked, 3);
    EXPECT_LT(check.max_rel_err, 1e-6);
    fs::remove_all(dir);
}

TEST(TrustedCheck, AChangedMissingExtraOrShortOutputFailsNamingTheCall) {
    Job job = export_job();
    job.settings.warmup = 1;  // call 0: the checked call, call 1: the warm-up, call 2: the first timed call
    const fs::path dir = fresh("bad");
    for (uint64_t call = 0; call < 3; ++call) {
        auto c = honest_output(job, call);
        if (call == 2) c[5] += 0.5f;  // the first timed call is wrong
        export_call_output(dir.string(), call, c.data(), c.size());
    }
    TrustedCheck check = check_exported_outputs(job, dir.string(), 3);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason.rfind("timed call 1: error ", 0), 0u) << check.reason;
    EXPECT_EQ(check.calls_checked, 3);

    // A fourth call that was never written, and a file more than the calls made.
    check = check_exported_outputs(job, dir.string(), 4);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason, "the worker made 4 calls but left 3 files in " + dir.string());
    check = check_exported_outputs(job, dir.string(), 2);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.calls_checked, 0);

    // The first call's output, one float short.
    const auto c = honest_output(job, 0);
    export_call_output(dir.string(), 0, c.data(), c.size() - 1);
    check = check_exported_outputs(job, dir.string(), 3);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason, "first call: its output is missing or has the wrong size");

    // The warm-up's output under another name: call-1 is missing although the count is right.
    fs::rename(dir / "call-1.f32", dir / "call-7.f32");
    export_call_output(dir.string(), 0, honest_output(job, 0).data(), c.size());
    check = check_exported_outputs(job, dir.string(), 3);
    EXPECT_FALSE(check.passed);
    EXPECT_EQ(check.reason, "warm-up call 1: its output is missing or has the wrong size");
    fs::remove_all(dir);
}

}  // namespace
}  // namespace kreg
