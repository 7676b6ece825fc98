// The sweep journal: what it writes, what its reader accepts, drops and refuses.
#include "report/journal.hpp"

#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

namespace kreg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const test::ScratchRoot scratch("kreg_journal_test");

Record row(uint64_t id) {
    Record r;
    r.job_id = id;
    r.kernel = "cpu_naive";
    r.plugin = "cpu_naive";
    r.plugin_path = "/p/cpu_naive.so";
    r.shape = {int64_t(id + 1), 2, 3};
    r.status = RowStatus::ok;
    r.timer = "host";
    r.samples_ms = {0.5, 0.25};
    r.reason = "a reason with a \"quote\",\na line end and UTF-8: \xc3\xa9";
    return r;
}

void append_raw(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::app) << bytes;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

TEST(Journal, PathsNextToTheReport) {
    EXPECT_EQ(journal_path_for("a/b.json"), fs::path("a/b.journal.jsonl"));
    EXPECT_EQ(journal_path_for("report.out"), fs::path("report.out.journal.jsonl"));
    EXPECT_TRUE(is_journal_path("x/b.journal.jsonl"));
    EXPECT_FALSE(is_journal_path("x/b.json"));
    EXPECT_FALSE(is_journal_path("x/b.jsonl"));
}

TEST(Journal, RoundTripsTheHeaderRowsAndEventsLineByLine) {
    const fs::path p = scratch.fresh_dir("roundtrip") / "s.journal.jsonl";
    {
        JournalWriter w = JournalWriter::create(p, {{"planned", 3}, {"argv", {"runner", "--sizes", "8"}}}, false);
        w.append_record(row(0));
        w.append_event({{"resumed", "now"}});
        w.append_record(row(1));
    }
    const JournalContents j = read_journal(p);
    EXPECT_EQ(j.header, json({{"planned", 3}, {"argv", {"runner", "--sizes", "8"}}}));
    ASSERT_EQ(j.records.size(), 2u);
    EXPECT_EQ(json(j.records[0]), json(row(0)));
    EXPECT_EQ(json(j.records[1]), json(row(1)));
    ASSERT_EQ(j.events.size(), 1u);
    EXPECT_EQ(j.events[0]["resumed"], "now");
    EXPECT_EQ(j.valid_bytes, fs::file_size(p));
    EXPECT_TRUE(j.dropped_tail.empty());
    // One line per entry: a reason's line end is escaped inside its line.
    std::ifstream in(p);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) ++lines;
    EXPECT_EQ(lines, 4);
}

TEST(Journal, ATornLastLineIsDroppedAndCutAwayBeforeTheNextRow) {
    const fs::path p = scratch.fresh_dir("torn") / "s.journal.jsonl";
    {
        JournalWriter w = JournalWriter::create(p, {{"planned", 3}}, false);
        w.append_record(row(0));
    }
    const auto whole = fs::file_size(p);
    const std::string next = json({{"record", row(1)}}).dump();
    append_raw(p, next.substr(0, next.size() / 2));  // killed inside the write of row 1

    JournalContents j = read_journal(p);
    ASSERT_EQ(j.records.size(), 1u);
    EXPECT_EQ(j.valid_bytes, whole);
    EXPECT_NE(j.dropped_tail.find("line 3 is torn"), std::string::npos) << j.dropped_tail;

    {
        JournalWriter w = JournalWriter::continue_at(p, j.valid_bytes);
        w.append_record(row(1));
    }
    j = read_journal(p);
    ASSERT_EQ(j.records.size(), 2u);
    EXPECT_EQ(json(j.records[1]), json(row(1)));
    EXPECT_TRUE(j.dropped_tail.empty()) << j.dropped_tail;
}

TEST(Journal, GarbageAfterTheLastLineIsDroppedButNotInTheMiddle) {
    const fs::path dir = scratch.fresh_dir("garbage");
    const fs::path p = dir / "s.journal.jsonl";
    { JournalWriter::create(p, {{"planned", 3}}, false).append_record(row(0)); }
    append_raw(p, std::string(40, '\0') + "\n");  // what a machine crash can leave after the last sync
    const JournalContents j = read_journal(p);
    EXPECT_EQ(j.records.size(), 1u);
    EXPECT_NE(j.dropped_tail.find("line 3 is not valid JSON"), std::string::npos) << j.dropped_tail;

    append_raw(p, json({{"record", row(2)}}).dump() + "\n");  // the bad line is no longer the last
    const std::string error = message_of([&] { read_journal(p); });
    EXPECT_NE(error.find(p.string() + ":3: not valid JSON"), std::string::npos) << error;
}

TEST(Journal, ARecordLineThatIsNotARecordNamesItsLineAndPath) {
    const fs::path p = scratch.fresh_dir("bad_record") / "s.journal.jsonl";
    { JournalWriter::create(p, {{"planned", 3}}, false); }
    append_raw(p, R"({"record": {"job_id": "seven"}})"
                  "\n"
                  R"({"record": {}})"
                  "\n");
    const std::string error = message_of([&] { read_journal(p); });
    EXPECT_NE(error.find(p.string() + ":2: /record: "), std::string::npos) << error;
    const fs::path q = scratch.fresh_dir("bad_kind") / "s.journal.jsonl";
    { JournalWriter::create(q, {{"planned", 3}}, false); }
    append_raw(q, R"({"row": 1})"
                  "\n"
                  R"({"row": 2})"
                  "\n");
    EXPECT_NE(message_of([&] { read_journal(q); }).find(":2: expected {\"record\""), std::string::npos);
}

TEST(Journal, AFileThatIsNotAJournalIsRefused) {
    const fs::path dir = scratch.fresh_dir("not_journal");
    append_raw(dir / "a.jsonl", "{\"meta\": {}}\n");
    EXPECT_NE(message_of([&] { read_journal(dir / "a.jsonl"); }).find("not a kreg journal"), std::string::npos);
    append_raw(dir / "empty.jsonl", "");
    EXPECT_NE(message_of([&] { read_journal(dir / "empty.jsonl"); }).find("no header line"), std::string::npos);
    append_raw(dir / "torn_header.jsonl", "{\"kreg_journal\": 1, \"pla");
    EXPECT_NE(message_of([&] { read_journal(dir / "torn_header.jsonl"); }).find("no header line"), std::string::npos);
    append_raw(dir / "v2.jsonl", "{\"kreg_journal\": 2}\n");
    EXPECT_NE(message_of([&] { read_journal(dir / "v2.jsonl"); }).find("version 2"), std::string::npos);
    EXPECT_NE(message_of([&] { read_journal(dir / "missing.jsonl"); }).find("cannot open journal"), std::string::npos);
}

TEST(Journal, AnExistingJournalIsOverwrittenOnlyWhenAsked) {
    const fs::path p = scratch.fresh_dir("overwrite") / "s.journal.jsonl";
    { JournalWriter::create(p, {{"planned", 1}}, false).append_record(row(0)); }
    EXPECT_NE(message_of([&] { JournalWriter::create(p, {{"planned", 2}}, false); }).find("exists"), std::string::npos);
    EXPECT_EQ(read_journal(p).records.size(), 1u);  // untouched by the refusal
    { JournalWriter::create(p, {{"planned", 2}}, true); }
    const JournalContents j = read_journal(p);
    EXPECT_EQ(j.header["planned"], 2);
    EXPECT_TRUE(j.records.empty());
}

TEST(Journal, TwoWritersOfOneJournalAreRefused) {
    const fs::path p = scratch.fresh_dir("locked") / "s.journal.jsonl";
    JournalWriter first = JournalWriter::create(p, {{"planned", 1}}, false);
    const auto valid = read_journal(p).valid_bytes;
    EXPECT_NE(message_of([&] { JournalWriter::continue_at(p, valid); }).find("being written by another runner"),
              std::string::npos);
}

}  // namespace
}  // namespace kreg
