// The journal of a sweep: a JSON-lines file next to its report, the one place every finished row is
// written as it arrives. The JSON and CSV reports are rendered from it; an interrupted sweep is resumed
// from it.
//
//   line 1      {"kreg_journal": 1, "meta": {...}, "plan": {...}}   what run this is (never rewritten)
//   then        {"record": {...}}                                     one finished row (to_json(Record))
//           or  {"event": {...}}                                      e.g. a resume: when, with which argv
//
// Each line goes out in one write(), so a killed runner leaves at most its last line torn (no final
// newline): the reader drops that line and a resumed run truncates it away before appending. Rows
// survive the runner's death as soon as they are written; fdatasync bounds what a crash of the machine
// itself can take to the last sync interval.
#pragma once

#include "common/job.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

inline constexpr int kJournalVersion = 1;

// "<dir>/<stem>.journal.jsonl" for "<dir>/<stem>.json" (any other name gets ".journal.jsonl" appended).
std::filesystem::path journal_path_for(const std::filesystem::path& json_report);
// True for a path that names a journal (ends in ".journal.jsonl").
bool is_journal_path(const std::filesystem::path& path);

struct JournalContents {
    nlohmann::json header;        // line 1, without "kreg_journal"
    std::vector<Record> records;  // in the order written
    std::vector<nlohmann::json> events;
    uint64_t valid_bytes = 0;  // length of the prefix made of whole, valid lines
    std::string dropped_tail;  // why the last line was dropped ("" when none was)
};

// Reads a journal. A last line that is torn (no newline) or not valid JSON is dropped and said so in
// dropped_tail; anything else malformed throws std::runtime_error naming the file and the line.
JournalContents read_journal(const std::filesystem::path& path);

class JournalWriter {
public:
    // A new journal holding only the header line. Refuses (std::runtime_error naming the path) when the
    // file exists, unless overwrite.
    static JournalWriter create(const std::filesystem::path& path, const nlohmann::json& header, bool overwrite);
    // An existing journal, to be continued: cut to valid_bytes (a torn last line goes) and appended to.
    static JournalWriter continue_at(const std::filesystem::path& path, uint64_t valid_bytes);

    JournalWriter(JournalWriter&& other) noexcept;
    JournalWriter& operator=(JournalWriter&& other) noexcept;
    JournalWriter(const JournalWriter&) = delete;
    JournalWriter& operator=(const JournalWriter&) = delete;
    ~JournalWriter();  // syncs and closes

    // One line each, one write() each; fdatasync at most once per sync_interval (and in sync()).
    // Throw std::runtime_error naming the file when the write fails.
    void append_record(const Record& r);
    // The same, from the record's compact JSON text (to_json(Record), dumped without indentation).
    void append_record_text(const std::string& record_json);
    void append_event(const nlohmann::json& event);
    void sync();

    const std::filesystem::path& path() const { return path_; }
    // Syncing every line costs a disk flush per row (milliseconds on many disks), far more than a fast
    // row; a killed runner loses nothing either way, so the default syncs once a second.
    void set_sync_interval(std::chrono::milliseconds interval) { sync_interval_ = interval; }
    // Seconds spent in fdatasync so far (for the runner's --verbose cost line).
    double seconds_syncing() const { return std::chrono::duration<double>(syncing_).count(); }

private:
    JournalWriter(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
    void append_line(const nlohmann::json& line);
    void append_text(std::string_view line);  // line without its newline

    std::filesystem::path path_;
    int fd_ = -1;
    std::string buffer_;
    std::chrono::milliseconds sync_interval_{1000};
    std::chrono::steady_clock::time_point last_sync_ = std::chrono::steady_clock::now();
    bool unsynced_ = false;
    std::chrono::steady_clock::duration syncing_{};
};

}  // namespace kreg
