// The worker protocol's field check, shared by both WorkerProcess implementations (process.cpp on POSIX,
// stdio_process.cpp on Windows).
#include "worker/process.hpp"

namespace kreg {

std::string unexpected_field(const nlohmann::json& message, std::initializer_list<const char*> allowed) {
    for (const auto& [key, value] : message.items()) {
        bool known = false;
        for (const char* a : allowed) known = known || key == a;
        if (!known) return "sent a '" + message.value("op", "") + "' message with an unknown field '" + key + "'";
    }
    return "";
}

}  // namespace kreg
