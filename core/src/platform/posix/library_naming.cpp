#include "platform/library_naming.hpp"

namespace kreg::platform {

std::string_view plugin_suffix() { return ".so"; }
std::string_view system_name() { return "Linux"; }

}  // namespace kreg::platform
