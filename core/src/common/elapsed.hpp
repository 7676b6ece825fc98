// Seconds of the steady clock since a moment: how long a run, a wait or a deadline has taken so far.
#pragma once

#include <chrono>

namespace kreg {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kreg
