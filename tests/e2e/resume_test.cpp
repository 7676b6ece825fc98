// End to end: a sweep's journal, stopping it (SIGINT, SIGTERM, SIGKILL), resuming it, and reports that
// are never overwritten unless asked. The real runner, the slow fixture plugin (60 ms a call).
#include "common/job.hpp"
#include "report/journal.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <thread>

namespace kreg {
namespace {

namespace fs = std::filesystem;
using test::fresh_dir;
using test::run_command;
using test::slurp;

const std::string kRunner = KREG_RUNNER;
using test::fixture;

// 6 fast rows, then 6 slow ones (2 calls of 60 ms each): stopped after 7 rows, the stop comes in a slow one.
const std::string kSweep = " --no-default-plugins --plugin " + fixture("fixture_good") + " --plugin " +
                           fixture("fixture_slow") +
                           " --kernels fixture_good,fixture_slow --sizes 4,5,6,7,8,9 --repeat 1 --warmup 0";
constexpr size_t kPlanned = 12;

size_t journal_rows(const fs::path& journal) {
    std::ifstream in(journal);
    std::string line;
    size_t lines = 0;
    while (std::getline(in, line)) lines += line.rfind("{\"record\"", 0) == 0;
    return lines;
}

// Starts the runner in dir (stdout and stderr to files there), waits until the journal holds at least
// `rows` rows, sends `signo`, and returns how the runner ended (its exit code, or 128 + its signal).
int run_and_stop_after(const std::string& args, const fs::path& dir, size_t rows, int signo) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::chdir(dir.c_str()) != 0) ::_exit(99);
        const int out = ::open("stdout.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open("stderr.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(out, 1);
        ::dup2(err, 2);
        ::execl("/bin/sh", "sh", "-c", ("exec " + kRunner + args).c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    const fs::path journal = dir / "out.journal.jsonl";
    for (int i = 0; i < 1200 && journal_rows(journal) < rows; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    ::kill(pid, signo);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Every job id of the plan exactly once, in plan order.
void expect_every_job_once(const std::vector<Record>& records, size_t planned, const std::string& what) {
    std::vector<uint64_t> ids;
    for (const auto& r : records) ids.push_back(r.job_id);
    std::vector<uint64_t> expected(planned);
    for (size_t i = 0; i < planned; ++i) expected[i] = i;
    EXPECT_EQ(ids, expected) << what;
    for (const auto& r : records)
        EXPECT_EQ(r.status, RowStatus::ok) << what << ": job " << r.job_id << ": " << r.reason;
}

nlohmann::json progress_of(const fs::path& json) { return nlohmann::json::parse(slurp(json))["meta"]["progress"]; }

TEST(Resume, AfterSigkillMidSweepOnlyTheMissingRowsRunAndNoneTwice) {
    const auto dir = fresh_dir("resume-sigkill");
    const int killed = run_and_stop_after(kSweep + " --json out.json --csv out.csv", dir, 7, SIGKILL);
    ASSERT_EQ(killed, 128 + SIGKILL) << slurp(dir / "stderr.txt");
    const auto before = read_journal(dir / "out.journal.jsonl");
    ASSERT_GE(before.records.size(), 7u);
    ASSERT_LT(before.records.size(), kPlanned) << "the sweep finished before it was killed";

    const auto r = run_command(kRunner + " --resume out.json", dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("resuming out.json: " + std::to_string(before.records.size()) + " of 12 rows done"),
              std::string::npos)
        << r.err;
    // Only the missing jobs ran: the journal's rows are the old ones followed by exactly the rest.
    const auto after = read_journal(dir / "out.journal.jsonl");
    ASSERT_EQ(after.records.size(), kPlanned);
    std::set<uint64_t> ids;
    for (const auto& rec : after.records)
        EXPECT_TRUE(ids.insert(rec.job_id).second) << "job " << rec.job_id << " twice";
    ASSERT_EQ(after.events.size(), 1u);
    EXPECT_EQ(after.events[0]["rows_done"], before.records.size());
    expect_every_job_once(read_records_json(dir / "out.json"), kPlanned, "out.json");
    const auto progress = progress_of(dir / "out.json");
    EXPECT_EQ(progress["planned"], kPlanned);
    EXPECT_EQ(progress["done"], kPlanned);
    EXPECT_EQ(progress["complete"], true);
    const std::string csv = slurp(dir / "out.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), long(kPlanned + 1)) << csv;

    // A complete report is not resumed again.
    const auto again = run_command(kRunner + " --resume out.journal.jsonl", dir, dir);
    EXPECT_EQ(again.exit_code, 3) << again.err;
    EXPECT_NE(again.err.find("is complete (12 of 12 rows); nothing to resume"), std::string::npos) << again.err;
}

TEST(Resume, SigintStopsAfterTheCurrentWorkerWithALineThatSaysHowToResume) {
    const auto dir = fresh_dir("resume-sigint");
    const int code = run_and_stop_after(kSweep + " --json out.json --csv out.csv", dir, 7, SIGINT);
    const std::string err = slurp(dir / "stderr.txt");
    ASSERT_EQ(code, 130) << err;
    const std::regex line(
        "runner: stopped by SIGINT: ([0-9]+) of 12 rows finished; reports: out.json, out.csv; "
        "resume with: (.*) --resume out.json\n");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(err, m, line)) << err;
    const size_t done = std::stoul(m[1]);
    EXPECT_GE(done, 7u);
    EXPECT_LT(done, kPlanned);
    EXPECT_EQ(m[2].str(), kRunner);
    // The reports were rendered on the way out: exactly the finished rows, and they say so.
    const auto records = read_records_json(dir / "out.json");
    EXPECT_EQ(records.size(), done);
    EXPECT_EQ(read_journal(dir / "out.journal.jsonl").records.size(), done);
    const auto progress = progress_of(dir / "out.json");
    EXPECT_EQ(progress["done"], done);
    EXPECT_EQ(progress["complete"], false);
    for (const auto& rec : records)
        EXPECT_EQ(rec.status, RowStatus::ok) << rec.job_id << ": " << rec.reason;  // no killed row

    // The command it printed finishes the sweep.
    const auto r = run_command(m[2].str() + " --resume out.json", dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_every_job_once(read_records_json(dir / "out.json"), kPlanned, "after resume");
    EXPECT_EQ(progress_of(dir / "out.json")["complete"], true);
}

TEST(Resume, SigtermStopsTheSameWayWithItsOwnStatus) {
    const auto dir = fresh_dir("resume-sigterm");
    const int code = run_and_stop_after(kSweep + " --json out.json --csv out.csv", dir, 5, SIGTERM);
    EXPECT_EQ(code, 143) << slurp(dir / "stderr.txt");
    EXPECT_NE(slurp(dir / "stderr.txt").find("runner: stopped by SIGTERM: "), std::string::npos);
    EXPECT_EQ(progress_of(dir / "out.json")["complete"], false);
}

TEST(Resume, ATornLastJournalLineIsDroppedAndItsJobRunsAgain) {
    const auto dir = fresh_dir("resume-torn");
    ASSERT_EQ(
        run_command(kRunner + " --no-default-plugins --plugin " + fixture("fixture_good") +
                        " --kernels fixture_good --sizes 4,5,6,7 --repeat 1 --warmup 0 --json out.json --csv out.csv",
                    dir, dir)
            .exit_code,
        0);
    // Keep the header and two rows, then half of the third: a runner killed inside a write.
    std::ifstream in(dir / "out.journal.jsonl");
    std::string header, row0, row1, row2;
    std::getline(in, header);
    std::getline(in, row0);
    std::getline(in, row1);
    std::getline(in, row2);
    in.close();
    std::ofstream(dir / "out.journal.jsonl", std::ios::trunc) << header << "\n"
                                                              << row0 << "\n"
                                                              << row1 << "\n"
                                                              << row2.substr(0, 40);

    const auto r = run_command(kRunner + " --resume out.json", dir, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("line 4 is torn (no line end); dropped"), std::string::npos) << r.err;
    const auto journal = read_journal(dir / "out.journal.jsonl");
    EXPECT_TRUE(journal.dropped_tail.empty()) << journal.dropped_tail;  // cut away before the first new row
    expect_every_job_once(journal.records, 4, "journal");
    expect_every_job_once(read_records_json(dir / "out.json"), 4, "out.json");
}

TEST(Resume, RefusedWhenThePlanCannotBeMadeAgain) {
    const auto dir = fresh_dir("resume-changed");
    std::ofstream(dir / "s.json")
        << R"({"kernels": ["fixture_good"], "shapes": [{"square": [4, 5, 6]}], "repeats": 1, "warmup": 0})";
    const std::string cmd = kRunner + " --no-default-plugins --plugin " + fixture("fixture_good") +
                            " --config s.json --json out.json --csv out.csv";
    ASSERT_EQ(run_command(cmd, dir, dir).exit_code, 0);
    // Interrupted after one row (the journal cut there), then the config is edited.
    std::ifstream in(dir / "out.journal.jsonl");
    std::string header, row0;
    std::getline(in, header);
    std::getline(in, row0);
    in.close();
    std::ofstream(dir / "out.journal.jsonl", std::ios::trunc) << header << "\n" << row0 << "\n";
    std::ofstream(dir / "s.json")
        << R"({"kernels": ["fixture_good"], "shapes": [{"square": [4, 5, 7]}], "repeats": 1, "warmup": 0})";
    const auto r = run_command(kRunner + " --resume out.json", dir, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("cannot resume out.json: the plan made again from its recorded command line (3 jobs) is not "
                         "the recorded one"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(read_journal(dir / "out.journal.jsonl").records.size(), 1u);  // nothing was added

    const auto other = run_command(kRunner + " --resume out.json --repeat 3", dir, dir);
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.err.find("--resume takes no other option"), std::string::npos) << other.err;
    const auto missing = run_command(kRunner + " --resume nothing.json", dir, dir);
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("no journal"), std::string::npos) << missing.err;
}

TEST(Resume, AReportIsNeverOverwrittenUnlessAsked) {
    const auto dir = fresh_dir("no-overwrite");
    const std::string cmd = kRunner + " --no-default-plugins --plugin " + fixture("fixture_good") +
                            " --kernels fixture_good --sizes 4,5 --repeat 1 --warmup 0 --json out.json --csv out.csv";
    ASSERT_EQ(run_command(cmd, dir, dir).exit_code, 0);
    const std::string first = slurp(dir / "out.json");
    const auto refused = run_command(cmd, dir, dir);
    EXPECT_EQ(refused.exit_code, 3) << refused.err;
    EXPECT_NE(refused.err.find("refusing to overwrite: out.json exists (a complete report of 2 rows); pass --force"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(slurp(dir / "out.json"), first);
    // A CSV alone in the way is refused too.
    const auto csv_only = run_command(cmd + " --json other.json", dir, dir);
    EXPECT_EQ(csv_only.exit_code, 3);
    EXPECT_NE(csv_only.err.find("out.csv exists"), std::string::npos) << csv_only.err;
    EXPECT_FALSE(fs::exists(dir / "other.json"));

    const auto forced = run_command(cmd + " --force", dir, dir);
    EXPECT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_EQ(read_journal(dir / "out.journal.jsonl").records.size(), 2u);  // the old rows are gone, not doubled
}

TEST(Resume, TimestampedNamesNeverCollide) {
    const auto dir = fresh_dir("timestamped");
    std::ofstream(dir / "t.json")
        << R"({"kernels": ["fixture_good"], "shapes": [{"square": 4}], "repeats": 1, "warmup": 0,
        "output": {"json": "r/t-{time}.json", "csv": "r/t-{time}.csv"}})";
    const std::string cmd = kRunner + " --no-default-plugins --plugin " + fixture("fixture_good") + " --config t.json";
    for (int i = 0; i < 3; ++i) ASSERT_EQ(run_command(cmd, dir, dir).exit_code, 0) << slurp(dir / "stderr.txt");
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir / "r")) names.insert(e.path().filename().string());
    EXPECT_EQ(names.size(), 9u);  // three runs, each a JSON, a CSV and a journal
    for (const auto& n : names)
        EXPECT_TRUE(std::regex_match(n, std::regex(R"(t-\d{8}-\d{6}(-\d+)?\.(json|csv|journal\.jsonl))"))) << n;
}

}  // namespace
}  // namespace kreg
