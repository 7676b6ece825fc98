#include "sandbox/memory_limit.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <thread>
#include <utility>

namespace kreg {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = kKiB * 1024;
constexpr uint64_t kGiB = kMiB * 1024;

// How long the destructor waits for the killed processes to leave before it gives up on the directory.
constexpr auto kEmptyWait = std::chrono::seconds(2);
constexpr auto kPoll = std::chrono::milliseconds(10);

bool read_text(const std::string& path, std::string& out) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    out.clear();
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(fd, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) out.append(chunk, size_t(n));
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return n == 0;
}

// One write(2), as cgroup files want; 0 or the errno of the open or the write.
int write_text(const std::string& path, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    ssize_t n;
    while ((n = ::write(fd, text.data(), text.size())) < 0 && errno == EINTR) {
    }
    const int saved = n < 0 ? errno : (size_t(n) == text.size() ? 0 : EIO);
    ::close(fd);
    return saved;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

std::string joined(const std::vector<std::string>& list) {
    std::string out;
    for (const std::string& item : list) out += (out.empty() ? "" : " ") + item;
    return out.empty() ? "nothing" : out;
}

std::vector<pid_t> procs_of(const std::string& dir) {
    std::string text;
    std::vector<pid_t> pids;
    if (!read_text(dir + "/cgroup.procs", text)) return pids;
    for (const std::string& w : words(text)) pids.push_back(pid_t(std::stol(w)));
    return pids;
}

// "key value" lines (memory.events): the value of key, 0 when absent.
uint64_t event_count(const std::string& text, const std::string& key) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {  // line by line: one malformed line hides no other
        std::istringstream fields(line);
        std::string k;
        uint64_t v = 0;
        if (fields >> k >> v && k == key) return v;
    }
    return 0;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mount_field(const std::string& field) {
    std::string out;
    for (size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size()) {
            const std::string octal = field.substr(i + 1, 3);
            if (octal.size() == 3 &&
                std::all_of(octal.begin(), octal.end(), [](char c) { return c >= '0' && c <= '7'; })) {
                out += char(std::stoi(octal, nullptr, 8));
                i += 3;
                continue;
            }
        }
        out += field[i];
    }
    return out;
}

struct MountLine {
    std::string root, mount_point, fstype, super_options;
};

// "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue" (man 5 proc_pid_mountinfo).
std::vector<MountLine> parse_mountinfo(const std::string& mountinfo) {
    std::vector<MountLine> lines;
    std::istringstream in(mountinfo);
    for (std::string line; std::getline(in, line);) {
        const std::vector<std::string> f = words(line);
        const auto dash = std::find(f.begin(), f.end(), "-");
        if (f.size() < 6 || dash == f.end() || f.end() - dash < 3) continue;
        lines.push_back({unescape_mount_field(f[3]), unescape_mount_field(f[4]), *(dash + 1),
                         dash + 3 < f.end() ? *(dash + 3) : ""});
    }
    return lines;
}

std::string read_proc(const char* path) {
    std::string text;
    read_text(path, text);
    return text;
}

std::string format_limit(uint64_t bytes) {
    if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
    if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
    if (bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
    return std::to_string(bytes) + " bytes";
}

std::string format_amount(uint64_t bytes) {
    const auto one_decimal = [](uint64_t value, uint64_t unit, const char* name) {
        char text[64];
        std::snprintf(text, sizeof text, "%.1f %s", double(value) / double(unit), name);
        return std::string(text);
    };
    if (bytes >= kGiB) return one_decimal(bytes, kGiB, "GiB");
    if (bytes >= kMiB) return one_decimal(bytes, kMiB, "MiB");
    if (bytes >= kKiB) return one_decimal(bytes, kKiB, "KiB");
    return std::to_string(bytes) + " bytes";
}

// Enables each controller in dir/cgroup.subtree_control, one write each so the errors say which one failed.
// Returns the controllers that failed with their errno.
std::vector<std::pair<std::string, int>> enable_controllers(const std::string& dir,
                                                            const std::vector<std::string>& controllers) {
    std::vector<std::pair<std::string, int>> failed;
    for (const std::string& c : controllers)
        if (const int err = write_text(dir + "/cgroup.subtree_control", "+" + c)) failed.emplace_back(c, err);
    return failed;
}

}  // namespace

namespace detail {

std::vector<Cgroup2Mount> cgroup2_mounts(const std::string& mountinfo) {
    std::vector<Cgroup2Mount> mounts;
    for (const MountLine& m : parse_mountinfo(mountinfo))
        if (m.fstype == "cgroup2") mounts.push_back({m.mount_point, m.root});
    return mounts;
}

std::string cgroup_v1_mount_of(const std::string& mountinfo, const std::string& controller) {
    for (const MountLine& m : parse_mountinfo(mountinfo)) {
        if (m.fstype != "cgroup") continue;
        std::istringstream options(m.super_options);
        for (std::string option; std::getline(options, option, ',');)
            if (option == controller) return m.mount_point;
    }
    return "";
}

std::optional<std::string> own_cgroup_dir(const std::string& mountinfo, const std::string& proc_self_cgroup,
                                          std::string& why_not) {
    const std::vector<Cgroup2Mount> mounts = cgroup2_mounts(mountinfo);
    if (mounts.empty()) {
        bool any_v1 = false;
        for (const MountLine& m : parse_mountinfo(mountinfo)) any_v1 = any_v1 || m.fstype == "cgroup";
        why_not = any_v1 ? "cgroup v2 is not mounted (this machine has a v1 layout)"
                         : "cgroup v2 is not mounted (no cgroup file system in /proc/self/mountinfo)";
        return std::nullopt;
    }
    std::optional<std::string> own;
    std::istringstream in(proc_self_cgroup);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("0::", 0) == 0) own = line.substr(3);
    if (!own || own->empty() || (*own)[0] != '/') {
        why_not = "this process is in no cgroup v2 (/proc/self/cgroup has no \"0::/...\" line)";
        return std::nullopt;
    }
    for (const Cgroup2Mount& m : mounts) {
        const std::string root = m.root == "/" ? "" : m.root;
        if (!root.empty() && *own != root && own->rfind(root + "/", 0) != 0) continue;
        const std::string below = own->substr(root.size());
        return m.mount_point + (below == "/" ? "" : below);
    }
    why_not = "this process's cgroup " + *own + " is not below any cgroup2 mount (the first is " +
              mounts.front().mount_point + ", showing " + mounts.front().root + ")";
    return std::nullopt;
}

std::optional<WorkerParent> prepare_worker_parent(const std::string& own_dir, const std::vector<std::string>& required,
                                                  const std::vector<std::string>& optional, std::string& why_not) {
    std::string text;
    if (!read_text(own_dir + "/cgroup.controllers", text)) {
        why_not = "cannot read " + own_dir + "/cgroup.controllers: " + std::strerror(errno);
        return std::nullopt;
    }
    const std::vector<std::string> available = words(text);
    WorkerParent parent{own_dir, {}, ""};
    for (const std::string& c : required) {
        if (!contains(available, c)) {
            why_not = "the " + c + " controller is not available in " + own_dir + " (its cgroup.controllers lists " +
                      joined(available) + ")";
            return std::nullopt;
        }
        parent.controllers.push_back(c);
    }
    for (const std::string& c : optional) {
        if (contains(available, c))
            parent.controllers.push_back(c);
        else
            parent.not_enabled += (parent.not_enabled.empty() ? "" : "; ") +
                                  ("the " + c + " controller is not delegated to " + own_dir +
                                   " (its cgroup.controllers lists " + joined(available) + ")");
    }

    std::vector<std::string> missing;
    read_text(own_dir + "/cgroup.subtree_control", text);
    const std::vector<std::string> enabled = words(text);
    for (const std::string& c : parent.controllers)
        if (!contains(enabled, c)) missing.push_back(c);
    if (missing.empty()) return parent;

    auto failed = enable_controllers(own_dir, missing);
    const bool busy = std::any_of(failed.begin(), failed.end(), [](const auto& f) { return f.second == EBUSY; });
    std::string leaf;
    size_t others = 0;
    if (busy) {
        // No internal processes: our own cgroup holds processes (at least this one). Move only this process
        // into a leaf of its own and try again; it works when nobody else is there.
        leaf = own_dir + "/kreg-runner-" + std::to_string(::getpid());
        if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
            why_not = "cannot create " + leaf + " to move the runner out of " + own_dir + ": " + std::strerror(errno);
            return std::nullopt;
        }
        if (const int err = write_text(leaf + "/cgroup.procs", std::to_string(::getpid()))) {
            ::rmdir(leaf.c_str());
            why_not = "cannot move the runner into " + leaf + ": " + std::strerror(err);
            return std::nullopt;
        }
        others = procs_of(own_dir).size();
        std::vector<std::string> retry;
        for (const auto& f : failed) retry.push_back(f.first);
        failed = enable_controllers(own_dir, retry);
    }

    for (const auto& [controller, err] : failed) {
        if (!contains(required, controller)) {
            parent.controllers.erase(std::find(parent.controllers.begin(), parent.controllers.end(), controller));
            parent.not_enabled +=
                (parent.not_enabled.empty() ? "" : "; ") +
                ("cannot enable the " + controller + " controller in " + own_dir + ": " + std::strerror(err));
            continue;
        }
        why_not = "cannot enable the " + controller + " controller in " + own_dir + ": " + std::strerror(err);
        if (err == EBUSY && !leaf.empty()) {
            why_not += " (" + std::to_string(others) + " other process" + (others == 1 ? "" : "es") +
                       " share this cgroup, and a cgroup with processes cannot pass controllers on; start the runner"
                       " in a cgroup of its own, e.g. systemd-run --scope -p Delegate=yes)";
        }
        if (!leaf.empty()) {  // back where we were, and no trace left
            const int err_back = write_text(own_dir + "/cgroup.procs", std::to_string(::getpid()));
            if (err_back == 0)
                ::rmdir(leaf.c_str());
            else
                why_not +=
                    "; the runner stays in " + leaf + " (moving it back failed: " + std::strerror(err_back) + ")";
        }
        return std::nullopt;
    }
    return parent;
}

bool memory_events_show_limit_hit(const std::string& memory_events) {
    return event_count(memory_events, "oom_kill") > 0 || event_count(memory_events, "oom") > 0 ||
           event_count(memory_events, "max") > 0;
}

bool memory_limit_hit_in(const std::string& cgroup_dir) {
    std::string events;
    return read_text(cgroup_dir + "/memory.events", events) && memory_events_show_limit_hit(events);
}

std::optional<WorkerCgroup> create_worker_cgroup(const WorkerParent& parent, uint64_t memory_bytes, uint64_t max_pids,
                                                 std::string& why_not) {
    static std::atomic<unsigned> next_number{0};
    const std::string prefix = parent.dir + "/kreg-worker-" + std::to_string(::getpid()) + "-";
    std::string dir;
    for (int attempt = 0; attempt < 100 && dir.empty(); ++attempt) {
        const std::string candidate = prefix + std::to_string(next_number++);
        if (::mkdir(candidate.c_str(), 0755) == 0) {
            dir = candidate;
        } else if (errno != EEXIST) {
            why_not = "cannot create the cgroup " + candidate + ": " + std::strerror(errno);
            return std::nullopt;
        }
    }
    if (dir.empty()) {
        why_not = "cannot create a cgroup " + prefix + "<n>: 100 names in a row exist already";
        return std::nullopt;
    }
    WorkerCgroup cgroup(dir);  // from here on its destructor removes dir again on every failure
    const auto set = [&](const std::string& file, const std::string& value) {
        if (const int err = write_text(dir + "/" + file, value)) {
            why_not = "cannot set " + file + " to " + value + " in " + dir + ": " + std::strerror(err);
            return false;
        }
        cgroup.limits_ += (cgroup.limits_.empty() ? "" : ", ") + file + " " + value;
        return true;
    };
    if (contains(parent.controllers, "memory")) {
        if (!set("memory.max", memory_bytes > 0 ? std::to_string(memory_bytes) : "max")) return std::nullopt;
        // Swap would let the worker hold more than memory.max; the file exists only with swap accounting.
        if (memory_bytes > 0 && exists(dir + "/memory.swap.max") && !set("memory.swap.max", "0")) return std::nullopt;
        // The OOM killer takes the worker and its children together, not one process of them.
        if (exists(dir + "/memory.oom.group") && !set("memory.oom.group", "1")) return std::nullopt;
    }
    if (contains(parent.controllers, "pids")) {
        if (!set("pids.max", max_pids > 0 ? std::to_string(max_pids) : "max")) return std::nullopt;
    } else if (max_pids > 0) {
        cgroup.limits_ += (cgroup.limits_.empty() ? "" : ", ") + std::string("pids.max not set (") +
                          (parent.not_enabled.empty() ? "no pids controller" : parent.not_enabled) + ")";
    }
    return cgroup;
}

}  // namespace detail

std::optional<WorkerCgroup> WorkerCgroup::create(uint64_t memory_bytes, uint64_t max_pids, std::string& why_not) {
    // Done once per process: it may move this process, and a second try would find the same situation.
    struct RunnerState {
        std::optional<detail::WorkerParent> parent;
        std::string why_not;
    };
    static const RunnerState state = [] {
        RunnerState s;
        const std::string mountinfo = read_proc("/proc/self/mountinfo");
        const std::optional<std::string> own =
            detail::own_cgroup_dir(mountinfo, read_proc("/proc/self/cgroup"), s.why_not);
        if (!own) return s;
        s.parent = detail::prepare_worker_parent(*own, {"memory"}, {"pids"}, s.why_not);
        if (!s.parent) {
            // Our cgroup is shared (a shell, a test driver): the workers' cgroups can still be siblings of
            // it, where the parent already passes the memory controller down. Nothing is moved or enabled.
            const std::string above = own->substr(0, own->find_last_of('/'));
            std::string enabled;
            if (!above.empty() && above != *own && read_text(above + "/cgroup.subtree_control", enabled) &&
                contains(words(enabled), "memory") && ::access((above + "/cgroup.procs").c_str(), W_OK) == 0) {
                detail::WorkerParent sibling{above, {"memory"}, ""};
                if (contains(words(enabled), "pids"))
                    sibling.controllers.push_back("pids");
                else
                    sibling.not_enabled = "the pids controller is not passed down by " + above;
                s.parent = sibling;
            }
        }
        const std::string v1 = detail::cgroup_v1_mount_of(mountinfo, "memory");
        if (!s.parent && !v1.empty() && s.why_not.find("v1") == std::string::npos)
            s.why_not += ": this machine has a hybrid v1/v2 layout and the cgroup v1 hierarchy at " + v1 +
                         " holds the memory controller";
        return s;
    }();
    if (!state.parent) {
        why_not = state.why_not;
        return std::nullopt;
    }
    return detail::create_worker_cgroup(*state.parent, memory_bytes, max_pids, why_not);
}

WorkerCgroup::WorkerCgroup(WorkerCgroup&& other) noexcept
    : path_(std::exchange(other.path_, std::string())), limits_(std::move(other.limits_)) {}

WorkerCgroup& WorkerCgroup::operator=(WorkerCgroup&& other) noexcept {
    if (this != &other) {
        WorkerCgroup gone(std::move(*this));
        path_ = std::exchange(other.path_, std::string());
        limits_ = std::move(other.limits_);
    }
    return *this;
}

WorkerCgroup::~WorkerCgroup() {
    if (path_.empty()) return;
    kill_all();
    // A killed process leaves cgroup.procs when it exits, before its parent reaps it.
    const auto deadline = std::chrono::steady_clock::now() + kEmptyWait;
    int err = 0;
    while (true) {
        if (procs_of(path_).empty()) {
            if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) return;
            err = errno;
        } else {
            err = EBUSY;
        }
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(kPoll);
    }
    std::cerr << "kreg: cannot remove the worker cgroup " << path_ << ": " << std::strerror(err) << "\n";
}

bool WorkerCgroup::add(platform::ProcessId pid, std::string& why_not) {
    if (const int err = write_text(path_ + "/cgroup.procs", std::to_string(pid))) {
        why_not = "cannot move process " + std::to_string(pid) + " into " + path_ + ": " + std::strerror(err);
        return false;
    }
    return true;
}

bool WorkerCgroup::memory_limit_hit() const { return !path_.empty() && detail::memory_limit_hit_in(path_); }

uint64_t WorkerCgroup::peak_bytes() const {
    std::string text;
    if (path_.empty() || !read_text(path_ + "/memory.peak", text)) return 0;
    try {
        return std::stoull(text);
    } catch (const std::exception&) {
        return 0;
    }
}

void WorkerCgroup::kill_all() {
    if (path_.empty()) return;
    if (exists(path_ + "/cgroup.kill") && write_text(path_ + "/cgroup.kill", "1") == 0) return;
    // Before cgroup.kill: frozen processes cannot fork a new one between the read and the kill (and a frozen
    // process cannot exit, so its pid cannot go to someone else); SIGKILL still ends a frozen process.
    write_text(path_ + "/cgroup.freeze", "1");
    for (int round = 0; round < 200; ++round) {
        const std::vector<pid_t> pids = procs_of(path_);
        if (pids.empty()) return;
        for (const pid_t pid : pids) ::kill(pid, SIGKILL);
        std::this_thread::sleep_for(kPoll);
    }
}

bool looks_like_memory_limit(uint64_t limit_bytes, long ru_maxrss_kib) {
    if (limit_bytes == 0) return false;
    return ru_maxrss_kib > 0 && uint64_t(ru_maxrss_kib) * kKiB >= limit_bytes - limit_bytes / 10;
}

std::string memory_limit_reason(uint64_t limit_bytes, uint64_t peak_bytes) {
    std::string reason = "memory limit of " + format_limit(limit_bytes) + " exceeded";
    if (peak_bytes > 0) reason += " (peak " + format_amount(peak_bytes) + ")";
    return reason;
}

std::string describe_memory_limit_hit(uint64_t limit_bytes, const WorkerCgroup* cgroup, long ru_maxrss_kib) {
    if (limit_bytes == 0) return "";
    const bool hit = (cgroup && cgroup->memory_limit_hit()) || looks_like_memory_limit(limit_bytes, ru_maxrss_kib);
    if (!hit) return "";
    uint64_t peak = cgroup ? cgroup->peak_bytes() : 0;
    if (peak == 0 && ru_maxrss_kib > 0) peak = uint64_t(ru_maxrss_kib) * kKiB;
    return memory_limit_reason(limit_bytes, peak);
}

}  // namespace kreg
