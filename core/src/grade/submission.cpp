#include "grade/submission.hpp"

#include "grade/compiler_error.hpp"
#include "grade/gradebook.hpp"
#include "common/library_format.hpp"
#include "sandbox/confined_spawn.hpp"
#include "sandbox/memory_limit.hpp"
#include "sandbox/policy_json.hpp"
#include "worker/process.hpp"

#include <kreg/abi.h>

#include <fcntl.h>
#include <sys/stat.h>
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

namespace {

struct BuildSandbox {
    std::string runner_exe;
    std::string scratch;
    SandboxPolicy policy;
};

// One step of the build (cmake configure or build), confined like a worker (sandbox/confined_spawn.hpp:
// its own namespaces and identity, an allow-listed environment) and hardened by the runner re-executed as
// `__sandboxed_exec` (Landlock: writes only in the build's scratch folder; rlimits; seccomp stage 1) before
// it becomes cmake. stdout and stderr go to log. "" on exit 0, else why.
std::string run_build_step(const BuildSandbox& box, const std::vector<std::string>& command, const fs::path& log,
                           double timeout_s) {
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return "cannot write " + log.string() + ": " + std::strerror(errno);
    const int high = ::fcntl(log_fd, F_DUPFD_CLOEXEC, 10);
    ::close(log_fd);
    if (high < 0) return std::string("fcntl: ") + std::strerror(errno);

    SandboxPolicy policy = box.policy;
    policy.cpu_seconds = timeout_s + 5;
    Confinement c;
    c.executable = box.runner_exe;
    c.argv = {box.runner_exe, "__sandboxed_exec", "--sandbox", nlohmann::json(policy).dump(), "--"};
    c.argv.insert(c.argv.end(), command.begin(), command.end());
    c.environment = confined_environment(box.scratch, build_environment_names());
    c.working_dir = box.scratch;
    c.fds = {{high, STDOUT_FILENO}, {high, STDERR_FILENO}};
    std::optional<WorkerCgroup> cgroup;
    std::string no_cgroup;
    if (policy.memory_bytes > 0) cgroup = WorkerCgroup::create(policy.memory_bytes, policy.max_processes, no_cgroup);
    std::string why;
    try {
        ConfinedProcess step = ConfinedProcess::start(c, [&](platform::ProcessId reaper) {
            std::string ignored;
            if (cgroup && !cgroup->add(reaper, ignored)) cgroup.reset();
        });
        ::close(high);
        const ConfinedExit end = step.wait(timeout_s);
        const std::string what = command[0] + " " + command[1];
        if (!end.known)
            why = "build exceeded its time limit of " + std::to_string(int(timeout_s)) + " s; killed";
        else if (end.stopped_by)
            why = what + " was stopped by " + signal_name(end.stopped_by) + "; killed";
        else if (WIFEXITED(end.wait_status) && WEXITSTATUS(end.wait_status) == 0)
            why = "";
        else if (WIFEXITED(end.wait_status))
            why = what + " exited with code " + std::to_string(WEXITSTATUS(end.wait_status));
        else
            why = what + " killed by " + signal_name(WTERMSIG(end.wait_status));
        if (!why.empty()) {
            const std::string memory =
                describe_memory_limit_hit(policy.memory_bytes, cgroup ? &*cgroup : nullptr, end.max_rss_kib);
            if (!memory.empty()) why = memory + "; " + why;
        }
    } catch (const std::exception& e) {
        ::close(high);
        why = std::string("cannot start the build sandbox: ") + e.what();
    }
    return why;
}

// What a build against the kreg package at prefix reads: the prefix, and every absolute path its CMake
// package files name (a build tree's package points into the source tree for headers and helpers).
std::vector<std::string> sdk_paths(const fs::path& prefix) {
    std::vector<std::string> paths{fs::absolute(prefix).string()};
    std::error_code ec;
    for (const auto& entry : fs::recursive_directory_iterator(prefix, ec)) {
        if (!entry.is_regular_file() || entry.path().extension() != ".cmake") continue;
        if (entry.path().parent_path().filename() != "kreg") continue;  // <prefix>/lib/cmake/kreg/*.cmake
        std::ifstream in(entry.path());
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        for (size_t at = 0; (at = text.find("\"/", at)) != std::string::npos;) {
            const size_t end = text.find('"', at + 1);
            if (end == std::string::npos) break;
            const std::string path = text.substr(at + 1, end - at - 1);
            at = end + 1;
            if (path.find('$') == std::string::npos && fs::exists(path, ec) &&
                std::find(paths.begin(), paths.end(), path) == paths.end())
                paths.push_back(path);
        }
    }
    return paths;
}

// As root the build runs as kSandboxUid, which reads only what any user may: "" when every folder on
// the way to path lets others through and path itself lets others read, else the first that does not.
std::string unreadable_by_others(const fs::path& path) {
    if (::geteuid() != 0) return "";
    fs::path walked;
    for (const fs::path& part : fs::absolute(path)) {
        walked /= part;
        struct stat st {};
        if (::stat(walked.c_str(), &st) != 0) return walked.string() + ": " + std::strerror(errno);
        const bool folder = S_ISDIR(st.st_mode);
        const bool last = walked == fs::absolute(path);
        if (folder && !(st.st_mode & S_IXOTH)) return walked.string() + " (others may not enter it)";
        if (last && !(st.st_mode & S_IROTH)) return walked.string() + " (others may not read it)";
    }
    return "";
}

// Makes path and everything below it the sandbox identity's (when root), so the build can read its copy.
void hand_over_tree(const fs::path& path) {
    if (::geteuid() != 0) return;
    std::error_code ec;
    ::lchown(path.c_str(), kSandboxUid, kSandboxGid);
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        ::lchown(it->path().c_str(), kSandboxUid, kSandboxGid);
}

std::string tail_of(const fs::path& file, size_t max_chars) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    std::string text = s.str();
    if (text.size() > max_chars) text = "..." + text.substr(text.size() - max_chars);
    return text;
}

// The first error of the whole log (the tail may have lost it behind follow-on errors), with the scratch
// folder's path taken out so that it names the files as the student's folder has them.
std::string first_error_of(const fs::path& file, const std::string& sources_prefix) {
    std::ifstream in(file);
    std::string text(std::size_t(4) << 20, '\0');
    in.read(text.data(), std::streamsize(text.size()));
    text.resize(std::size_t(in.gcount()));
    for (std::size_t at = text.find(sources_prefix); at != std::string::npos; at = text.find(sources_prefix, at))
        text.erase(at, sources_prefix.size());
    return first_compiler_error(text);
}

bool exports_entry_point(const fs::path& so) {
    std::ifstream in(so, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return bytes.find(KREG_ENTRY_POINT_NAME) != std::string::npos;
}

}  // namespace

BuildResult build_submission(const fs::path& source_dir, const fs::path& build_dir, const fs::path& kreg_prefix,
                             double timeout_s, const SandboxPolicy& policy, const std::string& runner_exe) {
    BuildResult result;
    const auto start = std::chrono::steady_clock::now();
    std::error_code ec;
    fs::remove_all(build_dir, ec);
    fs::create_directories(build_dir);
    const fs::path log = build_dir.parent_path() / (build_dir.filename().string() + ".build.log");
    fs::remove(log, ec);
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

    // The build happens in a scratch folder of its own, on a copy of the sources: it can write nowhere
    // else, and it never sees the folder that holds the other submissions.
    BuildSandbox box;
    box.runner_exe = runner_exe;
    try {
        box.scratch = make_scratch_dir();
        fs::copy(source_dir, fs::path(box.scratch) / "src",
                 fs::copy_options::recursive | fs::copy_options::skip_symlinks);
        hand_over_tree(box.scratch);
    } catch (const std::exception& e) {
        remove_scratch_dir(box.scratch);
        result.reason = std::string("cannot prepare the build: ") + e.what();
        return result;
    }
    box.policy = policy;
    box.policy.network_namespace = false;  // the spawn made one already
    box.policy.scratch_dir = box.scratch;
    box.policy.readable_paths = sdk_paths(kreg_prefix);
    for (const std::string& path : box.policy.readable_paths)
        if (const std::string why = unreadable_by_others(path); !why.empty()) {
            remove_scratch_dir(box.scratch);
            result.reason = "the build runs as uid " + std::to_string(kSandboxUid) +
                            ", which cannot read the kreg SDK: " + why +
                            " (install kreg where any user can read it, e.g. under /usr or /opt)";
            return result;
        }
    box.policy.max_processes = std::max<uint64_t>(policy.max_processes, 512);  // make -j and the compilers
    const std::string src = box.scratch + "/src", out = box.scratch + "/build";

    std::string why = run_build_step(box,
                                     {"cmake", "-S", src, "-B", out, "-DCMAKE_BUILD_TYPE=Release",
                                      "-DCMAKE_PREFIX_PATH=" + fs::absolute(kreg_prefix).string()},
                                     log, timeout_s);
    if (why.empty())
        why = run_build_step(box, {"cmake", "--build", out, "-j2"}, log, std::max(1.0, timeout_s - elapsed()));
    result.seconds = elapsed();
    result.log_tail = tail_of(log, 2000);
    result.first_error = first_error_of(log, src + "/");
    std::vector<fs::path> plugins;
    if (why.empty()) {
        for (const auto& entry : fs::recursive_directory_iterator(out, ec))
            if (entry.is_regular_file() && !entry.is_symlink() && entry.path().extension() == ".so" &&
                exports_entry_point(entry.path()))
                plugins.push_back(entry.path());
        if (plugins.size() != 1)
            why = plugins.empty()
                      ? "the build produced no kreg plugin (.so with " KREG_ENTRY_POINT_NAME ")"
                      : "the build produced " + std::to_string(plugins.size()) + " kreg plugins; submit one";
    }
    if (why.empty()) {
        result.plugin = build_dir / plugins.front().filename();
        fs::copy_file(plugins.front(), result.plugin, fs::copy_options::overwrite_existing, ec);
        if (ec) why = "cannot copy the built plugin to " + result.plugin.string() + ": " + ec.message();
    }
    remove_scratch_dir(box.scratch);
    result.reason = why;
    result.ok = why.empty();
    return result;
}

}  // namespace kreg
