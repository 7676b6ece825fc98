#include "platform/file_io.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kreg::platform {

int open_append(const std::filesystem::path& path, bool create, bool exclusive) {
    const int flags = O_WRONLY | O_APPEND | O_CLOEXEC | (create ? O_CREAT : 0) | (exclusive ? O_EXCL : 0);
    return ::open(path.c_str(), flags, 0666);
}

int try_lock_exclusive(int fd) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    return errno == EWOULDBLOCK ? EWOULDBLOCK : errno;
}

int lock_exclusive(int fd) { return ::flock(fd, LOCK_EX) == 0 ? 0 : errno; }

int truncate_file(int fd, uint64_t size) { return ::ftruncate(fd, off_t(size)) == 0 ? 0 : errno; }

int sync_file(int fd) { return ::fdatasync(fd) == 0 ? 0 : errno; }

long write_some(int fd, const char* bytes, size_t size) { return long(::write(fd, bytes, size)); }

long read_some(int fd, char* bytes, size_t size) { return long(::read(fd, bytes, size)); }

void close_file(int fd) { ::close(fd); }

StdioChannel take_stdio_channel() {
    StdioChannel ends;
    ends.request_fd = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    ends.reply_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    return ends;
}

bool read_regular_file(const std::filesystem::path& path, uint64_t max_bytes, std::string& bytes, std::string& error) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        error = "cannot open " + path.string() + ": " + std::strerror(errno);
        return false;
    }
    struct stat info {};
    bool ok = false;
    if (::fstat(fd, &info) != 0) {
        error = "cannot stat " + path.string() + ": " + std::strerror(errno);
    } else if (!S_ISREG(info.st_mode)) {
        error = path.string() + " is not a regular file";
    } else if (std::uint64_t(info.st_size) > max_bytes) {
        error = path.string() + " is larger than " + std::to_string(max_bytes >> 20) + " MiB";
    } else {
        bytes.resize(std::size_t(info.st_size));
        std::size_t done = 0;
        ok = true;
        while (done < bytes.size()) {
            const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                error = "cannot read " + path.string() + ": " + std::strerror(errno);
                ok = false;
                break;
            }
            if (n == 0) break;  // the file shrank: audit what is there
            done += std::size_t(n);
        }
        bytes.resize(done);
    }
    ::close(fd);
    return ok;
}

void set_environment(const std::string& name, const std::string& value) { ::setenv(name.c_str(), value.c_str(), 1); }

}  // namespace kreg::platform
