// What a shard says about itself and how merge re-runs one (core/src/merge/shard.hpp, gradebook_shard.hpp).
#include "merge/gradebook_shard.hpp"
#include "merge/shard.hpp"

#include <gtest/gtest.h>

namespace kreg {
namespace {

TEST(MergeShard, JobsInAShardCoverThePlanOnce) {
    for (uint64_t plan : {0u, 1u, 2u, 9u, 10u, 11u}) {
        for (int k = 1; k <= 4; ++k) {
            uint64_t total = 0;
            for (int i = 1; i <= k; ++i) {
                uint64_t counted = 0;
                for (uint64_t id = 0; id < plan; ++id) counted += id % uint64_t(k) == uint64_t(i - 1);
                EXPECT_EQ(jobs_in_shard(plan, i, k), counted) << plan << " " << i << "/" << k;
                total += jobs_in_shard(plan, i, k);
            }
            EXPECT_EQ(total, plan);
        }
    }
}

TEST(MergeShard, TheReRunCommandSetsTheShardWhateverFormItWasGivenIn) {
    EXPECT_EQ(argv_with_shard({"runner", "--shard", "auto", "--config", "x.json"}, 2, 4),
              (std::vector<std::string>{"runner", "--shard", "2/4", "--config", "x.json"}));
    EXPECT_EQ(argv_with_shard({"runner", "--shard=1/4"}, 3, 4), (std::vector<std::string>{"runner", "--shard=3/4"}));
    EXPECT_EQ(argv_with_shard({"runner"}, 1, 2), (std::vector<std::string>{"runner", "--shard", "1/2"}));
    EXPECT_EQ(shell_command("/a b", {"runner", "--json", "out/{shard}.json", "it's"}),
              "cd '/a b' && runner --json 'out/{shard}.json' 'it'\\''s'");
    EXPECT_EQ(shell_command("", {"runner"}), "runner");
    EXPECT_EQ(with_shard_tag("r-{shard}-{shard}.json", shard_tag(2, 4)), "r-shard-2-of-4-shard-2-of-4.json");
}

TEST(MergeShard, ShardMetaReadsBackAndRefusesWhatIsWrongByPath) {
    const SweepShardMeta m{2, 3, 10, "abc", "def", "/w"};
    const SweepShardMeta back = sweep_shard_meta_from_json(to_json(m));
    EXPECT_EQ(back.index, 2);
    EXPECT_EQ(back.plan_size, 10u);
    EXPECT_EQ(back.cwd, "/w");
    nlohmann::json bad = to_json(m);
    bad["index"] = 4;
    try {
        sweep_shard_meta_from_json(bad);
        FAIL() << "index above count accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "/meta/shard/index: 4 is more than count 3");
    }
    bad = to_json(m);
    bad.erase("plan_sha256");
    EXPECT_THROW(sweep_shard_meta_from_json(bad), std::invalid_argument);
}

TEST(MergeShard, GradingShardsSliceTheSortedStudents) {
    const std::vector<std::string> all{"alice", "bob", "carol", "dave", "eve"};
    EXPECT_EQ(students_of_shard(all, 1, 2), (std::vector<std::string>{"alice", "carol", "eve"}));
    EXPECT_EQ(students_of_shard(all, 2, 2), (std::vector<std::string>{"bob", "dave"}));
    EXPECT_TRUE(students_of_shard(all, 6, 6).empty());
    GradebookShard s;
    s.index = 2;
    s.count = 2;
    s.all_students = all;
    s.students = students_of_shard(all, 2, 2);
    s.rubric_sha256 = "r";
    s.rubric_files = {"/r.json"};
    s.kreg_version = "0.1.0";
    s.git_sha = "g";
    s.argv = {"runner", "grade"};
    s.cwd = "/w";
    const GradebookShard back = gradebook_shard_from_json(to_json(s));
    EXPECT_EQ(back.students, s.students);
    EXPECT_TRUE(back.secret_sha256.is_null());
    nlohmann::json bad = to_json(s);
    bad["students"][0] = 3;
    try {
        gradebook_shard_from_json(bad);
        FAIL() << "a non-string student accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "/students/0: expected a string");
    }
}

}  // namespace
}  // namespace kreg
