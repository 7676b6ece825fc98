#include "sandbox/confined_spawn.hpp"

#include "common/elapsed.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace kreg {
namespace {

// --- The reaper's side: after clone, a copy of a possibly multi-threaded parent, so only
// async-signal-safe calls and no allocation from here to exec. -------------------------------------

// A line for the status pipe, built in a fixed buffer.
class ReportLine {
public:
    ReportLine& add(const char* text) {
        while (*text && used_ < sizeof buffer_ - 2) buffer_[used_++] = *text++;
        return *this;
    }
    ReportLine& add(long value) {
        char digits[24];
        int n = 0;
        const bool negative = value < 0;
        unsigned long v = negative ? 0UL - static_cast<unsigned long>(value) : static_cast<unsigned long>(value);
        do {
            digits[n++] = char('0' + v % 10);
            v /= 10;
        } while (v);
        if (negative) add("-");
        while (n > 0 && used_ < sizeof buffer_ - 2) buffer_[used_++] = digits[--n];
        return *this;
    }
    ReportLine& error(const char* call, int saved_errno) {
        add(call).add(": ");
        const char* description = ::strerrordesc_np(saved_errno);
        return add(description ? description : "unknown error");
    }
    void send(int fd) {
        buffer_[used_++] = '\n';
        (void)!::write(fd, buffer_, used_);
        used_ = 0;
    }

private:
    char buffer_[512];
    size_t used_ = 0;
};

bool write_text(const char* path, const char* text) {
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const size_t length = std::strlen(text);
    const bool ok = ::write(fd, text, length) == ssize_t(length);
    ::close(fd);
    return ok;
}

// Everything the reaper needs, prepared by the parent before clone.
struct ReaperPlan {
    int sync_read = -1, sync_write = -1;      // the parent writes one byte once the reaper is placed
    int status_read = -1, status_write = -1;  // the reaper's report
    int exe_fd = -1;                          // O_PATH of the program
    int null_fd = -1;
    bool user_namespace = false;  // false: root, take the sandbox identity instead
    char uid_map[64] = {}, gid_map[64] = {};
    const std::vector<std::pair<int, int>>* fds = nullptr;
    int highest_target_fd = 2;
    const char* working_dir = nullptr;
    char tmpfs_options[96] = {};  // "" : no tmpfs over the working folder
    char* const* argv = nullptr;
    char* const* envp = nullptr;
};

[[noreturn]] void fatal(int fd, const char* call, int saved_errno) {
    ReportLine().add("fatal: ").error(call, saved_errno).send(fd);
    ::_exit(125);
}

// The program's own process (pid 2): descriptors, its own session, working folder, exec.
[[noreturn]] void exec_program(const ReaperPlan& plan) {
    ::setsid();  // its own session and group, so a group signal it sends stays among its own processes
    const int in = plan.null_fd;
    bool stdin_mapped = false;
    for (const auto& [from, to] : *plan.fds) {
        if (::dup2(from, to) < 0) fatal(plan.status_write, "dup2", errno);
        stdin_mapped = stdin_mapped || to == STDIN_FILENO;
    }
    if (!stdin_mapped && in >= 0) ::dup2(in, STDIN_FILENO);
    // From here on a failure is the program's own last words, on its stderr (the parent keeps a tail).
    if (::chdir(plan.working_dir) != 0) {
        const int saved = errno;
        ReportLine().add("kreg: cannot enter the scratch folder: ").error("chdir", saved).send(STDERR_FILENO);
        ::_exit(126);
    }
    // The exe descriptor is close-on-exec and execveat needs it open: close everything else above the
    // mapped descriptors, the status pipe included (the program must not write the reaper's report).
    // (start() puts the exe descriptor at 64 or above, the targets are below 10.)
    ::close_range(unsigned(plan.highest_target_fd + 1), unsigned(plan.exe_fd - 1), 0);
    ::close_range(unsigned(plan.exe_fd + 1), ~0U, 0);
    ::syscall(SYS_execveat, plan.exe_fd, "", plan.argv, plan.envp, AT_EMPTY_PATH);
    const int saved = errno;
    ReportLine().add("kreg: cannot start the confined program: ").error("execveat", saved).send(STDERR_FILENO);
    ::_exit(127);
}

// The reaper is a copy of the runner, and /proc/1/cmdline of its namespace is readable by the program:
// wipe the runner's command line (its folders, its rubric) and environment (KREG_SECRET_SEED) from the
// copy. Their bounds are fields 48-51 of /proc/self/stat.
void wipe_inherited_command_line() {
    char stat[4096];
    const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    const ssize_t n = ::read(fd, stat, sizeof stat - 1);
    ::close(fd);
    if (n <= 0) return;
    stat[n] = '\0';
    const char* p = std::strrchr(stat, ')');  // the name may hold spaces; fields count from after it
    if (!p) return;
    unsigned long fields[52] = {};
    int field = 2;  // p points at the end of field 2
    for (++p; *p && field < 51; ++p) {
        if (*p == ' ') {
            ++field;
            continue;
        }
        if (*p >= '0' && *p <= '9' && field < 52) fields[field] = fields[field] * 10 + unsigned(*p - '0');
    }
    for (int first : {48, 50}) {
        char* begin = reinterpret_cast<char*>(fields[first]);
        char* end = reinterpret_cast<char*>(fields[first + 1]);
        if (begin && end > begin) std::memset(begin, 0, size_t(end - begin));
    }
    if (fields[48] && fields[49] > fields[48] + 12) std::memcpy(reinterpret_cast<char*>(fields[48]), "kreg-reaper", 12);
}

// As root, the reaper becomes the sandbox's uid and gid with no supplementary groups. Raw system calls, which
// change this process alone: glibc's wrappers would change every thread of the runner's thread list, copied
// into this single-threaded process, and wait for ever on one that was being created when the clone was made
// (a runner grading with --jobs).
void take_sandbox_identity(int out) {
    if (::syscall(SYS_setgroups, 0, nullptr) != 0) fatal(out, "setgroups", errno);
    if (::syscall(SYS_setresgid, kSandboxGid, kSandboxGid, kSandboxGid) != 0) fatal(out, "setresgid", errno);
    if (::syscall(SYS_setresuid, kSandboxUid, kSandboxUid, kSandboxUid) != 0) fatal(out, "setresuid", errno);
    ReportLine()
        .add("applied: identity: uid ")
        .add(long(kSandboxUid))
        .add(" gid ")
        .add(long(kSandboxGid))
        .add(", no supplementary groups, no capabilities")
        .send(out);
    // A change of identity clears the parent-death signal: armed again, else a reaper outlives a grader killed
    // with SIGKILL, and its program with it. If the grader died between the two, the status pipe has lost its
    // only reader.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    pollfd status_pipe{out, POLLOUT, 0};
    if (::poll(&status_pipe, 1, 0) == 1 && (status_pipe.revents & POLLERR)) ::_exit(125);
}

[[noreturn]] void run_reaper(const ReaperPlan& plan) {
    const int out = plan.status_write;
    ::close(plan.sync_write);
    ::close(plan.status_read);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    char go = 0;
    ssize_t got;
    do {
        got = ::read(plan.sync_read, &go, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1) ::_exit(125);  // the parent gave up (or died) before releasing us
    ::close(plan.sync_read);
    wipe_inherited_command_line();

    if (plan.user_namespace) {
        // The grader is not dumpable, and a process that is not dumpable has its /proc files owned by
        // root: it could not write its own id maps. Dumpable only until the maps are written.
        ::prctl(PR_SET_DUMPABLE, 1);
        if (!write_text("/proc/self/uid_map", plan.uid_map)) fatal(out, "write /proc/self/uid_map", errno);
        if (::access("/proc/self/setgroups", F_OK) == 0 && !write_text("/proc/self/setgroups", "deny"))
            fatal(out, "write /proc/self/setgroups", errno);
        if (!write_text("/proc/self/gid_map", plan.gid_map)) fatal(out, "write /proc/self/gid_map", errno);
        ReportLine().add("applied: user namespace: ").add(plan.uid_map).send(out);
    }
    // Mounts made here stay here; then a /proc that shows only this PID namespace.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fatal(out, "mount(/, MS_PRIVATE)", errno);
    if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0)
        ReportLine().add("applied: fresh /proc: only this PID namespace's processes").send(out);
    else
        ReportLine().add("unavailable: fresh /proc: ").error("mount(proc)", errno).send(out);
    // Shared memory of the host's processes is out of sight (an empty, private tmpfs).
    if (::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=16m,mode=1777") == 0)
        ReportLine().add("applied: /dev/shm: an empty private tmpfs").send(out);
    else
        ReportLine().add("unavailable: /dev/shm: ").error("mount(tmpfs)", errno).send(out);
    (void)::sethostname("kreg-sandbox", 12);
    // The scratch folder as a private tmpfs of bounded size: the program's files live in memory (and in
    // its cgroup), vanish with its namespace, and cannot fill a disk.
    if (plan.tmpfs_options[0]) {
        if (::mount("tmpfs", plan.working_dir, "tmpfs", MS_NOSUID | MS_NODEV, plan.tmpfs_options) == 0)
            ReportLine().add("applied: scratch folder: a private tmpfs (").add(plan.tmpfs_options).add(")").send(out);
        else
            ReportLine().add("unavailable: scratch tmpfs: ").error("mount(tmpfs)", errno).send(out);
    }

    if (!plan.user_namespace) take_sandbox_identity(out);
    ::prctl(PR_SET_DUMPABLE, 0);

    // A raw clone, as the reaper itself was made: glibc's fork() would run the runner's pthread_atfork
    // handlers and take glibc's locks in this copy, where only async-signal-safe calls are allowed.
    const pid_t program = pid_t(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
    if (program < 0) fatal(out, "clone", errno);
    if (program == 0) exec_program(plan);
    ReportLine().add("started").send(out);

    int stopped_by = 0;
    for (;;) {
        int status = 0;
        rusage usage{};
        const pid_t r = ::wait4(-1, &status, __WALL | WUNTRACED, &usage);
        if (r < 0) {
            if (errno == EINTR) continue;
            ::_exit(0);  // no child left: nothing to report
        }
        if (r != program) continue;  // an orphan of the program, reparented to us
        if (WIFSTOPPED(status)) {    // a stopped program counts as dead
            stopped_by = WSTOPSIG(status);
            ::kill(program, SIGKILL);
            continue;
        }
        ReportLine()
            .add("exit ")
            .add(long(status))
            .add(" ")
            .add(long(stopped_by))
            .add(" ")
            .add(long(usage.ru_maxrss))
            .send(out);
        ::_exit(0);  // pid 1 ends: the kernel kills whatever the program left in the namespace
    }
}

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

// Who the program runs as inside the namespaces, where, and on what scratch file system.
void plan_identity(ReaperPlan& plan, const Confinement& c) {
    plan.user_namespace = ::geteuid() != 0;
    std::snprintf(plan.uid_map, sizeof plan.uid_map, "%u %u 1\n", unsigned(::geteuid()), unsigned(::geteuid()));
    std::snprintf(plan.gid_map, sizeof plan.gid_map, "%u %u 1\n", unsigned(::getegid()), unsigned(::getegid()));
    plan.working_dir = c.working_dir.c_str();
    if (c.working_dir_tmpfs_bytes > 0) {
        const bool root = !plan.user_namespace;
        std::snprintf(plan.tmpfs_options, sizeof plan.tmpfs_options, "size=%llu,mode=0700,uid=%u,gid=%u",
                      static_cast<unsigned long long>(c.working_dir_tmpfs_bytes),
                      unsigned(root ? kSandboxUid : ::geteuid()), unsigned(root ? kSandboxGid : ::getegid()));
    }
}

void close_plan(ReaperPlan& plan) {
    for (int* fd :
         {&plan.sync_read, &plan.sync_write, &plan.status_read, &plan.status_write, &plan.exe_fd, &plan.null_fd})
        close_fd(*fd);
}

// The pipes between this process and the reaper, the program's executable and /dev/null.
void open_plan_fds(ReaperPlan& plan, const Confinement& c) {
    int sync[2], status[2];
    if (::pipe2(sync, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("confined spawn: pipe: ") + std::strerror(errno));
    if (::pipe2(status, O_CLOEXEC) != 0) {
        ::close(sync[0]);
        ::close(sync[1]);
        throw std::runtime_error(std::string("confined spawn: pipe: ") + std::strerror(errno));
    }
    plan.sync_read = sync[0];
    plan.sync_write = sync[1];
    plan.status_read = status[0];
    plan.status_write = status[1];
    // Above every mapped target and the pipes, so the program's close_range keeps it.
    plan.exe_fd = ::open(c.executable.c_str(), O_PATH | O_CLOEXEC);
    if (plan.exe_fd >= 0) {
        const int high = ::fcntl(plan.exe_fd, F_DUPFD_CLOEXEC, 64);
        ::close(plan.exe_fd);
        plan.exe_fd = high;
    }
    plan.null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (plan.exe_fd < 0) {
        const std::string why = std::strerror(errno);
        close_plan(plan);
        throw std::runtime_error("confined spawn: cannot open " + c.executable + ": " + why);
    }
}

}  // namespace

ConfinedProcess ConfinedProcess::start(const Confinement& c,
                                       const std::function<void(platform::ProcessId)>& before_start) {
    for (const auto& [from, to] : c.fds)
        if (from < 10 || to >= 10)
            throw std::logic_error("confined spawn: descriptors must come from >= 10 and go below 10");
    ReaperPlan plan;
    plan.fds = &c.fds;
    for (const auto& mapping : c.fds) plan.highest_target_fd = std::max(plan.highest_target_fd, mapping.second);
    plan_identity(plan, c);
    std::vector<std::string> argv_storage = c.argv, env_storage = c.environment;
    std::vector<char*> argv, envp;
    for (auto& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    plan.argv = argv.data();
    plan.envp = envp.data();

    open_plan_fds(plan, c);

    unsigned long flags = SIGCHLD | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
    if (plan.user_namespace) flags |= CLONE_NEWUSER;
    const long pid = ::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) run_reaper(plan);
    if (pid < 0) {
        const std::string why = std::strerror(errno);
        close_plan(plan);
        throw std::runtime_error(
            std::string("cannot create the sandbox's namespaces: clone(NEWPID|NEWNS|NEWNET|NEWIPC|NEWUTS") +
            (plan.user_namespace ? "|NEWUSER" : "") + "): " + why);
    }

    ConfinedProcess p;
    p.reaper_ = pid_t(pid);
    p.status_fd_ = plan.status_read;
    plan.status_read = -1;
    close_fd(plan.sync_read);
    close_fd(plan.status_write);
    p.applied_.push_back(
        std::string("namespaces: PID (the program is pid 2 under a reaper), mount, network (only lo, down), IPC, UTS") +
        (plan.user_namespace ? ", user" : ""));
    try {
        if (before_start) before_start(p.reaper_);
    } catch (...) {
        close_plan(plan);
        throw;  // p's destructor kills the reaper, which is still waiting
    }
    const char go = 1;
    const bool released = ::write(plan.sync_write, &go, 1) == 1;
    close_plan(plan);
    if (!released) throw std::runtime_error("confined spawn: the reaper died before it was released");

    p.await_started();
    return p;
}

// The reaper's set-up report, up to "started" or "fatal: ...".
void ConfinedProcess::await_started() {
    ConfinedProcess& p = *this;
    const auto began = std::chrono::steady_clock::now();
    for (;;) {
        const size_t newline = p.report_.find('\n');
        if (newline != std::string::npos) {
            const std::string line = p.report_.substr(0, newline);
            p.report_.erase(0, newline + 1);
            if (line == "started") break;
            if (line.rfind("fatal: ", 0) == 0) throw std::runtime_error("cannot confine the worker: " + line.substr(7));
            if (line.rfind("applied: ", 0) == 0) p.applied_.push_back(line.substr(9));
            if (line.rfind("unavailable: ", 0) == 0) p.unavailable_.push_back(line.substr(13));
            continue;
        }
        const double left = 30.0 - seconds_since(began);
        pollfd pfd{p.status_fd_, POLLIN, 0};
        if (left <= 0 || ::poll(&pfd, 1, int(left * 1000) + 1) == 0)
            throw std::runtime_error("cannot confine the worker: its reaper did not start it within 30 s");
        char chunk[1024];
        const ssize_t n = ::read(p.status_fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error("cannot confine the worker: its reaper ended while setting up");
        p.report_.append(chunk, size_t(n));
    }
}

ConfinedProcess::ConfinedProcess(ConfinedProcess&& o) noexcept { *this = std::move(o); }

ConfinedProcess& ConfinedProcess::operator=(ConfinedProcess&& o) noexcept {
    if (this != &o) {
        if (reaper_ > 0) kill_and_reap();
        reaper_ = std::exchange(o.reaper_, -1);
        status_fd_ = std::exchange(o.status_fd_, -1);
        report_ = std::move(o.report_);
        applied_ = std::move(o.applied_);
        unavailable_ = std::move(o.unavailable_);
    }
    return *this;
}

ConfinedProcess::~ConfinedProcess() {
    if (reaper_ > 0) kill_and_reap();
    close_fd(status_fd_);
}

ConfinedExit ConfinedProcess::kill_and_reap() {
    if (reaper_ > 0) ::kill(reaper_, SIGKILL);  // pid 1 of the namespace: everything in it goes too
    return finish();
}

ConfinedExit ConfinedProcess::wait(double timeout_s) {
    const auto began = std::chrono::steady_clock::now();
    while (reaper_ > 0 && report_.find("exit ") == std::string::npos) {
        const double left = timeout_s - seconds_since(began);
        if (left <= 0) break;
        pollfd pfd{status_fd_, POLLIN, 0};
        if (::poll(&pfd, 1, int(left * 1000) + 1) <= 0) continue;
        char chunk[512];
        const ssize_t n = ::read(status_fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        report_.append(chunk, size_t(n));
    }
    return kill_and_reap();
}

ConfinedExit ConfinedProcess::finish() {
    ConfinedExit exit;
    if (reaper_ > 0) {
        int status = 0;
        while (::waitpid(reaper_, &status, __WALL) < 0 && errno == EINTR) {
        }
        reaper_ = -1;
    }
    if (status_fd_ >= 0) {  // the rest of the report (the reaper is gone: this cannot block for long)
        ::fcntl(status_fd_, F_SETFL, O_NONBLOCK);
        char chunk[512];
        ssize_t n;
        while ((n = ::read(status_fd_, chunk, sizeof chunk)) > 0) report_.append(chunk, size_t(n));
        close_fd(status_fd_);
    }
    const size_t at = report_.find("exit ");
    if (at != std::string::npos) {
        std::istringstream in(report_.substr(at + 5));
        long status = 0, stopped = 0, rss = 0;
        if (in >> status >> stopped >> rss) {
            exit.known = true;
            exit.wait_status = int(status);
            exit.stopped_by = int(stopped);
            exit.max_rss_kib = rss;
        }
    }
    return exit;
}

bool confinement_built() { return true; }

std::string why_confinement_fails(const std::string& executable) {
    std::string scratch;
    try {
        scratch = make_scratch_dir();
        const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        const int high = null_fd < 0 ? -1 : ::fcntl(null_fd, F_DUPFD_CLOEXEC, 10);
        if (null_fd >= 0) ::close(null_fd);
        Confinement c;
        c.executable = executable;
        c.argv = {executable, "--version"};
        c.environment = confined_environment(scratch, worker_environment_names());
        c.working_dir = scratch;
        if (high >= 0) c.fds = {{high, STDOUT_FILENO}, {high, STDERR_FILENO}};
        std::string why;
        try {
            ConfinedProcess p = ConfinedProcess::start(c, {});
            if (high >= 0) ::close(high);
            const ConfinedExit end = p.wait(30);
            if (!end.known)
                why = "a confined test program did not end within 30 s";
            else if (!WIFEXITED(end.wait_status) || WEXITSTATUS(end.wait_status) != 0)
                why = "a confined test program (" + executable + " --version) did not exit 0 (wait status " +
                      std::to_string(end.wait_status) + ")";
        } catch (const std::exception& e) {
            if (high >= 0) ::close(high);
            why = e.what();
        }
        remove_scratch_dir(scratch);
        return why;
    } catch (const std::exception& e) {
        remove_scratch_dir(scratch);
        return e.what();
    }
}

const std::vector<std::string>& worker_environment_names() {
    static const std::vector<std::string> names{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "LD_LIBRARY_PATH",
                                                // CUDA's device selection and loading, never its tools' tokens
                                                "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_MODULE_LOADING",
                                                "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"};
    return names;
}

const std::vector<std::string>& build_environment_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n = worker_environment_names();
        for (const char* name : {"CC", "CXX", "CUDACXX", "CUDAHOSTCXX", "CUDA_PATH", "CUDA_HOME", "CUDAARCHS", "CFLAGS",
                                 "CXXFLAGS", "CUDAFLAGS", "LDFLAGS", "CMAKE_GENERATOR", "CMAKE_BUILD_PARALLEL_LEVEL"})
            n.push_back(name);
        return n;
    }();
    return names;
}

std::vector<std::string> confined_environment(const std::string& scratch, const std::vector<std::string>& pass) {
    std::vector<std::string> env;
    for (const std::string& name : pass)
        if (const char* value = std::getenv(name.c_str())) env.push_back(name + "=" + value);
    env.push_back("HOME=" + scratch);
    env.push_back("TMPDIR=" + scratch);
    env.push_back("CUDA_CACHE_PATH=" + scratch + "/.nv");
    return env;
}

std::string make_scratch_dir(const std::string& base) {
    namespace fs = std::filesystem;
    std::string parent = base;
    if (parent.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        parent = tmp && *tmp ? tmp : "/tmp";
    }
    std::string pattern = (fs::path(parent) / "kreg-scratch-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("cannot create a scratch folder in " + parent + ": " + std::strerror(errno));
    if (::geteuid() == 0 && ::chown(pattern.c_str(), kSandboxUid, kSandboxGid) != 0) {
        const std::string why = std::strerror(errno);
        remove_scratch_dir(pattern);
        throw std::runtime_error("cannot hand the scratch folder " + pattern + " to uid " +
                                 std::to_string(kSandboxUid) + ": " + why);
    }
    return pattern;
}

std::string make_scratch_subdir(const std::string& scratch, const std::string& name) {
    const std::string path = scratch + "/" + name;
    if (::mkdir(path.c_str(), 0700) != 0)
        throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
    if (::geteuid() == 0 && ::chown(path.c_str(), kSandboxUid, kSandboxGid) != 0)
        throw std::runtime_error("cannot hand " + path + " to uid " + std::to_string(kSandboxUid) + ": " +
                                 std::strerror(errno));
    return path;
}

void remove_scratch_dir(const std::string& path) {
    if (path.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
}

}  // namespace kreg
