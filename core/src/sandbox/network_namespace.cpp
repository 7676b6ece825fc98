#include "sandbox/network_namespace.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace kreg {
namespace {

std::string write_file(const char* path, const std::string& content) {
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return std::string(path) + ": " + std::strerror(errno);
    const ssize_t n = ::write(fd, content.data(), content.size());
    const int saved = errno;
    ::close(fd);
    if (n != ssize_t(content.size())) return std::string(path) + ": " + std::strerror(n < 0 ? saved : EIO);
    return "";
}

// Inside a fresh user namespace every id reads as the overflow id until mapped; map our own ids to themselves.
std::string map_own_ids(uid_t uid, gid_t gid) {
    std::string error = write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n");
    if (!error.empty()) return error;
    if (::access("/proc/self/setgroups", F_OK) == 0) {  // Linux >= 3.19: required before an unprivileged gid_map
        error = write_file("/proc/self/setgroups", "deny\n");
        if (!error.empty()) return error;
    }
    return write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n");
}

std::string unshare_error(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

}  // namespace

void enter_network_namespace(SandboxReport& report) {
    if (::unshare(CLONE_NEWNET) == 0) {
        report.applied.push_back("network namespace: unshare(CLONE_NEWNET), only lo (down)");
        return;
    }
    const std::string first = unshare_error("unshare(CLONE_NEWNET)");

    int death_signal = 0;
    ::prctl(PR_GET_PDEATHSIG, &death_signal, 0, 0, 0);
    const pid_t parent = ::getppid();
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
        report.unavailable.push_back("network namespace: " + first + "; " +
                                     unshare_error("unshare(CLONE_NEWUSER|CLONE_NEWNET)"));
        return;
    }
    // Changing user namespace cleared the parent-death signal; restore it, and honour a death we missed.
    if (death_signal != 0) {
        ::prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0);
        if (::getppid() != parent) ::kill(::getpid(), death_signal);
    }
    report.applied.push_back("network namespace: unshare(CLONE_NEWUSER|CLONE_NEWNET), only lo (down), after " + first);
    const std::string map_error = map_own_ids(uid, gid);
    if (map_error.empty())
        report.applied.push_back("user namespace: uid " + std::to_string(uid) + " and gid " + std::to_string(gid) +
                                 " mapped to themselves");
    else
        report.unavailable.push_back("user namespace: id map not written (ids read as the overflow id): " + map_error);
}

}  // namespace kreg
