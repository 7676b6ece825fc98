// Descriptor-level file I/O that differs between POSIX and Windows: an append-only file under an exclusive
// lock (the report journal), the worker's channel over its standard streams, and the environment. POSIX:
// open/flock/ftruncate/write/fdatasync; Windows: the C runtime's descriptors (_wopen, _write, _chsize_s),
// LockFileEx and FlushFileBuffers on the handle behind them. Errors come back as errno values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace kreg::platform {

// Opens path for appending (created if missing; with exclusive, refused with EEXIST if it exists). -1 and
// errno on failure. Not inherited by child processes.
int open_append(const std::filesystem::path& path, bool create, bool exclusive);
// An exclusive lock on the whole file, without waiting: 0 when taken, EWOULDBLOCK when another holder has it,
// else the errno of the failure.
int try_lock_exclusive(int fd);
// The same lock, waiting for it: 0 once taken, else the errno of the failure (EINTR: a signal came first).
int lock_exclusive(int fd);
// 0, or the errno of the failure.
int truncate_file(int fd, uint64_t size);
int sync_file(int fd);
// Writes up to size bytes: how many, or -1 and errno (EINTR: try again).
long write_some(int fd, const char* bytes, size_t size);
// Reads up to size bytes: how many (0 at end of file), or -1 and errno (EINTR: try again).
long read_some(int fd, char* bytes, size_t size);
void close_file(int fd);

// The ends of a worker's channel when it runs over the process's standard streams (Windows: the platform's
// child_process.hpp gives a child only stdin, stdout and stderr): descriptors for stdin (requests) and stdout
// (replies), after which the process's own stdout, the descriptor and the system handle, is stderr, so that
// nothing a plugin prints can enter the channel.
struct StdioChannel {
    int request_fd = -1;
    int reply_fd = -1;
};
StdioChannel take_stdio_channel();

// Reads a regular file of at most max_bytes whole (false, with error, for anything else: a FIFO, a device, a
// folder, a larger file). POSIX: one descriptor, opened without blocking, for the size check and the read, so the
// file cannot be swapped for another in between; Windows: one handle.
bool read_regular_file(const std::filesystem::path& path, uint64_t max_bytes, std::string& bytes, std::string& error);

// Sets an environment variable of this process (for what it starts and what it loads).
void set_environment(const std::string& name, const std::string& value);

}  // namespace kreg::platform
