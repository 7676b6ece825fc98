#include "platform/child_process.hpp"

namespace kreg::platform {

std::string ChildExit::describe() const {
    if (killed) return "killed (with everything it started)";
    if (!fault.empty()) return "crashed: " + fault;
    if (exit_code) return "exited with code " + std::to_string(*exit_code);
    return "ended in a way the system did not say";
}

}  // namespace kreg::platform
