// What a plugin file is called on this system: a .so on Linux, a .dll on Windows (the SDK's
// kreg_add_plugin writes the same name; CMake's MODULE suffix on each).
#pragma once

#include <string_view>

namespace kreg::platform {

// ".so" or ".dll".
std::string_view plugin_suffix();
// "Linux" or "Windows": the system a plugin of plugin_suffix() is built for, for messages.
std::string_view system_name();

}  // namespace kreg::platform
