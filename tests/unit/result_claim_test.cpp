// The worker's result message read as the claim it is (core/src/sweep/result_claim.hpp): strictly, and
// turned into the report's row by the parent.
#include "sweep/result_claim.hpp"
#include "worker/session.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kreg {
namespace {

using nlohmann::json;

Job sample_job() {
    Job job;
    job.id = 7;
    job.kernel = "cpu_naive";
    job.plugin_path = "/submissions/alice/libkernel.so";
    job.dtype = DType::fp32;
    job.shape = {64, 64, 64};
    job.seed = 42;
    return job;
}

// What a worker sends for job: its row, as the worker made it, as the channel carries it (wire_reply).
json result_for(const Job& job) {
    Record r = record_for(job, RowStatus::ok, "");
    r.plugin = "cpu";
    r.plugin_path = "/scratch/plugin/libkernel.so";  // the staged copy the worker loaded
    r.timer = "host";
    r.samples_ms = {1.0, 1.5};
    r.gflops = 0.5;
    r.exit_code = 0;
    return wire_reply({{"op", "result"}, {"record", r}});
}

TEST(ResultClaim, AWorkersRowBecomesTheParentsRow) {
    const Job job = sample_job();
    ResultClaim claim;
    ASSERT_EQ(parse_result_message(result_for(job), claim), "");
    Record row;
    ASSERT_EQ(claim_to_row(claim, job, false, 4096, row), "");
    EXPECT_EQ(row.job_id, 7u);
    EXPECT_EQ(row.plugin, "cpu");
    EXPECT_EQ(row.plugin_path, job.plugin_path);  // the parent's, not the staged copy's
    EXPECT_FALSE(row.exit_code);                  // how the worker ended is the parent's to say
    EXPECT_EQ(row.samples_ms, (std::vector<double>{1.0, 1.5}));
    EXPECT_EQ(row.gflops, 0.5);
    EXPECT_EQ(row.status, RowStatus::ok);
}

TEST(ResultClaim, EachMistypedOrUnknownFieldIsAViolationNamingIt) {
    const Job job = sample_job();
    // One field of a good claim changed (a null value: the field taken out), and the violation it is.
    const struct {
        const char* key;
        json value;
        std::string violation;
    } cases[] = {
        {"m", "64", "sent a malformed claim: /m: expected an integer, found \"64\""},
        // A row's lenient reader would take 64.0; the wire does not.
        {"m", 64.0, "sent a malformed claim: /m: expected an integer, found 64.0"},
        {"seed", -1, "sent a malformed claim: /seed: expected an integer >= 0, found -1"},
        {"status", "excellent", "sent a malformed claim: /status: expected a known name, found \"excellent\""},
        {"timer", nullptr, "sent a malformed claim: /timer: missing"},
        {"gflops", "fast", "sent a malformed claim: /gflops: expected a number or null, found \"fast\""},
        {"grade", "A", "sent a claim with the unknown field 'grade'"},
        {"samples_ms", json::array({1.0, "2"}), "sent a malformed claim: /samples_ms: expected numbers, found \"2\""},
    };
    for (const auto& c : cases) {
        json m = result_for(job);
        if (c.value.is_null())
            m["claim"].erase(c.key);
        else
            m["claim"][c.key] = c.value;
        ResultClaim claim;
        EXPECT_EQ(parse_result_message(m, claim), c.violation) << c.key << " = " << c.value.dump();
    }
    ResultClaim claim;
    EXPECT_EQ(parse_result_message({{"op", "result"}}, claim), "sent a result without a claim");
}

TEST(ResultClaim, TheWireCarriesAClaimNotTheRowAndAClaimOfWhatOnlyTheParentSaysIsAViolation) {
    const Job job = sample_job();
    const json m = result_for(job);
    ASSERT_TRUE(m.contains("claim"));
    EXPECT_FALSE(m.contains("record"));
    for (const char* parents : {"plugin_path", "exit_code", "signal"}) {
        EXPECT_FALSE(m["claim"].contains(parents)) << parents;
        json forged = m;
        forged["claim"][parents] = parents == std::string("plugin_path") ? json("/tmp/x.so") : json(0);
        ResultClaim claim;
        EXPECT_EQ(parse_result_message(forged, claim),
                  std::string("sent a claim with the unknown field '") + parents + "'");
    }
    // Which GPU of --devices ran it is the parent's too: a claimed one is dropped.
    json claimed_gpu = m;
    claimed_gpu["claim"]["extra"]["device_uuid"] = "GPU-forged";
    ResultClaim with_gpu;
    ASSERT_EQ(parse_result_message(claimed_gpu, with_gpu), "");
    Record row;
    ASSERT_EQ(claim_to_row(with_gpu, job, false, 4096, row), "");
    EXPECT_FALSE(row.extra.device_uuid);
    // The row itself, as an older worker sent it, is not a claim.
    Record r = record_for(job, RowStatus::ok, "");
    ResultClaim claim;
    EXPECT_NE(parse_result_message({{"op", "result"}, {"record", r}}, claim), "");
    // Any other reply crosses unchanged.
    const json loaded = {{"op", "loaded"}, {"sandbox", json::object()}};
    EXPECT_EQ(wire_reply(loaded), loaded);
}

TEST(ResultClaim, TheParentRefusesAClaimForAnotherJobOrAnEndOnlyItObserves) {
    const Job job = sample_job();
    ResultClaim claim;
    json m = result_for(job);
    m["claim"]["seed"] = 43;
    ASSERT_EQ(parse_result_message(m, claim), "");
    Record row;
    EXPECT_EQ(claim_to_row(claim, job, false, 4096, row), "answered for another job");
    m = result_for(job);
    m["claim"]["status"] = "crashed";
    m["claim"]["end_cause"] = "job_timeout";
    ASSERT_EQ(parse_result_message(m, claim), "");
    EXPECT_EQ(claim_to_row(claim, job, false, 4096, row),
              "claimed the end cause 'job_timeout', which only the runner observes");
    m["claim"]["end_cause"] = "cuda_error";
    ASSERT_EQ(parse_result_message(m, claim), "");
    ASSERT_EQ(claim_to_row(claim, job, false, 4096, row), "");
    EXPECT_EQ(row.end_cause, EndCause::cuda_error);
    m["claim"]["status"] = "failed";
    m["claim"]["end_cause"] = "memory_refused";
    ASSERT_EQ(parse_result_message(m, claim), "");
    ASSERT_EQ(claim_to_row(claim, job, false, 4096, row), "");
    EXPECT_EQ(row.end_cause, EndCause::kernel_failed);  // a cgroup, not the allocator, says so there
    ASSERT_EQ(claim_to_row(claim, job, true, 4096, row), "");
    EXPECT_EQ(row.end_cause, EndCause::memory_refused);
}

}  // namespace
}  // namespace kreg
