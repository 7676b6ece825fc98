// Running a command line as an ordinary user: uid and gid 65534 ("nobody" on Debian) through util-linux's
// setpriv, with no supplementary groups. The project's containers, CI and the GPU machine run ctest as root,
// where an ordinary user has no delegated cgroup, no writable /root and other sandbox paths; a test that runs
// the runner as this user as well shows that a defence does not depend on the runner being root.
//
// The test process stays root (it made the folders, it reads the reports); only the command line it hands
// to sh runs as nobody: `test::as_nobody(home) + command`.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

namespace kreg::test {

inline constexpr uid_t kNobodyUid = 65534;
inline constexpr gid_t kNobodyGid = 65534;

// The prefix that runs the rest of a sh command line as nobody. home: HOME for that command (an ordinary
// user's own folder, not root's, which it cannot write); empty: HOME as it is.
inline std::string as_nobody(const std::filesystem::path& home = {}) {
    std::string prefix = "setpriv --reuid=" + std::to_string(kNobodyUid) + " --regid=" + std::to_string(kNobodyGid) +
                         " --clear-groups -- ";
    if (!home.empty()) prefix += "env HOME='" + home.string() + "' ";
    return prefix;
}

// Why commands cannot be run as nobody here (a test skips with it), or nothing when they can: this process
// is not root (then it is itself the ordinary user, and the tests run as it cover that), setpriv is
// missing, or nobody cannot execute `executable` (a folder above it is not searchable for others).
inline std::optional<std::string> why_cannot_run_as_nobody(const std::string& executable) {
    if (::geteuid() != 0)
        return "not root (uid " + std::to_string(::geteuid()) +
               "): the runs as this user are the runs as an ordinary user";
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0)
        return std::string("setpriv (util-linux) is missing: cannot become uid ") + std::to_string(kNobodyUid);
    if (std::system((as_nobody() + "test -x '" + executable + "'").c_str()) != 0)
        return "uid " + std::to_string(kNobodyUid) + " cannot execute " + executable +
               " (a folder above it is not searchable for others)";
    return std::nullopt;
}

// Hands root and everything under it to nobody, root itself readable and searchable by everyone, so that a
// run as nobody can read its plugins and write its reports there and the test (root) still reads them.
inline void give_to_nobody(const std::filesystem::path& root) {
    namespace fs = std::filesystem;
    (void)::chown(root.c_str(), kNobodyUid, kNobodyGid);
    for (const auto& entry : fs::recursive_directory_iterator(root))
        (void)::lchown(entry.path().c_str(), kNobodyUid, kNobodyGid);
    std::error_code ignored;
    fs::permissions(root,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                        fs::perms::others_exec,
                    ignored);
}

// The uid owning path (-1 when it cannot be read): a report nobody wrote is nobody's, so a test can check
// that its command really ran as nobody.
inline long owner_uid(const std::filesystem::path& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? long(st.st_uid) : -1;
}

// Who runs a command line: the user running the tests, or nobody.
struct RunAs {
    bool nobody = false;
    std::string prefix(const std::filesystem::path& home = {}) const { return nobody ? as_nobody(home) : ""; }
    const char* name() const { return nobody ? "nobody" : "invoker"; }  // for test names
};

}  // namespace kreg::test
