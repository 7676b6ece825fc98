// A child process with a line channel, a deadline and a kill that takes everything it started along:
// the portable core of starting a worker. POSIX: fork/exec in a process group of its own, pipes, poll,
// kill(-group). Windows: CreateProcess (suspended, placed in a Job Object that kills every process in it
// when it is closed, then resumed), anonymous pipes, TerminateJobObject.
//
// The child's stdin and stdout are the channel (one line a message, at most kMaxChildLineBytes), its
// stderr is collected (the last kStderrTailBytes) while the parent reads. What a child writes is a
// claim: the caller parses it as hostile input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::platform {

inline constexpr size_t kMaxChildLineBytes = size_t(1) << 20;
inline constexpr size_t kStderrTailBytes = 8192;

struct ChildLimits {
    // The child's memory, 0 for none. POSIX: RLIMIT_AS in the child; Windows: the job's memory limit
    // (every process it starts counts).
    uint64_t memory_bytes = 0;
    // POSIX: the child leads a process group of its own, which kill_tree() kills; false leaves it in the
    // caller's group, so that the caller's own parent can kill both with one kill_tree() (a process that
    // makes a new group or session escapes a group kill: on Linux the confined worker's PID namespace is
    // what catches those). Windows: ignored; the child's job nests in the caller's, so a kill of the outer
    // job takes both.
    bool own_process_group = true;
};

// How a child ended.
struct ChildExit {
    std::optional<int> exit_code;  // it exited (on Windows also: the code a fault ended it with)
    std::string fault;             // "SIGSEGV", "EXCEPTION_ACCESS_VIOLATION": it died of this
    bool killed = false;           // kill_tree() ended it (a timeout, a violation)
    // "exited with code 3", "crashed: EXCEPTION_ACCESS_VIOLATION", "killed (with everything it started)"
    std::string describe() const;
};

class ChildProcess {
public:
    // Starts exe with args (UTF-8). Throws std::runtime_error naming exe and the reason when it cannot.
    static ChildProcess start(const std::filesystem::path& exe, const std::vector<std::string>& args,
                              const ChildLimits& limits = {});

    ChildProcess();
    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess();  // kills and waits for a child still running, with everything it started

    // Writes line and a '\n' to the child's stdin; false when the child no longer reads.
    bool write_line(std::string_view line);

    enum class Read { line, timed_out, closed, too_long };
    // Waits up to timeout_s for one whole line on the child's stdout (returned without its '\n').
    // closed: the child closed its stdout (it ended, most likely); too_long: kMaxChildLineBytes passed
    // without a '\n'.
    Read read_line(std::string& line, double timeout_s);

    // Kills the child and every process it started. Idempotent.
    void kill_tree();
    // Waits for the child to end (by itself, or after kill_tree()) and says how.
    ChildExit wait();

    bool started() const { return state_ != nullptr; }
    long pid() const;
    // The last kStderrTailBytes the child wrote to stderr so far, as it wrote them.
    std::string stderr_tail() const;

    struct State;  // per system (posix/, windows/)

private:
    explicit ChildProcess(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

}  // namespace kreg::platform
