// Starting a process the runner does not trust, confined by the kernel before its first instruction.
//
//   runner ──clone(NEWPID|NEWNS|NEWNET|NEWIPC|NEWUTS [|NEWUSER])──> reaper (pid 1 of the new namespaces)
//                                                                     └─clone(SIGCHLD)─> the confined program (pid 2)
//
// The reaper is the runner's own code (no exec): it waits until the parent has placed it (a cgroup),
// gives the namespaces a fresh /proc, takes the sandbox identity, starts the program and then only
// reaps. When the program ends, the reaper reports how on its status pipe and exits; a PID namespace
// dies with its pid 1, so the kernel then kills everything the program started: setsid() children,
// orphans, double forks, processes holding the program's pipes. Killing the reaper does the same on
// every other path (timeouts, protocol violations, the runner's own exit: the reaper has
// PR_SET_PDEATHSIG).
//
// Identity: as root, the program runs as kSandboxUid:kSandboxGid with no supplementary groups and no
// capabilities; as an ordinary user, as that user mapped to itself in a fresh user namespace, whose
// capabilities count for nothing outside it. Either way it cannot signal, trace or open the memory of
// a process outside its PID namespace, and it sees no other process in /proc.
//
// A stopped program (SIGSTOP, SIGTSTP, a stop from one of its own children) counts as dead: the reaper
// kills it and reports the stop.
#pragma once

#include "platform/process_id.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kreg {

// The identity a confined process takes when the runner runs as root: no passwd entry, owns nothing
// but the scratch folders made for it.
// (uint32_t: what uid_t and gid_t are on Linux, and a header that also compiles where they do not exist.)
inline constexpr uint32_t kSandboxUid = 61000;
inline constexpr uint32_t kSandboxGid = 61000;

struct Confinement {
    std::string executable;                // run through a descriptor opened by the parent
    std::vector<std::string> argv;         // argv[0] included
    std::vector<std::string> environment;  // the program's whole environment, NAME=value
    std::string working_dir;               // its scratch folder
    uint64_t working_dir_tmpfs_bytes = 0;  // > 0: a private tmpfs of this size is mounted there first
    // Parent descriptor -> descriptor number in the program (each source >= 10, so no move clobbers
    // another). stdin is /dev/null unless mapped; every descriptor not mapped is closed.
    std::vector<std::pair<int, int>> fds;
};

// How the confined program ended, as its reaper saw it.
struct ConfinedExit {
    bool known = false;    // false: the reaper died without a report (killed by the parent)
    int wait_status = 0;   // as from waitpid
    int stopped_by = 0;    // the signal that stopped it, when it was stopped and then killed
    long max_rss_kib = 0;  // its peak resident set (getrusage of the program and its reaped children)
};

class ConfinedProcess {
public:
    // Starts c. before_start runs in the parent with the reaper's pid before the reaper goes on (to
    // put it in a cgroup). Throws std::runtime_error when the namespaces cannot be created or the
    // identity cannot be taken: the program never runs half-confined.
    static ConfinedProcess start(const Confinement& c, const std::function<void(platform::ProcessId)>& before_start);

    ConfinedProcess(ConfinedProcess&& other) noexcept;
    ConfinedProcess& operator=(ConfinedProcess&& other) noexcept;
    ConfinedProcess(const ConfinedProcess&) = delete;
    ConfinedProcess& operator=(const ConfinedProcess&) = delete;
    ~ConfinedProcess();  // kills the namespace and reaps

    platform::ProcessId reaper() const { return reaper_; }
    // Readable once the program has ended (the report) or the reaper died (EOF): poll it.
    int status_fd() const { return status_fd_; }
    // What the spawn set up, "<step>: <detail>", and what it could not, with the reason.
    const std::vector<std::string>& applied() const { return applied_; }
    const std::vector<std::string>& unavailable() const { return unavailable_; }

    // Kills everything in the namespace (if still running), reaps the reaper and returns the report.
    ConfinedExit kill_and_reap();
    // Waits for the program's end (up to timeout_s), then reaps; on timeout kills first.
    ConfinedExit wait(double timeout_s);

private:
    // Reads the reaper's set-up report up to "started" (throws on "fatal: ..." or after 30 s).
    void await_started();
    ConfinedProcess() = default;
    ConfinedExit finish();

    platform::ProcessId reaper_ = -1;
    int status_fd_ = -1;
    std::string report_;  // what the reaper wrote so far
    std::vector<std::string> applied_, unavailable_;
};

// "" when this machine can confine a program (namespaces, identity, a scratch folder): runs
// `executable --version` confined, output discarded. Else why not, for one clear message before any
// submission is touched.
std::string why_confinement_fails(const std::string& executable);

// Whether this build confines untrusted code at all: true on Linux (where why_confinement_fails says whether this
// machine can), false where the confinement is not built (Windows: sandbox/unconfined.cpp), where `runner grade`
// runs only a student's unconfined self-check of their own plugin (grade/self_check.hpp).
bool confinement_built();

// The environment a confined program gets: nothing inherited but the names in `pass` that are set,
// plus HOME, TMPDIR and the CUDA cache pointing into scratch. An allow-list: KREG_SECRET_SEED, tokens
// and everything else the runner's environment holds stay out.
std::vector<std::string> confined_environment(const std::string& scratch, const std::vector<std::string>& pass);
// The names a worker keeps (PATH, locale, CUDA device selection, the library path) and the ones a
// submission's build adds (compilers and CMake's own).
const std::vector<std::string>& worker_environment_names();
const std::vector<std::string>& build_environment_names();

// A fresh, empty folder under base (or $TMPDIR, else /tmp) for one confined process, owned by the
// identity it will run as (kSandboxUid when root), mode 0700. Throws std::runtime_error.
std::string make_scratch_dir(const std::string& base = "");
// <scratch>/<name>, created empty and handed over like the scratch folder itself. Throws.
std::string make_scratch_subdir(const std::string& scratch, const std::string& name);
// Removes it and everything in it (the process's files included). Never throws.
void remove_scratch_dir(const std::string& path);

}  // namespace kreg
