// A request to stop, made by SIGINT or SIGTERM, that a sweep honours between rows and that a worker
// exchange honours at once (worker/process.cpp kills the worker in flight and answers `interrupted`).
// Header-only: a flag a signal handler may set (async-signal-safe), read everywhere else.
#pragma once

#include "platform/stop_signal.hpp"

#include <csignal>
#include <cstdlib>

namespace kreg {

namespace detail {
inline volatile std::sig_atomic_t stop_signal_number = 0;

inline void kreg_stop_handler(int signo) {
    if (stop_signal_number != 0) {
        // A second Ctrl-C while the first one is being honoured: leave now. Every finished row is
        // already in the journal (a torn last line is dropped on resume), so nothing is lost.
        std::_Exit(128 + signo);
    }
    stop_signal_number = signo;
}
}  // namespace detail

// The signal that asked to stop (SIGINT or SIGTERM), or 0.
inline int stop_signal() { return detail::stop_signal_number; }
inline bool stop_requested() { return detail::stop_signal_number != 0; }

// From now on SIGINT and SIGTERM ask to stop instead of ending the process. No SA_RESTART: a poll() in
// flight returns EINTR, so the exchange waiting on a worker sees the request at once.
inline void install_stop_handlers() { platform::install_stop_signal_handler(detail::kreg_stop_handler); }

}  // namespace kreg
