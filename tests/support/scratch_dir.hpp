// Scratch folders for unit tests: one root per test process under the system temp directory, removed
// when the process ends, with a fresh empty folder per test inside it.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace kreg::test {

class ScratchRoot {
public:
    explicit ScratchRoot(const std::string& prefix)
        : root_(std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()))) {}
    ~ScratchRoot() {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }
    ScratchRoot(const ScratchRoot&) = delete;
    ScratchRoot& operator=(const ScratchRoot&) = delete;

    // <root>/<name>, emptied if it existed.
    std::filesystem::path fresh_dir(const std::string& name) const {
        const std::filesystem::path dir = root_ / name;
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        return dir;
    }

private:
    std::filesystem::path root_;
};

}  // namespace kreg::test
