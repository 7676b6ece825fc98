#include "report/journal.hpp"

#include "platform/file_io.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace kreg {
namespace fs = std::filesystem;

namespace {

constexpr const char* kJournalSuffix = ".journal.jsonl";

[[noreturn]] void fail(const fs::path& path, const std::string& what, int error) {
    throw std::runtime_error("journal '" + path.string() + "': " + what + ": " + std::strerror(error));
}

bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Two runners appending to one journal would interleave (and duplicate) rows: the second is refused.
void lock_or_fail(const fs::path& path, int fd) {
    const int error = platform::try_lock_exclusive(fd);
    if (error == 0) return;
    platform::close_file(fd);
    if (error == EWOULDBLOCK)
        throw std::runtime_error("journal '" + path.string() + "' is being written by another runner");
    fail(path, "cannot lock it", error);
}

}  // namespace

fs::path journal_path_for(const fs::path& json_report) {
    fs::path p = json_report;
    if (p.extension() == ".json") p.replace_extension();
    return p.string() + kJournalSuffix;
}

bool is_journal_path(const fs::path& path) { return ends_with(path.filename().string(), kJournalSuffix); }

JournalContents read_journal(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open journal '" + path.string() + "': " + std::strerror(errno));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw std::runtime_error("cannot read journal '" + path.string() + "'");

    JournalContents out;
    size_t line_no = 0;
    for (size_t at = 0; at < text.size();) {
        ++line_no;
        const size_t newline = text.find('\n', at);
        const bool last = newline == std::string::npos || newline + 1 == text.size();
        const std::string_view line(text.data() + at, (newline == std::string::npos ? text.size() : newline) - at);
        const std::string where = path.string() + ":" + std::to_string(line_no);
        if (newline == std::string::npos) {  // the runner died inside its last write
            out.dropped_tail = "line " + std::to_string(line_no) + " is torn (no line end); dropped";
            break;
        }
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception& e) {
            // A machine crash can leave garbage (often NUL bytes) after the last synced line.
            if (last && line_no > 1) {
                out.dropped_tail = "line " + std::to_string(line_no) + " is not valid JSON; dropped";
                break;
            }
            throw std::runtime_error("journal " + where + ": not valid JSON: " + e.what());
        }
        if (!j.is_object()) throw std::runtime_error("journal " + where + ": not a JSON object");
        if (line_no == 1) {
            const auto version = j.find("kreg_journal");
            if (version == j.end())
                throw std::runtime_error("journal " + where +
                                         ": not a kreg journal (no \"kreg_journal\" in its first line)");
            if (*version != kJournalVersion)
                throw std::runtime_error("journal " + where + ": version " + version->dump() +
                                         ", this runner reads version " + std::to_string(kJournalVersion));
            j.erase("kreg_journal");
            out.header = std::move(j);
        } else if (const auto r = j.find("record"); r != j.end() && j.size() == 1) {
            try {
                out.records.push_back(r->get<Record>());
            } catch (const std::exception& e) {
                throw std::runtime_error("journal " + where + ": /record: " + e.what());
            }
        } else if (const auto ev = j.find("event"); ev != j.end() && j.size() == 1) {
            out.events.push_back(*ev);
        } else {
            throw std::runtime_error("journal " + where + ": expected {\"record\": ...} or {\"event\": ...}");
        }
        at = newline + 1;
        out.valid_bytes = at;
    }
    if (line_no == 0 || out.header.is_null())
        throw std::runtime_error("journal '" + path.string() + "' has no header line (the run ended before it began)");
    return out;
}

JournalWriter JournalWriter::create(const fs::path& path, const nlohmann::json& header, bool overwrite) {
    std::error_code ec;
    if (!path.parent_path().empty()) fs::create_directories(path.parent_path(), ec);
    if (ec) fail(path, "cannot create its directory", ec.value());
    const int fd = platform::open_append(path, true, !overwrite);
    if (fd < 0 && errno == EEXIST) throw std::runtime_error("journal '" + path.string() + "' exists");
    if (fd < 0) fail(path, "cannot create it", errno);
    lock_or_fail(path, fd);
    if (const int error = overwrite ? platform::truncate_file(fd, 0) : 0; error != 0) {
        platform::close_file(fd);
        fail(path, "cannot truncate it", error);
    }
    JournalWriter w(path, fd);
    nlohmann::json first = {{"kreg_journal", kJournalVersion}};
    for (const auto& [key, value] : header.items()) first[key] = value;
    w.append_line(first);
    w.sync();  // the header is what makes the file resumable: on disk before the first row
    return w;
}

JournalWriter JournalWriter::continue_at(const fs::path& path, uint64_t valid_bytes) {
    const int fd = platform::open_append(path, false, false);
    if (fd < 0) fail(path, "cannot open it for appending", errno);
    lock_or_fail(path, fd);
    if (const int error = platform::truncate_file(fd, valid_bytes); error != 0) {
        platform::close_file(fd);
        fail(path, "cannot cut its torn last line", error);
    }
    JournalWriter w(path, fd);
    w.sync();
    return w;
}

JournalWriter::JournalWriter(JournalWriter&& other) noexcept { *this = std::move(other); }

JournalWriter& JournalWriter::operator=(JournalWriter&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) platform::close_file(fd_);
        path_ = std::move(other.path_);
        fd_ = other.fd_;
        other.fd_ = -1;
        sync_interval_ = other.sync_interval_;
        last_sync_ = other.last_sync_;
        unsynced_ = other.unsynced_;
        syncing_ = other.syncing_;
    }
    return *this;
}

JournalWriter::~JournalWriter() {
    if (fd_ < 0) return;
    if (unsynced_) platform::sync_file(fd_);
    platform::close_file(fd_);
}

void JournalWriter::append_line(const nlohmann::json& line) {
    append_text(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void JournalWriter::append_text(std::string_view line) {
    buffer_.assign(line);
    buffer_ += '\n';
    std::string_view rest = buffer_;
    while (!rest.empty()) {
        const long n = platform::write_some(fd_, rest.data(), rest.size());
        if (n < 0 && errno == EINTR) continue;  // a stop request arriving mid-write
        if (n <= 0) fail(path_, "write failed", n < 0 ? errno : EIO);
        rest.remove_prefix(size_t(n));
    }
    unsynced_ = true;
    if (std::chrono::steady_clock::now() - last_sync_ >= sync_interval_) sync();
}

void JournalWriter::append_record(const Record& r) { append_line({{"record", r}}); }

void JournalWriter::append_record_text(const std::string& record_json) {
    std::string line;
    line.reserve(record_json.size() + 12);
    line += "{\"record\":";
    line += record_json;
    line += '}';
    append_text(line);
}

void JournalWriter::append_event(const nlohmann::json& event) { append_line({{"event", event}}); }

void JournalWriter::sync() {
    const auto start = std::chrono::steady_clock::now();
    if (const int error = fd_ >= 0 ? platform::sync_file(fd_) : 0; error != 0) fail(path_, "fdatasync failed", error);
    unsynced_ = false;
    last_sync_ = std::chrono::steady_clock::now();
    syncing_ += last_sync_ - start;
}

}  // namespace kreg
