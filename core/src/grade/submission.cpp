#include "grade/submission.hpp"

#include "grade/gradebook.hpp"
#include "worker/process.hpp"

#include <kreg/abi.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kreg {
namespace fs = std::filesystem;

std::vector<Submission> find_submissions(const std::vector<fs::path>& files, const std::optional<fs::path>& directory,
                                         std::vector<std::string>& ignored) {
    std::vector<Submission> out;
    for (const auto& f : files) out.push_back({student_id_from_path(f), f, fs::is_directory(f)});
    if (directory) {
        if (!fs::is_directory(*directory)) throw std::runtime_error(directory->string() + ": not a folder of submissions");
        for (const auto& entry : fs::directory_iterator(*directory)) {
            const fs::path p = entry.path();
            if (entry.is_directory() && fs::exists(p / "CMakeLists.txt"))
                out.push_back({student_id_from_path(p), p, true});
            else if (entry.is_regular_file() && p.extension() == ".so")
                out.push_back({student_id_from_path(p), p, false});
            else
                ignored.push_back(p.string() + ": neither a .so nor a folder with a CMakeLists.txt");
        }
    }
    std::sort(out.begin(), out.end(), [](const Submission& a, const Submission& b) { return a.student < b.student; });
    for (size_t i = 1; i < out.size(); ++i)
        if (out[i].student == out[i - 1].student)
            throw std::runtime_error("two submissions for student '" + out[i].student + "': " + out[i - 1].path.string() +
                                     " and " + out[i].path.string());
    return out;
}

namespace {

// Runs argv in a sandboxed child with stdout+stderr appended to log; returns "" on exit 0, else why.
std::string run_sandboxed(const std::vector<std::string>& argv, const fs::path& log, double timeout_s,
                          const SandboxPolicy& policy) {
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return "cannot write " + log.string() + ": " + std::strerror(errno);
    std::vector<std::string> storage = argv;
    std::vector<char*> args;
    for (auto& a : storage) args.push_back(a.data());
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) return std::string("fork: ") + std::strerror(errno);
    if (pid == 0) {
        ::setpgid(0, 0);
        ::dup2(log_fd, STDOUT_FILENO);
        ::dup2(log_fd, STDERR_FILENO);
        const int null_fd = ::open("/dev/null", O_RDONLY);
        if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
        // Not async-signal-safe territory any more, but this child only ever execs: acceptable here.
        try {
            SandboxPolicy build_policy = policy;
            build_policy.cpu_seconds = timeout_s + 5;
            harden_before_load(build_policy);
        } catch (const std::exception& e) {
            const std::string msg = std::string("kreg: sandbox: ") + e.what() + "\n";
            (void)!::write(STDERR_FILENO, msg.data(), msg.size());
            ::_exit(126);
        }
        ::execvp(args[0], args.data());
        const std::string msg = std::string("kreg: cannot run ") + args[0] + ": " + std::strerror(errno) + "\n";
        (void)!::write(STDERR_FILENO, msg.data(), msg.size());
        ::_exit(127);
    }
    ::close(log_fd);
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            ::kill(-pid, SIGKILL);  // anything the build left behind in its group
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
            if (WIFEXITED(status)) return argv[0] + " " + argv[1] + " exited with code " + std::to_string(WEXITSTATUS(status));
            return argv[0] + " killed by " + signal_name(WTERMSIG(status));
        }
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
            ::kill(-pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return "build exceeded its time limit of " + std::to_string(int(timeout_s)) + " s; killed";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

std::string tail_of(const fs::path& file, size_t max_chars) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    std::string text = s.str();
    if (text.size() > max_chars) text = "..." + text.substr(text.size() - max_chars);
    return text;
}

bool exports_entry_point(const fs::path& so) {
    std::ifstream in(so, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return bytes.find(KREG_ENTRY_POINT_NAME) != std::string::npos;
}

}  // namespace

BuildResult build_submission(const fs::path& source_dir, const fs::path& build_dir, const fs::path& kreg_prefix,
                             double timeout_s, const SandboxPolicy& policy) {
    BuildResult result;
    const auto start = std::chrono::steady_clock::now();
    std::error_code ec;
    fs::remove_all(build_dir, ec);
    fs::create_directories(build_dir);
    const fs::path log = build_dir.parent_path() / (build_dir.filename().string() + ".build.log");
    fs::remove(log, ec);
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

    std::string why = run_sandboxed({"cmake", "-S", fs::absolute(source_dir).string(), "-B", fs::absolute(build_dir).string(),
                                     "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + fs::absolute(kreg_prefix).string()},
                                    log, timeout_s, policy);
    if (why.empty())
        why = run_sandboxed({"cmake", "--build", fs::absolute(build_dir).string(), "-j2"}, log,
                            std::max(1.0, timeout_s - elapsed()), policy);
    result.seconds = elapsed();
    result.log_tail = tail_of(log, 2000);
    if (!why.empty()) {
        result.reason = why;
        return result;
    }
    std::vector<fs::path> plugins;
    for (const auto& entry : fs::recursive_directory_iterator(build_dir, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".so" && exports_entry_point(entry.path()))
            plugins.push_back(entry.path());
    if (plugins.size() != 1) {
        result.reason = plugins.empty() ? "the build produced no kreg plugin (.so with " KREG_ENTRY_POINT_NAME ")"
                                        : "the build produced " + std::to_string(plugins.size()) + " kreg plugins; submit one";
        return result;
    }
    result.ok = true;
    result.plugin = plugins.front();
    return result;
}

}  // namespace kreg
