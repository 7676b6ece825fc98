// The worker's memory limit: RLIMIT_DATA applied for real in a forked child, the cgroup v2 layer on the
// hierarchy this machine has, and the parent's reading of how a worker ended. Anything that moves a process
// between cgroups runs in a forked child (the "runner"), so this test process stays where it was; a layer this
// machine cannot offer makes the test skip with the reason.
#include "sandbox/memory_limit.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

#include "in_child.hpp"
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>
#include <string>

#include "sandbox/resource_limits.hpp"

namespace kreg {
namespace {

using test::ChildOutcome;
using test::in_child;
using test::kFail;
using test::kPass;
using test::kSkip;

constexpr uint64_t kMiB = uint64_t(1) << 20;
std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    out.flush();
    return bool(out);
}

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// VmData of this process, bytes: what RLIMIT_DATA is compared against.
uint64_t data_bytes_now() {
    std::istringstream in(read_file("/proc/self/status"));
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmData:", 0) == 0) return std::stoull(line.substr(7)) * 1024;  // "VmData:  1234 kB"
    return 0;
}

// Where an allocation's address goes so the optimiser cannot prove it unused and drop it.
void* volatile escape = nullptr;

// A worker's body: allocates bytes and writes every page (through escape, so the optimiser keeps it all).
int touch(uint64_t bytes) {
    char* block = static_cast<char*>(std::malloc(bytes));
    if (block == nullptr) return 3;
    escape = block;
    for (uint64_t i = 0; i < bytes; i += 4096) static_cast<char* volatile>(escape)[i] = 1;
    return 0;
}

// ---- RLIMIT_DATA ----------------------------------------------------------------------------------------

TEST(RlimitData, StopsAChildThatAllocatesMoreThanTheLimitAndNotOneBelowIt) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        // The limit counts everything the process already has (the test binary, gtest's heap), so it is set
        // 64 MiB above that.
        const uint64_t limit = (data_bytes_now() / kMiB + 64) * kMiB;
        SandboxPolicy policy;
        policy.memory_bytes = limit;
        SandboxReport report;
        apply_resource_limits(policy, report);
        const std::string entry = "RLIMIT_DATA: " + std::to_string(limit) + " bytes";
        if (std::find(report.applied.begin(), report.applied.end(), entry) == report.applied.end()) {
            message = "report lacks \"" + entry + "\"";
            return kFail;
        }
        rlimit now{};
        ::getrlimit(RLIMIT_DATA, &now);
        if (now.rlim_cur != limit || now.rlim_max != limit) {
            message =
                "getrlimit(RLIMIT_DATA) says " + std::to_string(now.rlim_cur) + "/" + std::to_string(now.rlim_max);
            return kFail;
        }

        // Below the limit: 16 MiB, every page written.
        void* small = std::malloc(16 * kMiB);
        if (small == nullptr) {
            message = "malloc(16 MiB) under a limit of " + std::to_string(limit) + " bytes failed";
            return kFail;
        }
        std::memset(small, 1, 16 * kMiB);
        std::free(small);

        // Twice the limit: malloc, mmap and new all fail.
        void* big = std::malloc(2 * limit);
        escape = big;
        if (big != nullptr) {
            message = "malloc(2 x limit) succeeded";
            return kFail;
        }
        void* mapped = ::mmap(nullptr, 2 * limit, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapped != MAP_FAILED || errno != ENOMEM) {
            message = "mmap(2 x limit, PROT_READ|PROT_WRITE) did not fail with ENOMEM";
            return kFail;
        }
        try {
            char* array = new char[2 * limit];
            escape = array;  // or the compiler may drop the new/delete pair
            delete[] array;
            message = "new char[2 x limit] succeeded";
            return kFail;
        } catch (const std::bad_alloc& e) {
            if (std::string(e.what()) != "std::bad_alloc") {
                message = std::string("bad_alloc::what() is \"") + e.what() + "\"";
                return kFail;
            }
        }

        // Why RLIMIT_DATA and not RLIMIT_AS: an address-space reservation the way the CUDA driver makes one
        // (PROT_NONE, 16 x the limit) does not count.
        void* reserved = ::mmap(nullptr, 16 * limit, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (reserved == MAP_FAILED) {
            message = std::string("a PROT_NONE reservation of 16 x the limit failed: ") + std::strerror(errno);
            return kFail;
        }
        ::munmap(reserved, 16 * limit);
        return kPass;
    }));
}

TEST(RlimitData, IsNotSetWithoutAMemoryLimitAndTheReportSaysSo) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        rlimit before{};
        ::getrlimit(RLIMIT_DATA, &before);
        SandboxPolicy policy;
        policy.memory_bytes = 0;
        SandboxReport report;
        apply_resource_limits(policy, report);
        rlimit after{};
        ::getrlimit(RLIMIT_DATA, &after);
        const bool reported =
            std::find(report.unavailable.begin(), report.unavailable.end(),
                      "RLIMIT_DATA: not set (memory_bytes is 0: no memory limit)") != report.unavailable.end();
        if (!reported || report.has_applied("RLIMIT_DATA") || after.rlim_cur != before.rlim_cur) {
            message = "RLIMIT_DATA changed or the report does not say it was left alone";
            return kFail;
        }
        return kPass;
    }));
}

// With the runner's cgroup holding the worker, RLIMIT_DATA stays unset, so a request of twice the limit is
// not refused in the worker (where only the worker could see it) but counted by the cgroup's memory.events.
TEST(RlimitData, IsNotSetWhereTheRunnersCgroupCapsMemory) {
    EXPECT_CHILD_PASSES(in_child([](std::string& message) {
        rlimit before{};
        ::getrlimit(RLIMIT_DATA, &before);
        SandboxPolicy policy;
        policy.memory_bytes = 64 * kMiB;
        policy.memory_in_cgroup = true;
        SandboxReport report;
        apply_resource_limits(policy, report);
        rlimit after{};
        ::getrlimit(RLIMIT_DATA, &after);
        const bool reported =
            std::find(report.unavailable.begin(), report.unavailable.end(),
                      "RLIMIT_DATA: not set (the runner's cgroup caps memory: memory.max)") != report.unavailable.end();
        if (!reported || report.has_applied("RLIMIT_DATA") || after.rlim_cur != before.rlim_cur) {
            message = "RLIMIT_DATA was set though the cgroup caps memory, or the report does not say so";
            return kFail;
        }
        void* block = std::malloc(128 * kMiB);  // twice the limit: only the cgroup may stop it (none here)
        escape = block;
        std::free(block);
        if (block == nullptr) {
            message = "malloc of twice the limit was refused in the process";
            return kFail;
        }
        return kPass;
    }));
}

// ---- reading how a worker ended ----------------------------------------------------------------------------

TEST(LooksLikeMemoryLimit, PeakRssAtNinetyPercentOfTheLimit) {
    const uint64_t limit = 4 * 1024 * kMiB;
    const long limit_kib = long(limit / 1024);
    EXPECT_TRUE(looks_like_memory_limit(limit, limit_kib));
    EXPECT_TRUE(looks_like_memory_limit(limit, limit_kib - limit_kib / 10));
    EXPECT_FALSE(looks_like_memory_limit(limit, limit_kib - limit_kib / 10 - 1024));
    EXPECT_FALSE(looks_like_memory_limit(limit, 300 * 1024));
    EXPECT_FALSE(looks_like_memory_limit(limit, 0));
}

TEST(LooksLikeMemoryLimit, NeverWithoutALimit) {
    EXPECT_FALSE(looks_like_memory_limit(0, 1L << 40));
    EXPECT_EQ(describe_memory_limit_hit(0, nullptr, 1L << 40), "");
}

TEST(MemoryLimitReason, NamesTheLimitAndThePeak) {
    EXPECT_EQ(memory_limit_reason(uint64_t(4) << 30, uint64_t(4) << 30),
              "memory limit of 4 GiB exceeded (peak 4.0 GiB)");
    EXPECT_EQ(memory_limit_reason(512 * kMiB, 500 * kMiB), "memory limit of 512 MiB exceeded (peak 500.0 MiB)");
    EXPECT_EQ(memory_limit_reason(uint64_t(3) << 29, 0), "memory limit of 1536 MiB exceeded");
    EXPECT_EQ(describe_memory_limit_hit(uint64_t(4) << 30, nullptr, long(4) << 20),
              "memory limit of 4 GiB exceeded (peak 4.0 GiB)");
    // A small peak is no cap reached, whatever the worker wrote about its allocations (it is not read).
    EXPECT_EQ(describe_memory_limit_hit(uint64_t(4) << 30, nullptr, 10 * 1024), "");
}

// memory.events, as the kernel writes it (Documentation/admin-guide/cgroup-v2.rst): the cap is reached when
// usage hit memory.max (max), an allocation found the cgroup full (oom) or the OOM killer ran (oom_kill).
TEST(MemoryEvents, TheCapReachedByMaxOomOrOomKill) {
    EXPECT_FALSE(detail::memory_events_show_limit_hit("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n"));
    EXPECT_TRUE(detail::memory_events_show_limit_hit("low 0\nhigh 0\nmax 12\noom 0\noom_kill 0\n"));
    EXPECT_TRUE(detail::memory_events_show_limit_hit("low 0\nhigh 0\nmax 0\noom 1\noom_kill 0\n"));
    EXPECT_TRUE(detail::memory_events_show_limit_hit("low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\n"));
    // high (memory.high throttling) and low are no cap; an unknown key or a malformed line hides no other.
    EXPECT_FALSE(detail::memory_events_show_limit_hit("low 5\nhigh 9\nmax 0\n"));
    EXPECT_TRUE(detail::memory_events_show_limit_hit("low 0\nsome_future_key 7\nhigh x\nmax 3\n"));
    EXPECT_FALSE(detail::memory_events_show_limit_hit(""));
}

TEST(MemoryEvents, ReadFromTheCgroupsFile) {
    char dir_template[] = "/tmp/kreg-memory-events-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    const std::string dir = dir_template;
    EXPECT_FALSE(detail::memory_limit_hit_in(dir)) << "no memory.events file";
    ASSERT_TRUE(write_file(dir + "/memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"));
    EXPECT_FALSE(detail::memory_limit_hit_in(dir));
    ASSERT_TRUE(write_file(dir + "/memory.events", "low 0\nhigh 0\nmax 0\noom 2\noom_kill 1\n"));
    EXPECT_TRUE(detail::memory_limit_hit_in(dir));
    std::remove((dir + "/memory.events").c_str());
    ::rmdir(dir.c_str());
}

// ---- finding the cgroup, from /proc texts --------------------------------------------------------------

const char* const kV1Mountinfo =
    "25 22 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec - tmpfs tmpfs ro,mode=755\n"
    "35 25 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 25 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n";
const char* const kHybridMountinfo =
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
const char* const kUnifiedMountinfo =
    "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n"
    "32 23 0:28 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(OwnCgroupDir, AV1LayoutHasNoCgroupV2) {
    std::string why_not;
    EXPECT_FALSE(detail::own_cgroup_dir(kV1Mountinfo, "4:memory:/a\n0::/\n", why_not));
    EXPECT_EQ(why_not, "cgroup v2 is not mounted (this machine has a v1 layout)");
    EXPECT_EQ(detail::cgroup_v1_mount_of(kV1Mountinfo, "memory"), "/sys/fs/cgroup/memory");
    EXPECT_EQ(detail::cgroup_v1_mount_of(kV1Mountinfo, "cpu"), "");
    EXPECT_FALSE(detail::own_cgroup_dir("22 1 0:21 / / rw - ext4 /dev/sda1 rw\n", "0::/\n", why_not));
    EXPECT_EQ(why_not, "cgroup v2 is not mounted (no cgroup file system in /proc/self/mountinfo)");
}

TEST(OwnCgroupDir, HybridAndUnifiedLayouts) {
    std::string why_not;
    EXPECT_EQ(detail::own_cgroup_dir(kHybridMountinfo, "4:memory:/x\n0::/\n", why_not), "/sys/fs/cgroup/unified");
    EXPECT_EQ(detail::own_cgroup_dir(kUnifiedMountinfo, "0::/user.slice/session-3.scope\n", why_not),
              "/sys/fs/cgroup/user.slice/session-3.scope");
    EXPECT_FALSE(detail::own_cgroup_dir(kUnifiedMountinfo, "4:memory:/x\n", why_not));
    EXPECT_NE(why_not.find("no \"0::/...\" line"), std::string::npos) << why_not;
}

TEST(OwnCgroupDir, EscapedMountPointAndABindMountedSubtree) {
    std::string why_not;
    const std::string mountinfo = "50 1 0:28 /outer /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n";
    EXPECT_EQ(detail::own_cgroup_dir(mountinfo, "0::/outer/inner\n", why_not), "/mnt/cg two/inner");
    EXPECT_EQ(detail::own_cgroup_dir(mountinfo, "0::/outer\n", why_not), "/mnt/cg two");
    EXPECT_FALSE(detail::own_cgroup_dir(mountinfo, "0::/outerside\n", why_not));
    EXPECT_NE(why_not.find("not below any cgroup2 mount"), std::string::npos) << why_not;
}

// ---- the cgroup layer on this machine ----------------------------------------------------------------

struct Hierarchy {
    std::string own_dir;  // this process's cgroup v2 directory
    std::string mount_point;
};

// This machine's cgroup v2 hierarchy, or why there is none to test with.
std::optional<Hierarchy> find_hierarchy(std::string& why_not) {
    const std::string mountinfo = read_file("/proc/self/mountinfo");
    const std::optional<std::string> own = detail::own_cgroup_dir(mountinfo, read_file("/proc/self/cgroup"), why_not);
    if (!own) return std::nullopt;
    for (const detail::Cgroup2Mount& m : detail::cgroup2_mounts(mountinfo))
        if (own->rfind(m.mount_point, 0) == 0) return Hierarchy{*own, m.mount_point};
    why_not = "no cgroup2 mount holds " + *own;
    return std::nullopt;
}

// The nearest of own_dir and its ancestors that passes controller on to new children and may have one more
// (no processes of its own, or the hierarchy's root); "" when there is none.
std::string parent_passing_on(const Hierarchy& h, const std::string& controller) {
    for (std::string dir = h.own_dir; dir.size() >= h.mount_point.size(); dir = dir.substr(0, dir.rfind('/'))) {
        const std::vector<std::string> enabled = words(read_file(dir + "/cgroup.subtree_control"));
        const bool empty = words(read_file(dir + "/cgroup.procs")).empty();
        if (std::find(enabled.begin(), enabled.end(), controller) != enabled.end() && (empty || dir == h.mount_point))
            return dir;
        if (dir == h.mount_point) break;
    }
    return "";
}

std::string cgroup_of(pid_t pid) {
    std::istringstream in(read_file("/proc/" + std::to_string(pid) + "/cgroup"));
    for (std::string line; std::getline(in, line);)
        if (line.rfind("0::", 0) == 0) return line.substr(3);
    return "";
}

// A child that waits until the byte on its pipe, then runs body and exits with its result: the way the runner
// starts a worker (clone, add it to the cgroup, then let it go).
struct WaitingChild {
    pid_t pid = -1;
    int go_fd = -1;
    void release() {
        (void)!::write(go_fd, "g", 1);
        ::close(go_fd);
    }
    // Waits; the status from wait4, rusage into usage.
    int wait(rusage& usage) const {
        int status = 0;
        while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
        }
        return status;
    }
};

WaitingChild start_waiting_child(const std::function<int()>& body) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return {};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[1]);
        char byte;
        while (::read(fds[0], &byte, 1) < 0 && errno == EINTR) {
        }
        ::_exit(body());
    }
    ::close(fds[0]);
    return {pid, fds[1]};
}

// The path /proc/<pid>/cgroup shows for a directory of the hierarchy.
std::string relative(const Hierarchy& h, const std::string& dir) {
    const std::string below = dir.substr(h.mount_point.size());
    return below.empty() ? "/" : below;
}

bool has_word(const std::string& file, const std::string& word) {
    const std::vector<std::string> list = words(read_file(file));
    return std::find(list.begin(), list.end(), word) != list.end();
}

// A fresh cgroup for one test below parent_dir, removed (with the runner leaf a test child left) at the end.
class TestCgroup {
public:
    TestCgroup(const std::string& parent_dir, const std::string& name)
        : dir_(parent_dir + "/kreg-test-" + name + "-" + std::to_string(::getpid())) {
        if (::mkdir(dir_.c_str(), 0755) != 0) error_ = std::string("mkdir ") + dir_ + ": " + std::strerror(errno);
    }
    ~TestCgroup() {
        if (!runner_leaf_.empty()) ::rmdir(runner_leaf_.c_str());
        if (error_.empty()) ::rmdir(dir_.c_str());
    }
    void forget_runner(pid_t pid) { runner_leaf_ = dir_ + "/kreg-runner-" + std::to_string(pid); }
    const std::string& dir() const { return dir_; }
    const std::string& error() const { return error_; }

private:
    std::string dir_, error_, runner_leaf_;
};

bool move_into(const std::string& dir, pid_t pid) { return write_file(dir + "/cgroup.procs", std::to_string(pid)); }

TEST(WorkerCgroup, CreateSaysWhyNotOnThisMachineOrWorks) {
    const std::string mountinfo = read_file("/proc/self/mountinfo");
    const std::string v1_memory = detail::cgroup_v1_mount_of(mountinfo, "memory");
    const std::string own_before = cgroup_of(::getpid());
    // Where a cgroup above ours passes the memory controller on, the runner starts alone in a fresh cgroup
    // there, the way a runner started with systemd-run --scope would, so create() can work; else it is tried
    // where this test runs, and a refusal there is a skip with the reason.
    std::string why_not;
    const std::optional<Hierarchy> h = find_hierarchy(why_not);
    const std::string above = h && v1_memory.empty() ? parent_passing_on(*h, "memory") : "";
    std::optional<TestCgroup> alone;
    if (!above.empty()) alone.emplace(above, "create");
    const ChildOutcome outcome = in_child([&](std::string& message) {
        std::string why_not;
        if (alone && (!alone->error().empty() || !move_into(alone->dir(), ::getpid())))
            return message = "cannot start the runner alone in " + alone->dir() + " " + alone->error(), kFail;
        std::optional<WorkerCgroup> cgroup = WorkerCgroup::create(64 * kMiB, 16, why_not);
        if (!v1_memory.empty()) {
            // A v1 (or hybrid) layout: the memory controller belongs to v1, so there is no cgroup layer.
            if (cgroup)
                message = "create() made " + cgroup->path() + " although v1 holds the memory controller";
            else if (why_not.find("v1") == std::string::npos)
                message = "the reason does not name v1: " + why_not;
            else
                return message = why_not, kPass;
            return kFail;
        }
        if (!cgroup) {
            message = "WorkerCgroup::create is not available here: " + why_not;
            return kSkip;
        }
        if (cgroup->limits().find("memory.max " + std::to_string(64 * kMiB)) == std::string::npos) {
            message = "limits() says " + cgroup->limits();
            return kFail;
        }
        WaitingChild worker = start_waiting_child([] { return touch(256 * kMiB); });
        if (!cgroup->add(worker.pid, why_not)) {
            ::kill(worker.pid, SIGKILL);
            message = why_not;
            return kFail;
        }
        worker.release();
        rusage usage{};
        const int status = worker.wait(usage);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL || !cgroup->memory_limit_hit()) {
            message = "a worker touching 256 MiB under a 64 MiB cgroup was not OOM-killed";
            return kFail;
        }
        message = describe_memory_limit_hit(64 * kMiB, &*cgroup, usage.ru_maxrss) + " (" + cgroup->limits() + ")";
        return message.rfind("memory limit of 64 MiB exceeded", 0) == 0 ? kPass : kFail;
    });
    // A runner that got its cgroup layer left <its cgroup>/kreg-runner-<pid> behind when it ended.
    if (alone)
        alone->forget_runner(outcome.pid);
    else if (h)
        ::rmdir((h->own_dir + "/kreg-runner-" + std::to_string(outcome.pid)).c_str());
    if (outcome.exit_code == kSkip) GTEST_SKIP() << outcome.message;
    EXPECT_EQ(outcome.signal, 0) << outcome.message;
    EXPECT_EQ(outcome.exit_code, kPass) << outcome.message;
    EXPECT_EQ(cgroup_of(::getpid()), own_before) << "the test process itself was moved";
    std::cout << outcome.message << "\n";
}

TEST(WorkerCgroup, AddKillAllAndRemoveWithoutControllers) {
    std::string why_not;
    const std::optional<Hierarchy> h = find_hierarchy(why_not);
    if (!h) GTEST_SKIP() << "no cgroup v2 hierarchy to test in: " << why_not;
    // No controller: the cgroup still holds processes, kills them all and goes away; that part of
    // WorkerCgroup works on any cgroup v2, with or without the memory controller.
    const detail::WorkerParent parent{h->own_dir, {}, ""};
    std::optional<WorkerCgroup> cgroup = detail::create_worker_cgroup(parent, 64 * kMiB, 16, why_not);
    if (!cgroup) GTEST_SKIP() << "cannot make a cgroup in " << h->own_dir << ": " << why_not;
    const std::string path = cgroup->path();
    EXPECT_EQ(path.rfind(h->own_dir + "/kreg-worker-" + std::to_string(::getpid()) + "-", 0), 0u) << path;
    EXPECT_EQ(cgroup->limits(), "pids.max not set (no pids controller)");

    // The worker forks a grandchild: kill_all must end both.
    int ready[2];
    ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    WaitingChild worker = start_waiting_child([&] {
        if (::fork() == 0) {
            (void)!::write(ready[1], "r", 1);
            while (true) ::pause();
        }
        while (true) ::pause();
        return 0;
    });
    ::close(ready[1]);
    ASSERT_TRUE(cgroup->add(worker.pid, why_not)) << why_not;
    EXPECT_EQ(cgroup_of(worker.pid), relative(*h, path));
    worker.release();
    char byte;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1);
    ::close(ready[0]);
    EXPECT_EQ(words(read_file(path + "/cgroup.procs")).size(), 2u) << "the worker and its child";
    EXPECT_FALSE(cgroup->memory_limit_hit());

    WorkerCgroup moved = std::move(*cgroup);
    EXPECT_EQ(cgroup->path(), "");
    EXPECT_EQ(moved.path(), path);
    moved.kill_all();
    rusage usage{};
    const int status = worker.wait(usage);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    { WorkerCgroup gone = std::move(moved); }  // the grandchild must be gone too, or rmdir fails
    struct stat st {};
    EXPECT_NE(::stat(path.c_str(), &st), 0) << path << " is still there";
}

TEST(WorkerCgroup, TheRunnerMovesIntoALeafAndBackWhenOthersShareItsCgroup) {
    std::string why_not;
    const std::optional<Hierarchy> h = find_hierarchy(why_not);
    if (!h) GTEST_SKIP() << "no cgroup v2 hierarchy to test in: " << why_not;
    std::string controller, above;
    for (const char* c : {"memory", "pids", "cpu", "io", "cpuset", "hugetlb"}) {
        above = parent_passing_on(*h, c);
        if (!above.empty()) {
            controller = c;
            break;
        }
    }
    if (above.empty())
        GTEST_SKIP() << "no cgroup from " << h->own_dir << " up to " << h->mount_point
                     << " passes a controller on (every cgroup.subtree_control is empty), so the no-internal-processes"
                        " rule cannot be exercised here";
    TestCgroup test(above, "leaf");
    if (!test.error().empty()) GTEST_SKIP() << test.error();

    // test.dir() stands for the runner's own cgroup; a "shell" shares it with the runner at first.
    WaitingChild shell = start_waiting_child([] { return 0; });
    ASSERT_TRUE(move_into(test.dir(), shell.pid));
    const ChildOutcome outcome = in_child([&](std::string& message) {
        if (!move_into(test.dir(), ::getpid())) {
            message = "cannot move the runner into " + test.dir();
            return kFail;
        }
        std::string why;
        const std::string leaf = test.dir() + "/kreg-runner-" + std::to_string(::getpid());
        if (detail::prepare_worker_parent(test.dir(), {controller}, {}, why)) {
            message = "prepare_worker_parent succeeded although another process shares " + test.dir();
            return kFail;
        }
        const std::string wanted = "cannot enable the " + controller + " controller in " + test.dir() +
                                   ": Device or resource busy (1 other process share";
        struct stat st {};
        if (why.rfind(wanted, 0) != 0)
            message += "why_not is \"" + why + "\", wanted it to start with \"" + wanted + "\"\n";
        if (cgroup_of(::getpid()) != relative(*h, test.dir())) message += "the runner was not moved back\n";
        if (::stat(leaf.c_str(), &st) == 0) message += leaf + " was left behind\n";

        // The shell leaves: now the runner moves into its leaf and the controller is passed on.
        if (!move_into(h->own_dir, shell.pid)) message += "cannot move the shell out\n";
        const auto parent = detail::prepare_worker_parent(test.dir(), {controller}, {}, why);
        if (!parent) return message += "prepare_worker_parent failed alone: " + why, kFail;
        if (parent->dir != test.dir() || parent->controllers != std::vector<std::string>{controller})
            message += "the parent is " + parent->dir + " with the wrong controllers\n";
        if (cgroup_of(::getpid()) != relative(*h, leaf)) message += "the runner is in " + cgroup_of(::getpid()) + "\n";
        if (!has_word(test.dir() + "/cgroup.subtree_control", controller))
            message += controller + " is not in " + test.dir() + "/cgroup.subtree_control\n";
        std::optional<WorkerCgroup> cgroup = detail::create_worker_cgroup(*parent, 0, 0, why);
        if (!cgroup) return message += "create_worker_cgroup: " + why, kFail;
        if (!has_word(cgroup->path() + "/cgroup.controllers", controller))
            message += "the worker's cgroup does not have " + controller + "\n";
        return message.empty() ? kPass : kFail;
    });
    test.forget_runner(outcome.pid);
    shell.release();
    rusage usage{};
    shell.wait(usage);
    EXPECT_CHILD_PASSES(outcome);
}

TEST(WorkerCgroup, AWorkerOverMemoryMaxIsKilledAndTheParentCanTellWhy) {
    std::string why_not;
    const std::optional<Hierarchy> h = find_hierarchy(why_not);
    if (!h) GTEST_SKIP() << "no cgroup v2 hierarchy to test in: " << why_not;
    const std::string above = parent_passing_on(*h, "memory");
    if (above.empty())
        GTEST_SKIP() << "no cgroup from " << h->own_dir << " up to " << h->mount_point
                     << " passes the memory controller on"
                     << (detail::cgroup_v1_mount_of(read_file("/proc/self/mountinfo"), "memory").empty()
                             ? ""
                             : " (cgroup v1 holds it on this machine)");
    TestCgroup test(above, "memory");
    if (!test.error().empty()) GTEST_SKIP() << test.error();

    const ChildOutcome outcome = in_child([&](std::string& message) {
        if (!move_into(test.dir(), ::getpid())) return message = "cannot move the runner into " + test.dir(), kFail;
        std::string why;
        const auto parent = detail::prepare_worker_parent(test.dir(), {"memory"}, {"pids"}, why);
        if (!parent) return message = "prepare_worker_parent: " + why, kFail;
        const uint64_t limit = 32 * kMiB;

        // Over: 256 MiB, every page written, under memory.max of 32 MiB.
        std::optional<WorkerCgroup> cgroup = detail::create_worker_cgroup(*parent, limit, 8, why);
        if (!cgroup) return message = "create_worker_cgroup: " + why, kFail;
        if (cgroup->limits().find("memory.max 33554432") == std::string::npos)
            message += "limits() is \"" + cgroup->limits() + "\"\n";
        WaitingChild worker = start_waiting_child([] { return touch(256 * kMiB); });
        if (!cgroup->add(worker.pid, why)) {
            ::kill(worker.pid, SIGKILL);
            return message += why, kFail;
        }
        worker.release();
        rusage usage{};
        int status = worker.wait(usage);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
            message += "the worker over the limit ended with status " + std::to_string(status) + "\n";
        if (!cgroup->memory_limit_hit()) message += "memory_limit_hit() is false after the OOM kill\n";
        const std::string reason = describe_memory_limit_hit(limit, &*cgroup, usage.ru_maxrss);
        if (reason.rfind("memory limit of 32 MiB exceeded (peak ", 0) != 0) message += "reason: " + reason + "\n";

        // Under: 4 MiB, exits 0, and nothing says memory.
        std::optional<WorkerCgroup> calm = detail::create_worker_cgroup(*parent, limit, 8, why);
        if (!calm) return message += "create_worker_cgroup: " + why, kFail;
        WaitingChild modest = start_waiting_child([] { return touch(4 * kMiB); });
        if (!calm->add(modest.pid, why)) {
            ::kill(modest.pid, SIGKILL);
            return message += why, kFail;
        }
        modest.release();
        status = modest.wait(usage);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) message += "the worker under the limit failed\n";
        if (calm->memory_limit_hit()) message += "memory_limit_hit() is true for 4 MiB under 32 MiB\n";
        if (calm->peak_bytes() != 0 && calm->peak_bytes() < 4 * kMiB)
            message += "memory.peak " + std::to_string(calm->peak_bytes()) + " is below the 4 MiB written\n";
        if (!describe_memory_limit_hit(limit, &*calm, usage.ru_maxrss).empty())
            message += "describe_memory_limit_hit blames memory for the worker under the limit\n";
        message += "(" + reason + "; " + cgroup->limits() + ")";
        return message.front() == '(' ? kPass : kFail;
    });
    test.forget_runner(outcome.pid);
    EXPECT_CHILD_PASSES(outcome);
    if (outcome.exit_code == kPass) std::cout << outcome.message << "\n";
}
}  // namespace
}  // namespace kreg
