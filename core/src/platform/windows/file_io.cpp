#include "platform/file_io.hpp"

#include "platform/windows/text.hpp"

#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace kreg::platform {

int open_append(const std::filesystem::path& path, bool create, bool exclusive) {
    const int flags =
        _O_WRONLY | _O_APPEND | _O_BINARY | _O_NOINHERIT | (create ? _O_CREAT : 0) | (exclusive ? _O_EXCL : 0);
    return _wopen(path.c_str(), flags, _S_IREAD | _S_IWRITE);
}

int try_lock_exclusive(int fd) {
    const HANDLE file = HANDLE(_get_osfhandle(fd));
    if (file == INVALID_HANDLE_VALUE) return EBADF;
    OVERLAPPED whole{};
    if (LockFileEx(file, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, MAXDWORD, MAXDWORD, &whole)) return 0;
    const DWORD error = GetLastError();
    return error == ERROR_LOCK_VIOLATION || error == ERROR_SHARING_VIOLATION ? EWOULDBLOCK : EIO;
}

int lock_exclusive(int fd) {
    const HANDLE file = HANDLE(_get_osfhandle(fd));
    if (file == INVALID_HANDLE_VALUE) return EBADF;
    OVERLAPPED whole{};
    return LockFileEx(file, LOCKFILE_EXCLUSIVE_LOCK, 0, MAXDWORD, MAXDWORD, &whole) ? 0 : EIO;
}

int truncate_file(int fd, uint64_t size) { return _chsize_s(fd, static_cast<long long>(size)); }

int sync_file(int fd) {
    const HANDLE file = HANDLE(_get_osfhandle(fd));
    return file != INVALID_HANDLE_VALUE && FlushFileBuffers(file) ? 0 : EIO;
}

long write_some(int fd, const char* bytes, size_t size) {
    return _write(fd, bytes, unsigned(size > (1u << 30) ? (1u << 30) : size));
}

long read_some(int fd, char* bytes, size_t size) {
    return _read(fd, bytes, unsigned(size > (1u << 30) ? (1u << 30) : size));
}

void close_file(int fd) { _close(fd); }

StdioChannel take_stdio_channel() {
    StdioChannel ends;
    ends.request_fd = _dup(0);
    ends.reply_fd = _dup(1);
    _setmode(ends.request_fd, _O_BINARY);
    _setmode(ends.reply_fd, _O_BINARY);
    std::fflush(stdout);
    _dup2(2, 1);
    SetStdHandle(STD_OUTPUT_HANDLE, GetStdHandle(STD_ERROR_HANDLE));
    return ends;
}

bool read_regular_file(const std::filesystem::path& path, uint64_t max_bytes, std::string& bytes, std::string& error) {
    const HANDLE file = CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING,
                                    FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) {
        error = "cannot open " + path.string() + ": " + windows::error_text(GetLastError());
        return false;
    }
    LARGE_INTEGER size{};
    bool ok = false;
    if (GetFileType(file) != FILE_TYPE_DISK || !GetFileSizeEx(file, &size)) {
        error = path.string() + " is not a regular file";
    } else if (uint64_t(size.QuadPart) > max_bytes) {
        error = path.string() + " is larger than " + std::to_string(max_bytes >> 20) + " MiB";
    } else {
        bytes.resize(size_t(size.QuadPart));
        size_t done = 0;
        ok = true;
        while (done < bytes.size()) {
            DWORD n = 0;
            const DWORD chunk = DWORD(std::min<size_t>(bytes.size() - done, 1u << 30));
            if (!ReadFile(file, bytes.data() + done, chunk, &n, nullptr)) {
                error = "cannot read " + path.string() + ": " + windows::error_text(GetLastError());
                ok = false;
                break;
            }
            if (n == 0) break;  // the file shrank: what is there
            done += n;
        }
        bytes.resize(done);
    }
    CloseHandle(file);
    return ok;
}

void set_environment(const std::string& name, const std::string& value) {
    SetEnvironmentVariableW(windows::widen(name).c_str(), windows::widen(value).c_str());
    _wputenv_s(windows::widen(name).c_str(), windows::widen(value).c_str());
}

}  // namespace kreg::platform
