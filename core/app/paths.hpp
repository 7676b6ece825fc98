// Where the running runner is, and the folders found relative to it (same layout in the build tree and
// an install prefix).
#pragma once

#include <filesystem>

namespace kreg::app {
std::filesystem::path runner_executable();
// Installed: <prefix>/share/kreg/configs; build tree: the source checkout's configs/.
std::filesystem::path configs_dir(const std::filesystem::path& runner_exe);
}  // namespace kreg::app
