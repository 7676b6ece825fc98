#include "platform/atomic_replace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace kreg::platform {
namespace {

std::string failed(const char* step, int error) { return std::string(step) + ": " + std::strerror(error); }

// A name no other writer uses: hidden, next to the target (rename is only atomic within a file system),
// made unique by pid and a per-process counter; O_EXCL catches anything left over from a dead process.
int create_temporary(const std::filesystem::path& path, std::filesystem::path& temp) {
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
        temp = path.parent_path() /
               ("." + path.filename().string() + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
        // 0666 so that the umask decides the final mode, as for any file the user creates.
        const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

bool write_all(int fd, std::string_view content) {
    while (!content.empty()) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) {
            errno = EIO;
            return false;
        }
        content.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

}  // namespace

std::string replace_file(const std::filesystem::path& path, std::string_view content) {
    std::filesystem::path temp;
    const int fd = create_temporary(path, temp);
    if (fd < 0) return failed("cannot create a temporary file next to it", errno);

    const char* failed_step = nullptr;
    int error = 0;
    if (!write_all(fd, content)) {
        failed_step = "write failed";
        error = errno;
    } else if (::fsync(fd) != 0) {
        failed_step = "fsync failed";
        error = errno;
    }
    if (::close(fd) != 0 && !failed_step) {
        failed_step = "close failed";
        error = errno;
    }
    if (failed_step) {
        ::unlink(temp.c_str());
        return failed(failed_step, error);
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        error = errno;
        ::unlink(temp.c_str());
        return failed("cannot rename the temporary file over it", error);
    }
    // Make the rename itself durable. Failure here is not worth failing the write for: the data is
    // already in place for every reader.
    const int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    return "";
}

}  // namespace kreg::platform
