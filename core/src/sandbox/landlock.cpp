#include "sandbox/landlock.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

// Debian 12's kernel headers stop at ABI 2; the newer rights and the newer fields of the ruleset
// attribute are declared here with the kernel's values (include/uapi/linux/landlock.h).
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

namespace kreg {
namespace {

// struct landlock_ruleset_attr as of ABI 6; the kernel is told how much of it the ABI knows.
struct RulesetAttr {
    uint64_t handled_access_fs = 0;   // ABI 1
    uint64_t handled_access_net = 0;  // ABI 4
    uint64_t scoped = 0;              // ABI 6
};

size_t ruleset_attr_size(int abi) {
    if (abi >= 6) return sizeof(RulesetAttr);
    if (abi >= 4) return offsetof(RulesetAttr, scoped);
    return offsetof(RulesetAttr, handled_access_net);
}

constexpr uint64_t kFileRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE;
constexpr uint64_t kTreeRead = kFileRead | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr uint64_t kDeviceReadWrite =
    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV;
// The rights the kernel accepts in a rule on a file rather than a folder.
constexpr uint64_t kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                 LANDLOCK_ACCESS_FS_IOCTL_DEV;

// Every file-system right the ABI knows (`man 7 landlock`, "compatibility"): REFER came with ABI 2,
// TRUNCATE with 3, IOCTL_DEV with 5. Handling them all makes each one denied unless a rule grants it.
uint64_t fs_rights_of(int abi) {
    uint64_t rights = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // EXECUTE .. MAKE_SYM, ABI 1
    if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5) rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return rights;
}

const char* const kSystemFolders[] = {"/usr",  "/lib", "/lib32", "/lib64", "/libx32", "/bin",
                                      "/sbin", "/etc", "/opt",   "/proc",  "/sys"};
const char* const kPlainDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};

bool is_char_device(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// /dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm, ... and the devices in /dev/nvidia-caps/ and similar.
std::vector<std::string> nvidia_devices() {
    std::vector<std::string> found;
    auto each_entry = [](const std::string& folder, auto&& visit) {
        if (DIR* dir = ::opendir(folder.c_str())) {
            while (const dirent* entry = ::readdir(dir)) visit(folder + "/" + entry->d_name, entry->d_name);
            ::closedir(dir);
        }
    };
    each_entry("/dev", [&](const std::string& path, const char* name) {
        if (std::strncmp(name, "nvidia", 6) != 0) return;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) return;
        if (S_ISCHR(st.st_mode)) found.push_back(path);
        if (S_ISDIR(st.st_mode))
            each_entry(path, [&](const std::string& inner, const char*) {
                if (is_char_device(inner)) found.push_back(inner);
            });
    });
    std::sort(found.begin(), found.end());
    return found;
}

int count_other_threads() {
    int threads = 0;
    if (DIR* dir = ::opendir("/proc/self/task")) {
        while (const dirent* entry = ::readdir(dir)) threads += entry->d_name[0] != '.';
        ::closedir(dir);
    }
    return threads > 0 ? threads - 1 : 0;
}

class Ruleset {
public:
    Ruleset(int fd, uint64_t handled) : fd_(fd), handled_(handled) {}
    ~Ruleset() { ::close(fd_); }
    Ruleset(const Ruleset&) = delete;
    Ruleset& operator=(const Ruleset&) = delete;

    // Grants rights beneath path (or on it, for a file: folder-only rights are dropped). Returns "" or why not.
    std::string allow(const std::string& path, uint64_t rights) {
        const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
        if (fd < 0) return path + ": " + std::strerror(errno);
        struct stat st {};
        std::string error;
        if (::fstat(fd, &st) != 0) error = path + ": fstat: " + std::strerror(errno);
        if (error.empty()) {
            landlock_path_beneath_attr rule{};
            rule.allowed_access = rights & handled_ & (S_ISDIR(st.st_mode) ? ~uint64_t(0) : kFileRights);
            rule.parent_fd = fd;
            if (::syscall(SYS_landlock_add_rule, fd_, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
                error = path + ": landlock_add_rule: " + std::strerror(errno);
        }
        ::close(fd);
        return error;
    }
    int fd() const { return fd_; }

private:
    int fd_;
    uint64_t handled_;
};

std::string joined(const std::vector<std::string>& items, const char* separator) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : separator) + item;
    return text;
}

}  // namespace

int landlock_abi() {
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : int(abi);
}

LandlockOutcome apply_landlock(const SandboxPolicy& policy) {
    LandlockOutcome out;
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi <= 0) {
        const int e = errno;
        out.detail = abi == 0          ? "the kernel reports ABI 0"
                     : e == ENOSYS     ? "not in this kernel (landlock_create_ruleset: ENOSYS; Linux >= 5.13 has it)"
                     : e == EOPNOTSUPP ? "built in but not enabled at boot (EOPNOTSUPP; add landlock to lsm=)"
                                       : std::string("landlock_create_ruleset: ") + std::strerror(e);
        return out;
    }
    out.abi = int(abi);

    RulesetAttr attr;
    attr.handled_access_fs = fs_rights_of(out.abi);
    // A handled network right without a rule is denied: no TCP bind or connect (socket() denies the rest).
    if (out.abi >= 4) attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
    if (out.abi >= 6) attr.scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
    const long ruleset_fd = ::syscall(SYS_landlock_create_ruleset, &attr, ruleset_attr_size(out.abi), 0);
    if (ruleset_fd < 0) {
        out.detail = "ABI " + std::to_string(abi) + ", landlock_create_ruleset: " + std::strerror(errno);
        return out;
    }
    Ruleset ruleset(int(ruleset_fd), attr.handled_access_fs);

    std::vector<std::string> readable, devices, problems;
    for (const char* folder : kSystemFolders) {
        if (::access(folder, F_OK) != 0) continue;  // /lib32 and /libx32 are often missing
        const std::string error = ruleset.allow(folder, kTreeRead);
        (error.empty() ? readable : problems).push_back(error.empty() ? folder : error);
    }
    for (const std::string& path : policy.readable_paths) {
        const std::string error = ruleset.allow(path, kTreeRead);
        (error.empty() ? readable : problems).push_back(error.empty() ? path : error);
    }
    // /dev is listed, not read: reading beneath it would reach raw disks, /dev/shm and terminals.
    const std::string dev_error = ruleset.allow("/dev", LANDLOCK_ACCESS_FS_READ_DIR);
    if (!dev_error.empty()) problems.push_back(dev_error);
    std::vector<std::string> device_paths(std::begin(kPlainDevices), std::end(kPlainDevices));
    for (std::string& path : nvidia_devices()) device_paths.push_back(std::move(path));
    for (const std::string& path : device_paths) {
        if (!is_char_device(path)) continue;
        const std::string error = ruleset.allow(path, kDeviceReadWrite);
        (error.empty() ? devices : problems).push_back(error.empty() ? path : error);
    }
    // The CUDA driver writes files of its own threads (beneath /proc/<pid>/task: cuInit fails with
    // CUDA_ERROR_OPERATING_SYSTEM without it, measured on the H200). Only this process's own entries, and
    // only writing to files that exist.
    const std::string own_tasks =
        ruleset.allow("/proc/self/task", LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE);
    if (!own_tasks.empty()) problems.push_back(own_tasks);
    std::string writable = "none";
    if (!policy.scratch_dir.empty()) {
        const std::string error = ruleset.allow(policy.scratch_dir, attr.handled_access_fs);
        if (error.empty())
            writable = policy.scratch_dir;
        else
            writable = "none (" + error + ")";
    }

    // restrict_self needs no_new_privs (or CAP_SYS_ADMIN); the worker has set it already, a build child
    // about to exec needs it anyway (no setuid binary may regain what this takes away).
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        out.detail = "ABI " + std::to_string(abi) + ", prctl(PR_SET_NO_NEW_PRIVS): " + std::strerror(errno);
        return out;
    }
    const int other_threads = count_other_threads();
    if (::syscall(SYS_landlock_restrict_self, ruleset.fd(), 0) != 0) {
        out.detail = "ABI " + std::to_string(abi) + ", landlock_restrict_self: " + std::strerror(errno);
        return out;
    }
    out.applied = true;
    out.detail = "ABI " + std::to_string(abi) + ", read-only: " + joined(readable, " ") +
                 ", read-write devices: " + joined(devices, " ") +
                 ", its own /proc/self/task files, writable: " + writable;
    out.detail += out.abi >= 4 ? "; TCP bind/connect denied" : "; TCP not restricted (needs ABI 4)";
    out.detail += out.abi >= 6 ? "; signals and abstract Unix sockets only within the domain"
                               : "; signals and abstract Unix sockets not scoped (needs ABI 6)";
    if (!problems.empty()) out.detail += "; not granted: " + joined(problems, "; ");
    if (other_threads > 0)
        out.detail += "; " + std::to_string(other_threads) + " thread(s) started before this one are not restricted";
    return out;
}

}  // namespace kreg
