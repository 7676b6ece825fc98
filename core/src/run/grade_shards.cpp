#include "run/grade_shards.hpp"

#include "run/device_lanes.hpp"
#include "merge/gradebook_shard.hpp"
#include "sweep/executor.hpp"
#include "worker/stop_request.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace kreg {
namespace fs = std::filesystem;

namespace {

struct Child {
    pid_t pid = -1;
    int output = -1;  // its stdout and stderr
};

// Starts argv with CUDA_VISIBLE_DEVICES=uuid (none: the environment's own) and extra added to our environment,
// its output into a pipe.
Child start_child(const std::vector<std::string>& argv, const std::string& uuid,
                  const std::vector<std::string>& extra = {}) {
    std::vector<std::string> env_storage;
    for (char** e = environ; *e != nullptr; ++e)
        if (uuid.empty() || std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env_storage.emplace_back(*e);
    if (!uuid.empty()) env_storage.push_back("CUDA_VISIBLE_DEVICES=" + uuid);
    env_storage.insert(env_storage.end(), extra.begin(), extra.end());
    std::vector<char*> envp, args;
    for (auto& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_storage = argv;
    for (auto& a : argv_storage) args.push_back(a.data());
    args.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {  // only async-signal-safe calls until exec
        ::dup2(fds[1], STDOUT_FILENO);
        ::dup2(fds[1], STDERR_FILENO);
        ::execve(args[0], args.data(), envp.data());
        const char msg[] = "runner grade: cannot start a grading shard (exec failed)\n";
        (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
        ::_exit(127);
    }
    ::close(fds[1]);
    return {pid, fds[0]};
}

// Copies a child's output to our stderr line by line, each line marked with its device.
void relay(int fd, const std::string& mark, std::mutex& lock) {
    std::string pending;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        pending.append(buf, size_t(n));
        size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
            std::lock_guard<std::mutex> g(lock);
            std::cerr << mark << pending.substr(0, nl + 1);
            pending.erase(0, nl + 1);
        }
    }
    if (!pending.empty()) {
        std::lock_guard<std::mutex> g(lock);
        std::cerr << mark << pending << "\n";
    }
    ::close(fd);
}

int wait_status(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 3;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

int grade_on_devices(const DevicesSpec& devices, const std::vector<std::string>& grade_args, const fs::path& out,
                     const fs::path& runner_exe) {
    // Describing the GPUs runs only kreg's own code, in ordinary workers.
    ExecutorOptions probe_options;
    probe_options.runner_exe = runner_exe.string();
    Executor probe(probe_options);
    std::string why;
    const std::vector<DeviceLane> lanes = resolve_device_lanes(devices, probe, why);
    if (!why.empty()) {
        std::cerr << "runner grade: " << why << "\n";
        return why.rfind("--devices", 0) == 0 ? 2 : 3;
    }
    std::cerr << "runner grade: grading on " << lanes.size() << " GPU(s) at once, one shard each, into " << out.string()
              << "\n";
    std::vector<GradeShardLane> shards;
    for (const DeviceLane& lane : lanes)
        shards.push_back({lane.uuid, "[device " + std::to_string(lane.ordinal) + "] "});
    return grade_in_shards(shards, grade_args, out, runner_exe, {});
}

int grade_with_jobs(int jobs, const std::vector<std::string>& grade_args, const fs::path& out,
                    const fs::path& runner_exe) {
    std::cerr << "runner grade: grading " << jobs
              << " submissions at once (timed tiers one at a time), one shard each, into " << out.string() << "\n";
    std::vector<GradeShardLane> shards;
    for (int i = 0; i < jobs; ++i) shards.push_back({"", "[job " + std::to_string(i + 1) + "] "});
    std::error_code ec;
    fs::create_directories(out, ec);
    return grade_in_shards(shards, grade_args, out, runner_exe,
                           {std::string(kTimedTierLockVariable) + "=" + (out / ".timed-tiers.lock").string()});
}

int grade_in_shards(const std::vector<GradeShardLane>& lanes, const std::vector<std::string>& grade_args,
                    const fs::path& out, const fs::path& runner_exe, const std::vector<std::string>& environment) {
    const int k = int(lanes.size());
    install_stop_handlers();  // Ctrl-C reaches the shards too: wait for them to say how far they got

    std::mutex lock;
    std::vector<Child> children;
    std::vector<std::thread> relays;
    int start_failure = 0;
    for (int i = 0; i < k; ++i) {
        std::vector<std::string> argv{runner_exe.string(), "grade"};
        argv.insert(argv.end(), grade_args.begin(), grade_args.end());
        argv.insert(argv.end(), {"--shard", std::to_string(i + 1) + "/" + std::to_string(k)});
        try {
            children.push_back(start_child(argv, lanes[i].uuid, environment));
        } catch (const std::exception& e) {
            std::cerr << "runner grade: cannot start the shard " << lanes[i].mark << ": " << e.what() << "\n";
            start_failure = 3;
            break;
        }
        relays.emplace_back(relay, children.back().output, lanes[i].mark, std::ref(lock));
    }
    std::vector<int> statuses;
    for (auto& c : children) statuses.push_back(wait_status(c.pid));
    for (auto& t : relays) t.join();
    if (start_failure) return start_failure;
    if (stop_requested()) {  // each shard said how far it got; what they finished stays in their folders
        std::cerr
            << "runner grade: interrupted; nothing merged. Run the same command again: every shard keeps its finished "
               "students and grades the rest, then all are merged into "
            << out.string() << "\n";
        return 128 + stop_signal();
    }

    int worst_setup = 0;  // 2 or 3: a shard could not grade at all (bad rubric, no confinement, ...)
    bool unfinished = false, below = false;
    for (int i = 0; i < k; ++i) {
        const int s = statuses[size_t(i)];
        if (s == 2 || s == 3 || s > 4) worst_setup = std::max(worst_setup, s == 2 ? 2 : 3);
        if (s == 1) unfinished = true;
        if (s == 4) below = true;
    }
    if (worst_setup) {
        std::cerr << "runner grade: a shard could not grade (exit statuses:";
        for (int s : statuses) std::cerr << " " << s;
        std::cerr << "); nothing merged\n";
        return worst_setup;
    }

    std::vector<std::string> merge{runner_exe.string(), "merge",   "--expect",
                                   std::to_string(k),   "--force", out.string()};
    for (int i = 0; i < k; ++i) merge.push_back(gradebook_shard_dir(out, i + 1, k).string());
    const Child m = start_child(merge, lanes.front().uuid);
    std::thread merge_relay(relay, m.output, std::string(), std::ref(lock));
    const int merged = wait_status(m.pid);
    merge_relay.join();
    if (merged != 0) return merged;
    std::cout << "gradebook: " << (out / "gradebook.csv").string() << "\n";
    if (fs::exists(out / "index.html"))  // the merged class page, as a run without shards names it
        std::cout << "class page: " << (out / "index.html").string()
                  << " (feedback: " << (out / "student-view").string() << "/)\n";
    return unfinished ? 1 : below ? 4 : 0;
}

}  // namespace kreg
