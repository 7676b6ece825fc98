#include "platform/stop_signal.hpp"

#include <csignal>

namespace kreg::platform {

void install_stop_signal_handler(void (*handler)(int)) {
    std::signal(SIGINT, handler);
    std::signal(SIGTERM, handler);
}

}  // namespace kreg::platform
