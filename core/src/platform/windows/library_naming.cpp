#include "platform/library_naming.hpp"

namespace kreg::platform {

std::string_view plugin_suffix() { return ".dll"; }
std::string_view system_name() { return "Windows"; }

}  // namespace kreg::platform
