// Ctrl-C and a request to terminate, delivered to a handler (worker/stop_request.hpp). POSIX: SIGINT and SIGTERM
// through sigaction without SA_RESTART, so that a poll() in flight returns EINTR and sees the request at once.
// Windows: SIGINT and SIGTERM through the C runtime's signal(), which a console's Ctrl-C raises.
#pragma once

namespace kreg::platform {

// handler runs in signal context: it may only set a std::sig_atomic_t and call std::_Exit.
void install_stop_signal_handler(void (*handler)(int));

}  // namespace kreg::platform
