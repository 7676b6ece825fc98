// SHA-256 (FIPS 180-4), used to fingerprint plugin binaries in reports. Our own implementation so that
// the core does not depend on OpenSSL just to say which .so produced a row.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kreg {

// Lower-case hex digest (64 characters) of data.
std::string sha256_hex(std::string_view data);

// Digest of a file's contents, read in chunks. Throws std::runtime_error naming the file if it cannot
// be opened or read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace kreg
