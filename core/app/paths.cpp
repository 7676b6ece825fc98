#include "paths.hpp"

#include "platform/host.hpp"

namespace kreg::app {
namespace fs = std::filesystem;

fs::path runner_executable() {
    const fs::path self = platform::executable_path();
    return self.empty() ? fs::path("runner") : self;
}

fs::path configs_dir(const fs::path& runner_exe) {
    const fs::path installed = (runner_exe.parent_path() / ".." / "share" / "kreg" / "configs").lexically_normal();
    std::error_code ec;
    if (fs::is_directory(installed, ec)) return installed;
    return fs::path(KREG_SOURCE_CONFIGS_DIR);
}

}  // namespace kreg::app
