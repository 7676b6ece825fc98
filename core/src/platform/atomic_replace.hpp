// The system calls under report/atomic_file.hpp: a reader (or a crash) sees the old file or the new one,
// never half of one.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kreg::platform {

// Writes content to a new temporary file next to path (hidden, unique to this process), flushes it to
// the disk and renames it over path (POSIX rename; Windows MoveFileEx with REPLACE_EXISTING and
// WRITE_THROUGH), then makes the rename durable where the system allows (fsync of the folder on POSIX).
// path's folder must exist. Returns "" on success; else "<step>: <reason>" ("cannot create a temporary
// file next to it: Permission denied"), and path is as it was and the temporary file is gone.
std::string replace_file(const std::filesystem::path& path, std::string_view content);

}  // namespace kreg::platform
