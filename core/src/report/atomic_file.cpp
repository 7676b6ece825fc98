#include "report/atomic_file.hpp"

#include "platform/atomic_replace.hpp"

#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>

namespace kreg {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
    throw std::runtime_error("cannot write '" + path.string() + "': " + what);
}

}  // namespace

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
    if (target.filename().empty()) fail(target, "not a file name: " + std::generic_category().message(EISDIR));
    const std::filesystem::path path = target.parent_path().empty() ? std::filesystem::path(".") / target : target;

    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) fail(target, "cannot create its directory: " + ec.message());

    const std::string failure = platform::replace_file(path, content);
    if (!failure.empty()) fail(target, failure);
}

}  // namespace kreg
