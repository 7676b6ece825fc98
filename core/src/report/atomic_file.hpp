// Writing a report so that a reader (or a crash) never sees half of it.
#pragma once

#include <filesystem>
#include <string_view>

namespace kreg {

// Writes content to a temporary file in path's directory, fsyncs it, renames it over path and fsyncs
// the directory. Creates missing parent directories. On failure path is left as it was, the temporary
// file is removed, and std::runtime_error names the path and the reason.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace kreg
