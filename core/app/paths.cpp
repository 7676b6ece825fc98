#include "paths.hpp"

namespace kreg::app {
namespace fs = std::filesystem;

fs::path runner_executable() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path("runner") : self;
}

fs::path configs_dir(const fs::path& runner_exe) {
    const fs::path installed = (runner_exe.parent_path() / ".." / "share" / "kreg" / "configs").lexically_normal();
    std::error_code ec;
    if (fs::is_directory(installed, ec)) return installed;
    return fs::path(KREG_SOURCE_CONFIGS_DIR);
}

}  // namespace kreg::app
